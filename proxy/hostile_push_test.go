package proxy

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/store"
)

// bobsTaskBackend is a 1.0 backend that answers every send with bob's
// task, as a hostile or buggy agent reusing ids would. With early, a send
// that carries a push config gets a delivery about bob's task posted to
// that config's relay before it is answered, as a2a-go v2 posts its first
// events.
type bobsTaskBackend struct {
	gatewayURL string
	early      bool
	mu         sync.Mutex
	posted     []int // the relay's answers to the early deliveries
}

const bobsTask = `{"id":"t-bob","contextId":"c-bob","status":{"state":"TASK_STATE_WORKING"},"artifacts":[{"artifactId":"a","parts":[{"text":"bob's secret"}]}]}`

func (s *bobsTaskBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	req := gjson.ParseBytes(b)
	if cfg := req.Get("params.configuration.taskPushNotificationConfig"); s.early && cfg.Exists() {
		u := cfg.Get("url").Str
		post, _ := http.NewRequest(http.MethodPost, strings.TrimSuffix(s.gatewayURL, "/")+u[strings.Index(u, "/push/"):],
			strings.NewReader(`{"task":`+bobsTask+`}`))
		post.Header.Set("Content-Type", "application/json")
		post.Header.Set("A2A-Notification-Token", cfg.Get("token").Str)
		if res, err := http.DefaultClient.Do(post); err == nil {
			res.Body.Close()
			s.mu.Lock()
			s.posted = append(s.posted, res.StatusCode)
			s.mu.Unlock()
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+req.Get("id").Raw+`,"result":{"task":`+bobsTask+`}}`)
}

// TestPushConfigNotBoundToAnotherCallersTask: alice gives a push config in
// a send that a backend answers with bob's task, or whose relay the
// backend posts bob's task to before it answers. Her config is never
// bound to bob's task: her webhook gets nothing of it, the early delivery
// is refused, and bob's task has no config of hers.
func TestPushConfigNotBoundToAnotherCallersTask(t *testing.T) {
	for _, early := range []bool{false, true} {
		t.Run(map[bool]string{false: "in the answer", true: "posted before the answer"}[early], func(t *testing.T) {
			back := &bobsTaskBackend{early: early}
			tg := newGateway(t, back, dialect.Version10, withAuth(t), allowLoopback)
			back.gatewayURL = tg.url
			bob, alice := tg.as(token(t, "bob")), tg.as(token(t, "alice"))
			c := callers[1]
			if got := c.task(t, mustResult(t, sendResult(t, bob, c, c.send("b1", c.text("hi"), "")))).Get("id").Str; got != "t-bob" {
				t.Fatalf("bob's send made %q", got)
			}
			rcv := newReceiver(t, 0)
			inline := `"returnImmediately":true,"taskPushNotificationConfig":{"url":"` + rcv.url + `","token":"alice-token"}`
			r := sendResult(t, alice, c, c.send("a1", c.text("hi"), inline))
			wantError(t, r, c.d, -32001)
			back.mu.Lock()
			posted := back.posted
			back.mu.Unlock()
			for _, code := range posted {
				if code == http.StatusOK {
					t.Errorf("the relay of alice's config accepted a delivery about bob's task")
				}
			}
			rcv.none(t, tg)
			configs, _, err := tg.agent.push.configs.PushConfigs(context.Background(), "test", "t-bob")
			if err != nil {
				t.Fatal(err)
			}
			for _, cfg := range configs {
				t.Errorf("bob's task holds a push config of %s to %s", cfg.Owner, cfg.URL)
			}
		})
	}
}

// TestStreamEventOfAnotherCallersTask: a backend whose stream for alice's
// new send carries an artifact update of bob's task (first, or after the
// events of alice's own task) does not show it to alice: an artifact
// update says nothing of state, so it was never checked against the
// index, and a stream is about one task.
func TestStreamEventOfAnotherCallersTask(t *testing.T) {
	bobsArtifact := `{"artifactUpdate":{"taskId":"t-bob","contextId":"c-bob","artifact":{"artifactId":"a","parts":[{"text":"bob's secret"}]}}}`
	for _, tc := range []struct {
		name   string
		events []string
	}{
		{"first", []string{bobsArtifact}},
		{"after alice's own task", []string{`{"task":{"id":"t-alice","contextId":"c-alice","status":{"state":"TASK_STATE_WORKING"}}}`, bobsArtifact}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			back := scripted(func(w http.ResponseWriter, r *http.Request, id string) {
				if !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
					w.Header().Set("Content-Type", "application/json")
					_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"result":{"task":{"id":"t-bob","contextId":"c-bob","status":{"state":"TASK_STATE_WORKING"}}}}`)
					return
				}
				w.Header().Set("Content-Type", "text/event-stream")
				for _, ev := range tc.events {
					sseWrite(w, `data: {"jsonrpc":"2.0","id":`+id+`,"result":`+ev+"}\n\n")
				}
				sseWrite(w, `data: {"jsonrpc":"2.0","id":`+id+`,"result":{"statusUpdate":{"taskId":"t-bob","contextId":"c-bob","status":{"state":"TASK_STATE_COMPLETED"}}}}`+"\n\n")
			})
			tg := newGateway(t, back, dialect.Version10, withAuth(t))
			bob, alice := tg.as(token(t, "bob")), tg.as(token(t, "alice"))
			c10 := callers[1]
			mustResult(t, sendResult(t, bob, c10, c10.send("b1", c10.text("hi"), "")))
			for i, c := range callers {
				events := alice.stream(strconv.Itoa(i), c.method(dialect.SendStreamingMessage), c.send("a"+strconv.Itoa(i), c.text("hi"), "")).all()
				if len(events) == 0 {
					t.Fatalf("%s: no event", c.d)
				}
				for _, ev := range events {
					if strings.Contains(ev.Raw, "secret") {
						t.Errorf("%s: alice got bob's artifact: %s", c.d, ev.Raw)
					}
				}
				if last := events[len(events)-1]; !last.Get("error").Exists() {
					t.Errorf("%s: the stream ended without an error: %s", c.d, last.Raw)
				}
			}
		})
	}
}

// TestPushConfigsPerTaskBounded: one caller cannot give a task push
// configs without end (each delivery to the task fans out to every one,
// through the agent's one queue, and each is kept in the index): past
// maxPushConfigsPerTask a new config is refused naming the limit, in a
// set and in a send continuing the task; replacing one it has still works.
func TestPushConfigsPerTaskBounded(t *testing.T) {
	g := newGateway(t, backends[1].handler(t, nil), dialect.Version10)
	c := callers[1]
	id := c.task(t, mustResult(t, g.call("1", c.method(dialect.SendMessage), c.send("m1", c.text("input please"), "")))).Get("id").Str
	set := func(cfgID string) gjson.Result {
		return g.call("2", c.method(dialect.CreatePushConfig), `{"taskId":"`+id+`","id":"`+cfgID+`","url":"https://hooks.example/a2a/`+cfgID+`"}`)
	}
	for i := range maxPushConfigsPerTask {
		mustResult(t, set("c"+strconv.Itoa(i)))
	}
	wantErrorSaying(t, set("one-more"), c.d, -32602, strconv.Itoa(maxPushConfigsPerTask))
	mustResult(t, set("c0"))
	inline := `"taskPushNotificationConfig":{"id":"inline","url":"https://hooks.example/a2a/inline"}`
	continued := `{"message":{"messageId":"m2","role":"ROLE_USER","taskId":"` + id + `","parts":[{"text":"more"}]},"configuration":{` + inline + `}}`
	wantErrorSaying(t, g.call("3", c.method(dialect.SendMessage), continued), c.d, -32602, strconv.Itoa(maxPushConfigsPerTask))
	l := mustResult(t, g.call("4", c.method(dialect.ListPushConfigs), `{"taskId":"`+id+`"}`))
	if n := len(l.Get("configs").Array()); n != maxPushConfigsPerTask {
		t.Fatalf("the task holds %d configs: %.300s", n, l.Raw)
	}
}

// earlyClaimBackend is a 1.0 backend that, given a send with a push
// config, posts the new task's first delivery to the config's relay, then
// one about another task, and runs during before the send is answered;
// it answers GetTask with the task, to whoever asks.
type earlyClaimBackend struct {
	gatewayURL string
	during     func(first, other int)
	// answer, when set, is the task the send is answered with instead.
	answer string
}

const earlyClaimTask = `{"id":"t-early","contextId":"c-early","status":{"state":"TASK_STATE_SUBMITTED"},"artifacts":[{"artifactId":"a","parts":[{"text":"alice's secret"}]}]}`

func (s *earlyClaimBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	req := gjson.ParseBytes(b)
	w.Header().Set("Content-Type", "application/json")
	if req.Get("method").Str == "GetTask" {
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+req.Get("id").Raw+`,"result":`+earlyClaimTask+`}`)
		return
	}
	if cfg := req.Get("params.configuration.taskPushNotificationConfig"); cfg.Exists() {
		u := cfg.Get("url").Str
		post := func(body string) int {
			p, _ := http.NewRequest(http.MethodPost, strings.TrimSuffix(s.gatewayURL, "/")+u[strings.Index(u, "/push/"):], strings.NewReader(body))
			p.Header.Set("Content-Type", "application/json")
			p.Header.Set("A2A-Notification-Token", cfg.Get("token").Str)
			res, err := http.DefaultClient.Do(p)
			if err != nil {
				return 0
			}
			res.Body.Close()
			return res.StatusCode
		}
		first := post(`{"task":` + earlyClaimTask + `}`)
		other := post(`{"task":{"id":"t-phantom","contextId":"c-early","status":{"state":"TASK_STATE_WORKING"}}}`)
		s.during(first, other)
	}
	answer := strings.Replace(earlyClaimTask, "SUBMITTED", "WORKING", 1)
	if s.answer != "" {
		answer = s.answer
	}
	_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+req.Get("id").Raw+`,"result":{"task":`+answer+`}}`)
}

// TestEarlyDeliveryThenAnAnswerOfAnotherTask: a backend posts a delivery
// for task t-early to the relay of a send's push config, then answers the
// send with task t-other. The early delivery recorded t-early for the
// caller and its webhook was sent it; the answer is withheld, naming
// t-early, and t-other is not recorded, nor is the config moved to it:
// t-early's later deliveries still reach the caller's webhook. Before,
// t-other was recorded too and took the relay, so t-early stayed the
// caller's with a config whose deliveries were refused.
func TestEarlyDeliveryThenAnAnswerOfAnotherTask(t *testing.T) {
	back := &earlyClaimBackend{during: func(int, int) {}, answer: `{"id":"t-other","contextId":"c-early","status":{"state":"TASK_STATE_WORKING"}}`}
	tg := newGateway(t, back, dialect.Version10, withAuth(t), allowLoopback)
	back.gatewayURL = tg.url
	alice := tg.as(token(t, "alice"))
	c := callers[1]
	rcv := newReceiver(t, 0)
	inline := `"returnImmediately":true,"taskPushNotificationConfig":{"url":"` + rcv.url + `","token":"alice-token"}`
	wantErrorSaying(t, sendResult(t, alice, c, c.send("a1", c.text("hi"), inline)), c.d, -32603, `follow task "t-early"`)
	ctx := context.Background()
	if _, err := tg.agent.tasks.Get(ctx, "test", "t-other"); err == nil {
		t.Error("the answer's task, withheld, was recorded")
	}
	if _, err := tg.agent.tasks.Get(ctx, "test", "t-early"); err != nil {
		t.Errorf("the early delivery's task is not recorded: %v", err)
	}
	if d := rcv.next(t); d.body.Get("task.id").Str != "t-early" {
		t.Fatalf("alice's webhook got %s", d.body.Raw)
	}
	configs, relay, err := tg.agent.push.configs.PushConfigs(ctx, "test", "t-other")
	if err != nil || len(configs) != 0 || relay.ID != "" {
		t.Fatalf("t-other holds %d configs, relay %q (%v); want none", len(configs), relay.ID, err)
	}
	_, relay, err = tg.agent.push.configs.PushConfigs(ctx, "test", "t-early")
	if err != nil || relay.ID == "" {
		t.Fatalf("t-early lost its relay: %v", err)
	}
	if bound, err := tg.agent.push.configs.PushRelay(ctx, relay.ID); err != nil || bound.TaskID != "t-early" {
		t.Fatalf("the relay is bound to %q (%v), want t-early", bound.TaskID, err)
	}
}

// TestEarlyDeliveryClaimsItsTask: a delivery that reaches the relay of a
// send's push config before the send's answer records the task it names
// for the send's caller at once: in that window bob, on a gateway that
// serves unknown tasks unchecked, is told alice's task is not found rather
// than served it, and the index holds it as alice's, under the send's
// backend. A later delivery to the same relay naming another task is
// refused and leaves no task behind.
func TestEarlyDeliveryClaimsItsTask(t *testing.T) {
	back := &earlyClaimBackend{}
	tg := newGateway(t, back, dialect.Version10, withAuth(t), allowLoopback, func(a *AgentConfig) { a.Tasks.AllowUnknown = true })
	back.gatewayURL = tg.url
	alice, bob := tg.as(token(t, "alice")), tg.as(token(t, "bob"))
	c := callers[1]
	ctx := context.Background()
	var during store.Task
	back.during = func(first, other int) {
		if first != http.StatusOK {
			t.Errorf("the early delivery of alice's task was answered %d", first)
		}
		if other != http.StatusBadRequest {
			t.Errorf("a delivery naming another task than the relay's was answered %d, want 400", other)
		}
		var err error
		if during, err = tg.agent.tasks.Get(ctx, "test", "t-early"); err != nil {
			t.Errorf("before the send's answer the index holds no t-early: %v", err)
		}
		r := bob.call("9", c.method(dialect.GetTask), `{"id":"t-early"}`)
		if strings.Contains(r.Raw, "secret") {
			t.Errorf("bob was served alice's task before her send was answered: %s", r.Raw)
		}
		if _, err := tg.agent.tasks.Get(ctx, "test", "t-phantom"); err == nil {
			t.Errorf("a refused delivery left task t-phantom in the index")
		}
	}
	rcv := newReceiver(t, 0)
	inline := `"returnImmediately":true,"taskPushNotificationConfig":{"url":"` + rcv.url + `","token":"alice-token"}`
	if got := c.task(t, mustResult(t, sendResult(t, alice, c, c.send("a1", c.text("hi"), inline)))).Get("id").Str; got != "t-early" {
		t.Fatalf("alice's send made %q", got)
	}
	after, err := tg.agent.tasks.Get(ctx, "test", "t-early")
	if err != nil {
		t.Fatal(err)
	}
	if during.Owner != after.Owner || during.Owner == "" || during.Backend != "test" {
		t.Fatalf("the early delivery recorded %+v, the send's answer %+v", during, after)
	}
	if after.State != "TASK_STATE_WORKING" {
		t.Fatalf("the send's answer did not update the claimed task: %+v", after)
	}
	wantError(t, bob.call("10", c.method(dialect.GetTask), `{"id":"t-early"}`), c.d, -32001)
	mustResult(t, alice.call("11", c.method(dialect.GetTask), `{"id":"t-early"}`))
	if d := rcv.next(t); d.body.Get("task.id").Str != "t-early" && d.body.Get("id").Str != "t-early" {
		t.Fatalf("alice's webhook got %s", d.body.Raw)
	}
	rcv.none(t, tg)
}

// TestPushSnapshotBounded: the task the relay keeps for a task's 0.x
// callers (and posts whole to them) grows with every artifact update that
// appends, each delivery within push.max_body_bytes. The delivery that
// would take it past that limit is answered 413, counted as too_large and
// relayed to nobody; the kept task stays within the limit, and the
// deliveries that do not grow it are relayed as before.
func TestPushSnapshotBounded(t *testing.T) {
	const limit = 2048
	for _, c := range callers {
		t.Run(c.d.String(), func(t *testing.T) {
			m := NewMetrics(prometheus.NewRegistry(), nil)
			g := newGatewayOpts(t, backends[1].handler(t, nil), backends[1].version, Options{Metrics: m}, allowLoopback, func(a *AgentConfig) { a.Push.MaxBodyBytes = limit })
			rcv := newReceiver(t, 0)
			id, path, token := pushedTask(t, g, c, dialect.Version10, rcv.url)
			upd := `"taskId":"` + id + `","contextId":"c"`
			accepted := 0
			for i := 0; ; i++ {
				if i == 10 {
					t.Fatal("the kept task grew past push.max_body_bytes without a refusal")
				}
				chunk := `{"artifactUpdate":{` + upd + `,"append":` + strconv.FormatBool(i > 0) + `,"artifact":{"artifactId":"a1","parts":[{"text":"` + strings.Repeat("x", 600) + `"}]}}}`
				status, answer := deliver(t, g, path, "A2A-Notification-Token", token, chunk)
				if status == http.StatusRequestEntityTooLarge {
					if !strings.Contains(answer, "2048 bytes") {
						t.Fatalf("the refusal does not name the limit: %s", answer)
					}
					break
				}
				if status != http.StatusOK {
					t.Fatalf("chunk %d answered %d %s", i, status, answer)
				}
				accepted++
			}
			if accepted == 0 {
				t.Fatal("the first chunk was refused")
			}
			for range accepted {
				rcv.next(t)
			}
			rcv.none(t, g)
			snap, err := g.agent.push.configs.PushSnapshot(context.Background(), "test", id)
			if err != nil || len(snap) > limit {
				t.Fatalf("the kept task is %d bytes (%v), over the limit of %d", len(snap), err, limit)
			}
			if n := testutil.ToFloat64(m.pushReceivedTotal.WithLabelValues("test", receivedTooLarge)); n != 1 {
				t.Fatalf("too_large counted %v times, want 1", n)
			}
			done := `{"statusUpdate":{` + upd + `,"status":{"state":"TASK_STATE_COMPLETED"}}}`
			if status, answer := deliver(t, g, path, "A2A-Notification-Token", token, done); status != http.StatusOK {
				t.Fatalf("a delivery that does not grow the task answered %d %s", status, answer)
			}
			rcv.next(t)
		})
	}
}

// TestPushDeliveryAfterTheFinalState: once a task is in a final state, as
// the relay last saw it or, before any delivery, as the index holds it, a
// delivery that gives it another state (working again, or another final
// state) is answered 409 and relayed to nobody, from a backend of either
// dialect; the backend's retry of the final delivery itself still passes.
func TestPushDeliveryAfterTheFinalState(t *testing.T) {
	for _, v := range []dialect.Version{dialect.Version03, dialect.Version10} {
		t.Run(string(v), func(t *testing.T) {
			g := newGateway(t, backends[1].handler(t, nil), backends[1].version, allowLoopback)
			rcv := newReceiver(t, 0)
			c := caller{dialect.V03}
			id, path, token := pushedTask(t, g, c, dialect.Version10, rcv.url)
			header, state := "A2A-Notification-Token", func(s string) string {
				return `{"statusUpdate":{"taskId":"` + id + `","contextId":"c","status":{"state":"TASK_STATE_` + strings.ToUpper(s) + `"}}}`
			}
			if v != dialect.Version10 {
				header, state = "X-A2A-Notification-Token", func(s string) string {
					return `{"kind":"task","id":"` + id + `","contextId":"c","status":{"state":"` + s + `"}}`
				}
			}
			if status, answer := deliver(t, g, path, header, token, state("completed")); status != http.StatusOK {
				t.Fatalf("completed: %d %s", status, answer)
			}
			rcv.next(t)
			for _, s := range []string{"working", "failed", "input-required"} {
				status, answer := deliver(t, g, path, header, token, state(strings.ReplaceAll(s, "-", map[bool]string{true: "_", false: "-"}[v == dialect.Version10])))
				if status != http.StatusConflict || !strings.Contains(answer, "final state") {
					t.Fatalf("%s after completed: %d %s, want 409", s, status, answer)
				}
			}
			rcv.none(t, g)
			if status, answer := deliver(t, g, path, header, token, state("completed")); status != http.StatusOK {
				t.Fatalf("completed again: %d %s", status, answer)
			}
			rcv.next(t)

			// Deliveries lag behind answers: a blocking send's answer has
			// recorded the task completed in the index before the backend
			// delivers its working state. Both are relayed, in order; only
			// then is the task final for the relay.
			// (A gateway of its own: the same send to this one is answered
			// from its retry record, the same task.)
			g, rcv = newGateway(t, backends[1].handler(t, nil), backends[1].version, allowLoopback), newReceiver(t, 0)
			id2, path2, token2 := pushedTask(t, g, c, dialect.Version10, rcv.url)
			ctx := context.Background()
			known, err := g.agent.tasks.Get(ctx, "test", id2)
			if err != nil {
				t.Fatal(err)
			}
			known.State, known.Updated = "TASK_STATE_COMPLETED", time.Now()
			if err := g.agent.tasks.Put(ctx, known); err != nil {
				t.Fatal(err)
			}
			id = id2
			for _, s := range []string{"working", "completed"} {
				if status, answer := deliver(t, g, path2, header, token2, state(s)); status != http.StatusOK {
					t.Fatalf("%s delivered after the answer made the task completed: %d %s, want 200", s, status, answer)
				}
				if got := rcv.next(t).body; got.Get("status.state").Str != s {
					t.Fatalf("relayed %s as %s", s, got.Raw)
				}
			}
			if status, answer := deliver(t, g, path2, header, token2, state("working")); status != http.StatusConflict {
				t.Fatalf("working after the delivered completed: %d %s, want 409", status, answer)
			}
			rcv.none(t, g)
		})
	}
}

// staleRelayStore answers the next PushRelay of a relay, once armed, with
// the relay unbound: what a send's answer reads when a delivery binds the
// relay between that read and the answer's own write.
type staleRelayStore struct {
	store.PushStore
	stale atomic.Pointer[string] // the id of the relay to read unbound
}

func (s *staleRelayStore) PushRelay(ctx context.Context, id string) (store.PushRelay, error) {
	if p := s.stale.Load(); p != nil && *p == id && s.stale.CompareAndSwap(p, nil) {
		return store.PushRelay{ID: id}, nil
	}
	return s.PushStore.PushRelay(ctx, id)
}

// TestEarlyDeliveryBindsBetweenTheAnswersReadAndWrite: as in
// TestEarlyDeliveryThenAnAnswerOfAnotherTask, but the early delivery binds
// the relay to t-early after the send's answer read it unbound: the
// answer's write of the config under t-other is refused by the store, and
// the answer is withheld naming t-early. Before, the write bound the relay
// to t-other too: both tasks were the caller's, each with the config, the
// relay following the last.
func TestEarlyDeliveryBindsBetweenTheAnswersReadAndWrite(t *testing.T) {
	back := &earlyClaimBackend{answer: `{"id":"t-other","contextId":"c-early","status":{"state":"TASK_STATE_WORKING"}}`}
	tg := newGateway(t, back, dialect.Version10, withAuth(t), allowLoopback)
	back.gatewayURL = tg.url
	stale := &staleRelayStore{PushStore: tg.agent.push.configs}
	tg.agent.push.configs = stale
	ctx := context.Background()
	back.during = func(first, _ int) {
		_, relay, err := stale.PushStore.PushConfigs(ctx, "test", "t-early")
		if first != http.StatusOK || err != nil || relay.ID == "" {
			t.Errorf("the early delivery: HTTP %d, relay %q (%v)", first, relay.ID, err)
			return
		}
		stale.stale.Store(&relay.ID)
	}
	alice := tg.as(token(t, "alice"))
	c := callers[1]
	rcv := newReceiver(t, 0)
	inline := `"returnImmediately":true,"taskPushNotificationConfig":{"url":"` + rcv.url + `","token":"alice-token"}`
	wantErrorSaying(t, sendResult(t, alice, c, c.send("a1", c.text("hi"), inline)), c.d, -32603, `follow task "t-early"`)
	if stale.stale.Load() != nil {
		t.Fatal("the answer did not read the relay")
	}
	if _, err := tg.agent.tasks.Get(ctx, "test", "t-other"); err == nil {
		t.Error("the answer's task, withheld, was recorded")
	}
	configs, relay, err := stale.PushStore.PushConfigs(ctx, "test", "t-other")
	if err != nil || len(configs) != 0 || relay.ID != "" {
		t.Fatalf("t-other holds %d configs, relay %q (%v); want none", len(configs), relay.ID, err)
	}
	_, relay, err = stale.PushStore.PushConfigs(ctx, "test", "t-early")
	if err != nil || relay.ID == "" {
		t.Fatalf("t-early lost its relay: %v", err)
	}
	if bound, err := stale.PushStore.PushRelay(ctx, relay.ID); err != nil || bound.TaskID != "t-early" {
		t.Fatalf("the relay is bound to %q (%v), want t-early", bound.TaskID, err)
	}
}

// pendingRelayStore keeps the pending relay a send recorded and, once
// armed, answers the next PushRelay of it with that: what a delivery reads
// when the send's answer binds the relay between that read and the
// delivery's own write.
type pendingRelayStore struct {
	store.PushStore
	mu      sync.Mutex
	pending store.PushRelay
	armed   bool
}

func (s *pendingRelayStore) PutPendingRelay(ctx context.Context, relay store.PushRelay) error {
	s.mu.Lock()
	s.pending = relay
	s.mu.Unlock()
	return s.PushStore.PutPendingRelay(ctx, relay)
}

func (s *pendingRelayStore) PushRelay(ctx context.Context, id string) (store.PushRelay, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.armed && s.pending.ID == id {
		s.armed = false
		return s.pending, nil
	}
	return s.PushStore.PushRelay(ctx, id)
}

// TestAnswerBindsBetweenAnEarlyDeliverysReadAndWrite: a delivery for
// another task than the send's answer named, which read the send's relay
// while it was pending, finds it bound to the answer's task when it writes:
// it is refused (400), and the relay stays the answer's task's. Before, the
// delivery's write bound the relay to its task too, and the answer's task
// lost its deliveries.
func TestAnswerBindsBetweenAnEarlyDeliverysReadAndWrite(t *testing.T) {
	g := newGateway(t, backends[1].handler(t, nil), backends[1].version, allowLoopback)
	ps := &pendingRelayStore{PushStore: g.agent.push.configs}
	g.agent.push.configs = ps
	c := caller{dialect.V10}
	rcv := newReceiver(t, 0)
	_, inline := callerPush(c, "", rcv.url)
	id := c.task(t, mustResult(t, g.call("1", c.method(dialect.SendMessage), c.send("m1", c.text("input please"), inline)))).Get("id").Str
	path, token := backendRelay(t, g, backends[1].version, id)
	ps.mu.Lock()
	ps.armed = true
	ps.mu.Unlock()
	body := `{"task":{"id":"t-late","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}`
	if status, answer := deliver(t, g, path, "A2A-Notification-Token", token, body); status != http.StatusBadRequest {
		t.Fatalf("a delivery of another task, the relay bound since it was read: HTTP %d %s, want 400", status, answer)
	}
	ctx := context.Background()
	if bound, err := ps.PushStore.PushRelay(ctx, strings.TrimPrefix(path, "/push/")); err != nil || bound.TaskID != id {
		t.Fatalf("the relay is bound to %q (%v), want the answer's task %q", bound.TaskID, err, id)
	}
	if configs, _, err := ps.PushStore.PushConfigs(ctx, "test", "t-late"); err != nil || len(configs) != 0 {
		t.Fatalf("t-late holds %d configs (%v), want none", len(configs), err)
	}
}

// TestPushDeliveryThatIsNotJSON: a backend's delivery that is not valid
// JSON (HTML after the object, bytes that are not UTF-8, a container
// closed by the other bracket, a misspelt literal) is refused (400, saying
// so) and reaches no webhook, for a caller of either dialect. Before, it
// was read as far as it went and relayed: to a 1.0 caller byte for byte,
// whose webhook then could not parse it.
func TestPushDeliveryThatIsNotJSON(t *testing.T) {
	for _, c := range callers {
		t.Run(c.d.String(), func(t *testing.T) {
			g := newGateway(t, backends[1].handler(t, nil), backends[1].version, allowLoopback)
			rcv := newReceiver(t, 0)
			id, path, token := pushedTask(t, g, c, dialect.Version10, rcv.url)
			update := func(tail string) string {
				return `{"statusUpdate":{"taskId":"` + id + `","contextId":"c","status":{"state":"TASK_STATE_WORKING"}` + tail
			}
			for _, tc := range []struct{ name, body, says string }{
				{"HTML after it", update(`}}<html>oops</html>`), "not valid JSON"},
				{"not UTF-8", update(`,"metadata":{"k":"a` + "\xff\xfe" + `"}}}`), "not valid UTF-8"},
				{"mismatched", update(`,"metadata":{"k":[1,2}}}`), "not valid JSON"},
				{"misspelt true", update(`,"metadata":{"k":tru}}}`), "not valid JSON"},
				{"cut off", update(`}`), "not valid JSON"},
			} {
				if status, answer := deliver(t, g, path, "A2A-Notification-Token", token, tc.body); status != http.StatusBadRequest || !strings.Contains(answer, tc.says) {
					t.Errorf("%s: answered %d: %s", tc.name, status, answer)
				}
			}
			rcv.none(t, g)
			if status, answer := deliver(t, g, path, "A2A-Notification-Token", token, update(`}}`)); status != http.StatusOK {
				t.Fatalf("a sound delivery answered %d: %s", status, answer)
			}
			rcv.next(t)
		})
	}
}
