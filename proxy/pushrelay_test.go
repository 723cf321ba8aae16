package proxy

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/testlog"
	"github.com/a2agate/gateway/internal/testredis"
	"github.com/a2agate/gateway/store"
)

// The push relay end to end: a caller of each dialect sets a webhook (with
// set/Create or inline in a send) through an in-process gateway in front of
// each bundled backend; the test then posts deliveries to the relay config
// the backend holds, as that backend's dialect's senders do, and a receiver
// on loopback (allowed through push.allowed_cidrs) checks what the caller
// gets.

// webhook is one delivery a receiver got.
type webhook struct {
	header http.Header
	body   gjson.Result
}

// receiver is a caller's webhook on loopback. It answers fail 503s first.
type receiver struct {
	url string
	got chan webhook
}

func newReceiver(t *testing.T, fail int) *receiver {
	r := &receiver{got: make(chan webhook, 64)}
	failures := make(chan struct{}, fail)
	for range fail {
		failures <- struct{}{}
	}
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		select {
		case <-failures:
			http.Error(w, "try again", http.StatusServiceUnavailable)
			return
		default:
		}
		b, _ := io.ReadAll(req.Body)
		r.got <- webhook{header: req.Header.Clone(), body: gjson.ParseBytes(b)}
	}))
	t.Cleanup(s.Close)
	r.url = s.URL + "/hook?secret=in-the-query"
	return r
}

// next waits for the next delivery, up to a bound.
func (r *receiver) next(t *testing.T) webhook {
	t.Helper()
	select {
	case d := <-r.got:
		return d
	case <-time.After(10 * time.Second):
		t.Fatal("no delivery reached the receiver within 10s")
		return webhook{}
	}
}

// none checks no delivery is waiting, once the queue is empty.
func (r *receiver) none(t *testing.T, g *testGateway) {
	t.Helper()
	g.agent.push.waitIdle(t)
	select {
	case d := <-r.got:
		t.Fatalf("unexpected delivery: %s", d.body.Raw)
	default:
	}
}

// waitIdle waits until the relay's queue is empty.
func (p *pushRelay) waitIdle(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for p.queue.Len() > 0 {
		if time.Now().After(deadline) {
			t.Fatal("the push queue did not empty within 10s")
		}
		time.Sleep(time.Millisecond) // polling a gauge; nothing to wait on
	}
}

// allowLoopback lets webhooks reach the test's receivers.
func allowLoopback(a *AgentConfig) {
	a.Push.AllowedCIDRs = []string{"127.0.0.0/8", "::1/128"}
}

// backendRelay reads the push config the backend holds for a task: the
// relay's path on the gateway and its token.
func backendRelay(t *testing.T, g *testGateway, v dialect.Version, taskID string) (path, token string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"tasks/pushNotificationConfig/get","params":{"id":"` + taskID + `","pushNotificationConfigId":"` + relayConfigID + `"}}`
	cfgPath := "result.pushNotificationConfig"
	if v == dialect.Version10 {
		body = `{"jsonrpc":"2.0","id":1,"method":"GetTaskPushNotificationConfig","params":{"taskId":"` + taskID + `","id":"` + relayConfigID + `"}}`
		cfgPath = "result"
	}
	req, _ := http.NewRequest(http.MethodPost, g.backend.URL+"/", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	if v != dialect.Version10 {
		req.Header.Del("A2A-Version")
	}
	_, b := roundTrip(t, req)
	cfg := gjson.GetBytes(b, cfgPath)
	u := cfg.Get("url").Str
	i := strings.Index(u, "/push/")
	if i < 0 || cfg.Get("token").Str == "" {
		t.Fatalf("the backend holds no relay config for %s: %s", taskID, b)
	}
	return u[i:], cfg.Get("token").Str
}

// deliver posts a delivery to the gateway's relay as a backend does.
func deliver(t *testing.T, g *testGateway, path, header, token, body string) (int, string) {
	t.Helper()
	res, b := g.request(t, http.MethodPost, path, body, "Content-Type", "application/json", header, token)
	return res.StatusCode, string(b)
}

// backendDeliveries are what a backend of dialect v posts for a task that
// works and then completes with an artifact: 0.x senders post the whole
// task after each event, 1.0 senders the StreamResponse of each event.
func backendDeliveries(v dialect.Version, taskID, contextID string) (header string, bodies []string) {
	ids := `"id":"` + taskID + `","contextId":"` + contextID + `"`
	upd := `"taskId":"` + taskID + `","contextId":"` + contextID + `"`
	if v == dialect.Version10 {
		return "A2A-Notification-Token", []string{
			`{"task":{` + ids + `,"status":{"state":"TASK_STATE_WORKING"}}}`,
			`{"artifactUpdate":{` + upd + `,"artifact":{"artifactId":"a1","parts":[{"text":"result"}]}}}`,
			`{"statusUpdate":{` + upd + `,"status":{"state":"TASK_STATE_COMPLETED"}}}`,
		}
	}
	return "X-A2A-Notification-Token", []string{
		`{"kind":"task",` + ids + `,"status":{"state":"working"}}`,
		`{"kind":"task",` + ids + `,"status":{"state":"working"},"artifacts":[{"artifactId":"a1","parts":[{"kind":"text","text":"result"}]}]}`,
		`{"kind":"task",` + ids + `,"status":{"state":"completed"},"artifacts":[{"artifactId":"a1","parts":[{"kind":"text","text":"result"}]}]}`,
	}
}

// pushedTask makes a task through g as c, registers c's webhook at url
// for it, and returns the task's id and the relay the gateway gave the
// backend (of version v) instead: its path and token.
func pushedTask(t *testing.T, g *testGateway, c caller, v dialect.Version, url string) (id, path, token string) {
	t.Helper()
	// In context "c", which the tests' deliveries name: a delivery naming
	// another context than its task's is refused.
	send := strings.Replace(c.send("m1", c.text("input please"), ""), `"messageId"`, `"contextId":"c","messageId"`, 1)
	id = c.task(t, mustResult(t, g.call("1", c.method(dialect.SendMessage), send))).Get("id").Str
	set, _ := callerPush(c, id, url)
	mustResult(t, g.call("2", c.method(dialect.CreatePushConfig), set))
	path, token = backendRelay(t, g, v, id)
	return id, path, token
}

// callerPush is the caller's webhook in its dialect: a set/Create's params,
// or a send's configuration member.
func callerPush(c caller, taskID, url string) (set, inline string) {
	if c.d == dialect.V03 {
		cfg := `{"id":"cfg1","url":"` + url + `","token":"caller-token","authentication":{"schemes":["Bearer"],"credentials":"caller-secret"}}`
		return `{"taskId":"` + taskID + `","pushNotificationConfig":` + cfg + `}`, `"pushNotificationConfig":` + cfg
	}
	cfg := `"id":"cfg1","url":"` + url + `","token":"caller-token","authentication":{"scheme":"Bearer","credentials":"caller-secret"}`
	return `{"taskId":"` + taskID + `",` + cfg + `}`, `"taskPushNotificationConfig":{` + cfg + `}`
}

func TestPushRelayEveryDialectPair(t *testing.T) {
	for _, b := range backends {
		for _, c := range callers {
			for _, mode := range []string{"set", "inline"} {
				t.Run(c.d.String()+"-to-"+b.name+"-"+mode, func(t *testing.T) {
					t.Parallel()
					g := newGateway(t, b.handler(t, nil), b.version, allowLoopback)
					rcv := newReceiver(t, 0)
					var task gjson.Result
					if mode == "inline" {
						_, inline := callerPush(c, "", rcv.url)
						task = c.task(t, mustResult(t, g.call("1", c.method(dialect.SendMessage), c.send("m1", c.text("input please"), inline))))
					} else {
						task = c.task(t, mustResult(t, g.call("1", c.method(dialect.SendMessage), c.send("m1", c.text("input please"), ""))))
						set, _ := callerPush(c, task.Get("id").Str, rcv.url)
						mustResult(t, g.call("2", c.method(dialect.CreatePushConfig), set))
					}
					id := task.Get("id").Str
					path, relayToken := backendRelay(t, g, b.version, id)
					header, bodies := backendDeliveries(b.version, id, task.Get("contextId").Str)
					for _, body := range bodies {
						if status, answer := deliver(t, g, path, header, relayToken, body); status != http.StatusOK {
							t.Fatalf("delivery answered %d: %s", status, answer)
						}
					}
					wantStates := []string{"working", "working", "completed"}
					for i := range bodies {
						d := rcv.next(t)
						checkWebhookHeaders(t, c.d, d.header)
						if strings.Contains(d.body.Raw, relayToken) {
							t.Fatalf("a delivery carries the relay's token: %s", d.body.Raw)
						}
						noForeignKeys(t, c.d, d.body.Raw)
						checkWebhookBody(t, c, b.version, i, d.body, id, wantStates[i])
					}
					checkReadBack(t, g, id, rcv.url, relayToken)
					rcv.none(t, g)
				})
			}
		}
	}
}

func checkWebhookHeaders(t *testing.T, d dialect.ID, h http.Header) {
	t.Helper()
	if ct := h.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	if got := h.Get("X-A2A-Notification-Token"); got != "caller-token" {
		t.Errorf("X-A2A-Notification-Token %q, want the caller's token", got)
	}
	want10 := ""
	if d == dialect.V10 {
		want10 = "caller-token"
	}
	if got := h.Get("A2A-Notification-Token"); got != want10 {
		t.Errorf("A2A-Notification-Token %q, want %q", got, want10)
	}
	if got := h.Get("Authorization"); got != "Bearer caller-secret" {
		t.Errorf("Authorization %q, want the caller's credentials", got)
	}
}

// checkWebhookBody checks the i-th delivery's shape: toward 0.x always a
// bare Task; toward 1.0 the StreamResponse of the backend's event (a 0.x
// snapshot becomes {"task":…}).
func checkWebhookBody(t *testing.T, c caller, v dialect.Version, i int, body gjson.Result, taskID, state string) {
	t.Helper()
	if c.d == dialect.V03 {
		if body.Get("kind").Str != "task" || body.Get("id").Str != taskID || body.Get("status.state").Str != state {
			t.Fatalf("delivery %d to a 0.x caller: %s, want a %s task", i, body.Raw, state)
		}
		if i > 0 && body.Get("artifacts.0.parts.0.text").Str != "result" {
			t.Fatalf("delivery %d to a 0.x caller lacks the artifact folded in: %s", i, body.Raw)
		}
		return
	}
	wrapper := "task"
	if v == dialect.Version10 {
		wrapper = []string{"task", "artifactUpdate", "statusUpdate"}[i]
	}
	inner := body.Get(wrapper)
	if !inner.Exists() || len(body.Map()) != 1 {
		t.Fatalf("delivery %d to a 1.0 caller: %s, want {%q:…}", i, body.Raw, wrapper)
	}
	if wrapper == "artifactUpdate" {
		return
	}
	if got := inner.Get("status.state").Str; got != c.state(state) {
		t.Fatalf("delivery %d to a 1.0 caller: state %s, want %s: %s", i, got, c.state(state), body.Raw)
	}
}

// checkReadBack reads the config back in both dialects: the caller's URL
// and token, never the relay's.
func checkReadBack(t *testing.T, g *testGateway, taskID, url, relayToken string) {
	t.Helper()
	for _, c := range callers {
		get := `{"id":"` + taskID + `","pushNotificationConfigId":"cfg1"}`
		cfgOf := func(r gjson.Result) gjson.Result { return r.Get("pushNotificationConfig") }
		if c.d == dialect.V10 {
			get = `{"taskId":"` + taskID + `","id":"cfg1"}`
			cfgOf = func(r gjson.Result) gjson.Result { return r }
		}
		got := mustResult(t, g.call("7", c.method(dialect.GetPushConfig), get))
		cfg := cfgOf(got)
		if cfg.Get("url").Str != url || cfg.Get("token").Str != "caller-token" || cfg.Get("authentication.credentials").Str != "caller-secret" {
			t.Fatalf("%s read-back: %s, want the caller's config", c.d, got.Raw)
		}
		if strings.Contains(got.Raw, relayToken) || strings.Contains(got.Raw, "/push/") {
			t.Fatalf("%s read-back shows the relay: %s", c.d, got.Raw)
		}
		noForeignKeys(t, c.d, got.Raw)
	}
}

// TestPushRelayListDeleteLeaveNothing sets two configs on a task of each
// backend (one backend config: the relay), lists and deletes them, and
// checks that nothing is left: no config, no relay, deliveries refused.
func TestPushRelayListDeleteLeaveNothing(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			g := newGateway(t, b.handler(t, nil), b.version, allowLoopback)
			c := caller{dialect.V10}
			id := c.task(t, mustResult(t, g.call("1", "SendMessage", c.send("m1", c.text("input please"), "")))).Get("id").Str
			for _, cfg := range []string{"a", "b"} {
				mustResult(t, g.call("2", "CreateTaskPushNotificationConfig", `{"taskId":"`+id+`","id":"`+cfg+`","url":"https://hooks.example/`+cfg+`"}`))
			}
			path, token := backendRelay(t, g, b.version, id)
			for _, c := range callers {
				list := `{"id":"` + id + `"}`
				items := "@this"
				if c.d == dialect.V10 {
					list, items = `{"taskId":"`+id+`"}`, "configs"
				}
				l := mustResult(t, g.call("3", c.method(dialect.ListPushConfigs), list)).Get(items)
				if n := len(l.Array()); n != 2 || l.Get("0.taskId").Str != id {
					t.Fatalf("%s list: %s, want both configs", c.d, l.Raw)
				}
			}
			mustResult(t, g.call("4", "tasks/pushNotificationConfig/delete", `{"id":"`+id+`","pushNotificationConfigId":"a"}`))
			if _, err := g.agent.push.configs.PushRelay(context.Background(), strings.TrimPrefix(path, "/push/")); err != nil {
				t.Fatalf("the relay went with the first of two configs: %v", err)
			}
			mustResult(t, g.call("5", "DeleteTaskPushNotificationConfig", `{"taskId":"`+id+`","id":"b"}`))
			wantError(t, g.call("6", "DeleteTaskPushNotificationConfig", `{"taskId":"`+id+`","id":"b"}`), dialect.V10, -32001)
			configs, relay, err := g.agent.push.configs.PushConfigs(context.Background(), "test", id)
			if err != nil || len(configs) != 0 || relay.ID != "" {
				t.Fatalf("left behind: %+v %+v %v", configs, relay, err)
			}
			if _, err := g.agent.push.configs.PushRelay(context.Background(), strings.TrimPrefix(path, "/push/")); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("relay left behind: %v", err)
			}
			if status, _ := deliver(t, g, path, "X-A2A-Notification-Token", token, `{"kind":"task","id":"`+id+`","contextId":"x","status":{"state":"working"}}`); status != http.StatusNotFound {
				t.Fatalf("a delivery to a deleted relay answered %d, want 404", status)
			}
			if b.version == dialect.Version10 {
				// The backend's own config went too.
				res := g.call("8", "GetTaskPushNotificationConfig", `{"taskId":"`+id+`","id":"`+relayConfigID+`"}`)
				if !res.Get("error").Exists() {
					t.Fatalf("config read back after delete: %s", res.Raw)
				}
			}
		})
	}
}

// TestPushRelayRefusals: the relay answers a forged token and an unknown id
// alike; an oversized body and a body of the wrong shape are refused; and
// nothing reaches the caller.
func TestPushRelayRefusals(t *testing.T) {
	g := newGateway(t, backends[1].handler(t, nil), backends[1].version, allowLoopback, func(a *AgentConfig) { a.Push.MaxBodyBytes = 2048 })
	rcv := newReceiver(t, 0)
	c := caller{dialect.V10}
	id, path, token := pushedTask(t, g, c, dialect.Version10, rcv.url)
	good := `{"statusUpdate":{"taskId":"` + id + `","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}`

	forgedStatus, forgedBody := deliver(t, g, path, "A2A-Notification-Token", token+"x", good)
	unknownStatus, unknownBody := deliver(t, g, "/push/"+randomID(), "A2A-Notification-Token", token, good)
	noneStatus, _ := deliver(t, g, path, "", "", good)
	if forgedStatus != http.StatusNotFound || unknownStatus != forgedStatus || noneStatus != forgedStatus || forgedBody != unknownBody {
		t.Fatalf("forged token %d %q, unknown relay %d %q, no token %d: want the same 404", forgedStatus, forgedBody, unknownStatus, unknownBody, noneStatus)
	}
	if status, _ := deliver(t, g, path, "A2A-Notification-Token", token, `{"task":{"id":"`+id+`","status":{"state":"TASK_STATE_WORKING"},"metadata":{"pad":"`+strings.Repeat("x", 4096)+`"}}}`); status != http.StatusRequestEntityTooLarge {
		t.Fatalf("an oversized delivery answered %d, want 413", status)
	}
	for _, bad := range []string{`{"jsonrpc":"2.0","result":{}}`, `[1,2]`, `not json`, `{"statusUpdate":{"taskId":"another-task","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}`} {
		if status, answer := deliver(t, g, path, "A2A-Notification-Token", token, bad); status != http.StatusBadRequest {
			t.Fatalf("delivery %s answered %d %s, want 400", bad, status, answer)
		}
	}
	rcv.none(t, g)
	if status, answer := deliver(t, g, path, "X-A2A-Notification-Token", token, good); status != http.StatusOK {
		t.Fatalf("the good delivery answered %d %s", status, answer)
	}
	if d := rcv.next(t); d.body.Get("statusUpdate.status.state").Str != "TASK_STATE_WORKING" {
		t.Fatalf("delivery: %s", d.body.Raw)
	}
}

// TestPushRelayTargetPolicy: a webhook into the backend's network is
// refused with -32602 naming the rule, in set/Create and inline, and
// nothing is stored.
func TestPushRelayTargetPolicy(t *testing.T) {
	forEachPair(t, func(t *testing.T, c caller, g *testGateway) {
		id := c.task(t, mustResult(t, g.call("1", c.method(dialect.SendMessage), c.send("m1", c.text("input please"), "")))).Get("id").Str
		for url, rule := range map[string]string{
			"http://169.254.169.254/latest/meta-data/": "cloud metadata",
			"file:///etc/passwd":                       `scheme "file" is not allowed`,
			"http://127.0.0.1:6379/":                   "loopback",
			"http://[fd00:ec2::254]/":                  "cloud metadata",
			"http://10.0.0.7/hook":                     "private network",
		} {
			set, inline := callerPush(c, id, url)
			e := wantError(t, g.call("2", c.method(dialect.CreatePushConfig), set), c.d, -32602)
			if !strings.Contains(e.Get("message").Str, rule) {
				t.Errorf("%s refused with %q, want it to name %q", url, e.Get("message").Str, rule)
			}
			e = wantError(t, g.call("3", c.method(dialect.SendMessage), c.send("m2", c.text("hi"), inline)), c.d, -32602)
			if !strings.Contains(e.Get("message").Str, rule) {
				t.Errorf("inline %s refused with %q, want it to name %q", url, e.Get("message").Str, rule)
			}
		}
		if configs, _, _ := g.agent.push.configs.PushConfigs(context.Background(), "test", id); len(configs) != 0 {
			t.Fatalf("a refused config was stored: %+v", configs)
		}
	})
}

// TestPushRelayOwnership: another caller can neither read, list, replace
// nor delete a task's configs, by task id or config id.
func TestPushRelayOwnership(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			g := newAuthGateway(t, b, allowLoopback)
			alice, mallory := g.as(token(t, "alice")), g.as(token(t, "mallory"))
			c := caller{dialect.V10}
			task := c.task(t, mustResult(t, alice.call("1", "SendMessage", c.send("m1", c.text("input please"), ""))))
			id := task.Get("id").Str
			set, _ := callerPush(c, id, "https://hooks.example/alice")
			mustResult(t, alice.call("2", "CreateTaskPushNotificationConfig", set))
			for _, call := range []struct{ method, params string }{
				{"GetTaskPushNotificationConfig", `{"taskId":"` + id + `","id":"cfg1"}`},
				{"ListTaskPushNotificationConfigs", `{"taskId":"` + id + `"}`},
				{"DeleteTaskPushNotificationConfig", `{"taskId":"` + id + `","id":"cfg1"}`},
				{"CreateTaskPushNotificationConfig", `{"taskId":"` + id + `","id":"cfg1","url":"https://hooks.example/mallory"}`},
			} {
				wantError(t, mallory.call("3", call.method, call.params), dialect.V10, -32001)
			}
			got := mustResult(t, alice.call("4", "GetTaskPushNotificationConfig", `{"taskId":"`+id+`","id":"cfg1"}`))
			if got.Get("url").Str != "https://hooks.example/alice" {
				t.Fatalf("alice's config after mallory's tries: %s", got.Raw)
			}
			// With auth on, the relay takes its own token, not a JWT.
			rcv := newReceiver(t, 0)
			set, _ = callerPush(c, id, rcv.url)
			mustResult(t, alice.call("5", "CreateTaskPushNotificationConfig", set))
			path, relayToken := backendRelay(t, g, b.version, id)
			if status, answer := deliver(t, g, path, "X-A2A-Notification-Token", relayToken, `{"kind":"task","id":"`+id+`","contextId":"`+task.Get("contextId").Str+`","status":{"state":"working"}}`); status != http.StatusOK {
				t.Fatalf("a delivery without a JWT answered %d: %s", status, answer)
			}
			if d := rcv.next(t); d.body.Get("task.status.state").Str != "TASK_STATE_WORKING" {
				t.Fatalf("delivery: %s", d.body.Raw)
			}
		})
	}
}

// TestPushRelayRetriesThenDelivers: a receiver that fails twice gets the
// delivery on the third attempt, and later deliveries wait for it.
func TestPushRelayRetriesThenDelivers(t *testing.T) {
	g := newGateway(t, backends[0].handler(t, nil), backends[0].version, allowLoopback, func(a *AgentConfig) {
		a.Push.BackoffBase, a.Push.BackoffMax = time.Millisecond, 5*time.Millisecond
	})
	rcv := newReceiver(t, 2)
	c := caller{dialect.V10}
	id, path, token := pushedTask(t, g, c, dialect.Version025, rcv.url)
	header, bodies := backendDeliveries(dialect.Version025, id, "c")
	for _, body := range bodies {
		if status, _ := deliver(t, g, path, header, token, body); status != http.StatusOK {
			t.Fatalf("delivery answered %d", status)
		}
	}
	for i, want := range []string{"TASK_STATE_WORKING", "TASK_STATE_WORKING", "TASK_STATE_COMPLETED"} {
		if got := rcv.next(t).body.Get("task.status.state").Str; got != want {
			t.Fatalf("delivery %d: state %s, want %s (in order)", i, got, want)
		}
	}
}

// TestPushRelaySharedRedis: a delivery that reaches the replica which did
// not register the config still reaches the caller.
func TestPushRelaySharedRedis(t *testing.T) {
	addr := testredis.Addr(t)
	shared := redisIndex(t, store.RedisConfig{Address: addr, KeyPrefix: "pushrelay-test-" + randomID() + ":"})
	backend := backends[0].handler(t, nil)
	first := newGatewayWithStore(t, backend, shared, allowLoopback)
	second := newGatewayWithStore(t, backend, shared, allowLoopback)
	rcv := newReceiver(t, 0)
	c := caller{dialect.V03}
	id, path, token := pushedTask(t, first, c, dialect.Version025, rcv.url)
	if status, answer := deliver(t, second, path, "X-A2A-Notification-Token", token, `{"kind":"task","id":"`+id+`","contextId":"c","status":{"state":"completed"}}`); status != http.StatusOK {
		t.Fatalf("the other replica answered %d: %s", status, answer)
	}
	if d := rcv.next(t); d.body.Get("status.state").Str != "completed" || d.header.Get("X-A2A-Notification-Token") != "caller-token" {
		t.Fatalf("delivery through the other replica: %s %v", d.body.Raw, d.header)
	}
	// And the other replica answers the config from the shared store.
	got := mustResult(t, second.call("3", "tasks/pushNotificationConfig/get", `{"id":"`+id+`","pushNotificationConfigId":"cfg1"}`))
	if got.Get("pushNotificationConfig.url").Str != rcv.url {
		t.Fatalf("read back through the other replica: %s", got.Raw)
	}
}

// TestPushRelayQueueFull: a delivery the queue has no room for is answered
// 503, so that the backend still holds it.
func TestPushRelayQueueFull(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-block }))
	t.Cleanup(slow.Close)
	g := newGateway(t, backends[1].handler(t, nil), backends[1].version, allowLoopback, func(a *AgentConfig) { a.Push.QueueSize = 1 })
	c := caller{dialect.V10}
	id, path, token := pushedTask(t, g, c, dialect.Version10, slow.URL+"/hook")
	body := `{"statusUpdate":{"taskId":"` + id + `","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}`
	if status, _ := deliver(t, g, path, "A2A-Notification-Token", token, body); status != http.StatusOK {
		t.Fatalf("first delivery answered %d", status)
	}
	if status, _ := deliver(t, g, path, "A2A-Notification-Token", token, body); status != http.StatusServiceUnavailable {
		t.Fatalf("a delivery past the queue's size answered %d, want 503", status)
	}
}

// TestPushRelay025ListAndDelete: toward a 0.2.5 backend, which has neither,
// list and delete are answered from the gateway's store.
func TestPushRelay025ListAndDelete(t *testing.T) {
	g := newGateway(t, backends[0].handler(t, nil), dialect.Version025, allowLoopback)
	c := caller{dialect.V10}
	id := c.task(t, mustResult(t, g.call("1", "SendMessage", c.send("m1", c.text("input please"), "")))).Get("id").Str
	mustResult(t, g.call("2", "CreateTaskPushNotificationConfig", `{"taskId":"`+id+`","id":"x","url":"https://hooks.example/x"}`))
	l := mustResult(t, g.call("3", "ListTaskPushNotificationConfigs", `{"taskId":"`+id+`"}`))
	if l.Get("configs.0.id").Str != "x" {
		t.Fatalf("list: %s", l.Raw)
	}
	if d := mustResult(t, g.call("4", "DeleteTaskPushNotificationConfig", `{"taskId":"`+id+`","id":"x"}`)); d.Raw != "{}" {
		t.Fatalf("delete: %s", d.Raw)
	}
}

// TestPushRelayBundledAgentsSendWebhooks: the bundled agents' own senders
// (a 0.2.5 task snapshot after each event; 1.0 StreamResponses) post to the
// relay at the gateway's public URL, and every caller gets its own dialect.
func TestPushRelayBundledAgentsSendWebhooks(t *testing.T) {
	for _, b := range backends {
		for _, c := range callers {
			for _, op := range []dialect.Op{dialect.SendMessage, dialect.SendStreamingMessage} {
				t.Run(c.d.String()+"-to-"+b.name+"-"+op.String(), func(t *testing.T) {
					t.Parallel()
					var gateway atomic.Pointer[url.URL]
					front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						httputil.NewSingleHostReverseProxy(gateway.Load()).ServeHTTP(w, r)
					}))
					t.Cleanup(front.Close)
					g := newGateway(t, b.handler(t, nil), b.version, allowLoopback, func(a *AgentConfig) { a.PublicURL = front.URL + "/" })
					u, _ := url.Parse(g.url)
					gateway.Store(u)
					rcv := newReceiver(t, 0)
					_, inline := callerPush(c, "", rcv.url)
					body := `{"jsonrpc":"2.0","id":1,"method":"` + c.method(op) + `","params":` + c.send("m1", c.text("hello"), inline) + `}`
					if status, _, answer := g.post(body, g.hdr(c.d)...); status != http.StatusOK || strings.Contains(string(answer), `"error"`) {
						t.Fatalf("%s answered %d: %s", op, status, answer)
					}
					taskID := ""
					for n := 0; ; n++ {
						d := rcv.next(t)
						checkWebhookHeaders(t, c.d, d.header)
						noForeignKeys(t, c.d, d.body.Raw)
						body := d.body
						if c.d == dialect.V10 {
							if len(body.Map()) != 1 {
								t.Fatalf("delivery %d to a 1.0 caller is no StreamResponse: %s", n, body.Raw)
							}
							for _, inner := range body.Map() {
								body = inner
							}
						} else if body.Get("kind").Str != "task" {
							t.Fatalf("delivery %d to a 0.x caller is no task: %s", n, body.Raw)
						}
						id := body.Get("id").Str
						if c.d == dialect.V10 && !d.body.Get("task").Exists() {
							id = body.Get("taskId").Str
						}
						if taskID == "" {
							taskID = id
						} else if id != taskID {
							t.Fatalf("delivery %d is for task %q, the others for %q", n, id, taskID)
						}
						if body.Get("status.state").Str == c.state("completed") {
							break
						}
					}
				})
			}
		}
	}
}

// TestPushRelayAccessLog: one line per forwarded delivery, naming no token,
// credential or query.
func TestPushRelayAccessLog(t *testing.T) {
	var logs testlog.Buffer
	g := newGatewayOpts(t, backends[1].handler(t, nil), backends[1].version,
		Options{Logger: slog.New(slog.NewJSONHandler(&logs, nil))}, allowLoopback)
	rcv := newReceiver(t, 0)
	c := caller{dialect.V03}
	id, path, relayToken := pushedTask(t, g, c, dialect.Version10, rcv.url)
	if status, _ := deliver(t, g, path, "A2A-Notification-Token", relayToken, `{"statusUpdate":{"taskId":"`+id+`","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}`); status != http.StatusOK {
		t.Fatalf("delivery answered %d", status)
	}
	rcv.next(t)
	g.agent.push.waitIdle(t)
	// The queue counts a delivery done just before its outcome is logged.
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(logs.String(), `"msg":"push delivery"`) && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond) // polling a log; nothing to wait on
	}
	out := logs.String()
	if n := strings.Count(out, `"msg":"push delivery"`); n != 1 || !strings.Contains(out, `"outcome":"delivered"`) {
		t.Fatalf("want one push delivery line, delivered: %s", out)
	}
	for _, secret := range []string{"caller-token", "caller-secret", "in-the-query", relayToken} {
		if strings.Contains(out, secret) {
			t.Fatalf("the log holds %q: %s", secret, out)
		}
	}
}

// TestPushRelayDisabled: with push.enabled false, configs pass through to
// the backend as they are and the receiver path answers 404.
func TestPushRelayDisabled(t *testing.T) {
	off := false
	g := newGateway(t, backends[1].handler(t, nil), backends[1].version, func(a *AgentConfig) { a.Push.Enabled = &off })
	c := caller{dialect.V10}
	id := c.task(t, mustResult(t, g.call("1", "SendMessage", c.send("m1", c.text("input please"), "")))).Get("id").Str
	mustResult(t, g.call("2", "CreateTaskPushNotificationConfig", `{"taskId":"`+id+`","id":"`+relayConfigID+`","url":"https://hooks.example/direct"}`))
	res := g.call("3", "GetTaskPushNotificationConfig", `{"taskId":"`+id+`","id":"`+relayConfigID+`"}`)
	if got := mustResult(t, res).Get("url").Str; got != "https://hooks.example/direct" {
		t.Fatalf("the backend holds %q, want the caller's URL passed through", got)
	}
	if status, _ := deliver(t, g, "/push/"+randomID(), "A2A-Notification-Token", "x", `{}`); status != http.StatusNotFound {
		t.Fatalf("the receiver of a disabled relay answered %d, want 404", status)
	}
}

// TestPushRelayListPages: a 1.0 list honours pageSize and pageToken.
func TestPushRelayListPages(t *testing.T) {
	g := newGateway(t, backends[0].handler(t, nil), backends[0].version)
	c := caller{dialect.V10}
	id := c.task(t, mustResult(t, g.call("1", "SendMessage", c.send("m1", c.text("input please"), "")))).Get("id").Str
	for _, cfg := range []string{"a", "b", "c"} {
		mustResult(t, g.call("2", "CreateTaskPushNotificationConfig", `{"taskId":"`+id+`","id":"`+cfg+`","url":"https://hooks.example/`+cfg+`"}`))
	}
	var seen []string
	token := ""
	for range 3 {
		page := mustResult(t, g.call("3", "ListTaskPushNotificationConfigs", `{"taskId":"`+id+`","pageSize":2,"pageToken":"`+token+`"}`))
		for _, cfg := range page.Get("configs").Array() {
			seen = append(seen, cfg.Get("id").Str)
		}
		if token = page.Get("nextPageToken").Str; token == "" {
			break
		}
	}
	if strings.Join(seen, ",") != "a,b,c" {
		t.Fatalf("pages listed %v, want a,b,c", seen)
	}
	wantError(t, g.call("4", "ListTaskPushNotificationConfigs", `{"taskId":"`+id+`","pageToken":"bogus"}`), dialect.V10, -32602)
}

// TestPushRelayStoreDown: a delivery the store cannot look up is answered
// 503, so that the backend keeps it.
func TestPushRelayStoreDown(t *testing.T) {
	down := redisIndex(t, store.RedisConfig{Address: "127.0.0.1:1", DialTimeout: 100 * time.Millisecond})
	g := newGatewayWithStore(t, backends[0].handler(t, nil), down)
	if status, _ := deliver(t, g, "/push/"+randomID(), "X-A2A-Notification-Token", "x", `{}`); status != http.StatusServiceUnavailable {
		t.Fatalf("with the store down a delivery answered %d, want 503", status)
	}
}
