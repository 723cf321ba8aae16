package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/testclock"
	"github.com/a2agate/gateway/internal/testredis"
	"github.com/a2agate/gateway/store"
)

// sendCounter counts the sends (unary and streaming) that reach h, and
// signals each on arrived once h has it.
type sendCounter struct {
	h       http.Handler
	sends   atomic.Int64
	arrived chan struct{}
}

func newSendCounter(h http.Handler) *sendCounter {
	return &sendCounter{h: h, arrived: make(chan struct{}, 16)}
}

func (s *sendCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	switch gjson.GetBytes(body, "method").Str {
	case "message/send", "message/stream", "SendMessage", "SendStreamingMessage":
		s.sends.Add(1)
		s.arrived <- struct{}{}
	}
	s.h.ServeHTTP(w, r)
}

// retryCase is one caller dialect before one backend, with a hold that
// keeps "wait" tasks working until it is closed.
type retryCase struct {
	c       caller
	b       backendKind
	hold    chan struct{}
	backend *sendCounter
}

func forEachRetryPair(t *testing.T, f func(t *testing.T, rc *retryCase)) {
	forEachCallerOf(t, backends, func(t *testing.T, c caller, b backendKind) {
		hold := make(chan struct{})
		rc := &retryCase{c: c, b: b, hold: hold, backend: newSendCounter(b.handler(t, hold))}
		t.Cleanup(rc.release)
		f(t, rc)
	})
}

var releaseMu sync.Mutex

func (rc *retryCase) release() {
	releaseMu.Lock()
	defer releaseMu.Unlock()
	select {
	case <-rc.hold:
	default:
		close(rc.hold)
	}
}

// sendResult posts a send and returns its reply.
func sendResult(t *testing.T, g *testGateway, c caller, params string, header ...string) gjson.Result {
	t.Helper()
	_, b, err := g.postCtx(context.Background(), rpc(c.method(dialect.SendMessage), params), append(g.hdr(c.d), header...)...)
	if err != nil {
		t.Fatal(err)
	}
	return gjson.ParseBytes(b)
}

// abandonedSend starts a blocking send of a "wait" task and gives up on it
// once the backend has it, as a caller that times out or disconnects does.
func abandonedSend(t *testing.T, g *testGateway, rc *retryCase, params string, header ...string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, _, err := g.postCtx(ctx, rpc(rc.c.method(dialect.SendMessage), params), append(g.hdr(rc.c.d), header...)...)
		errc <- err
	}()
	<-rc.backend.arrived
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("the abandoned send was answered")
	}
}

func wantCompleted(t *testing.T, c caller, r gjson.Result) gjson.Result {
	t.Helper()
	task := c.task(t, mustResult(t, r))
	if task.Get("status.state").Str != c.state("completed") {
		t.Fatalf("want a completed task: %s", task.Raw)
	}
	return task
}

func wantSends(t *testing.T, rc *retryCase, n int64) {
	t.Helper()
	if got := rc.backend.sends.Load(); got != n {
		t.Fatalf("the backend saw %d sends, want %d", got, n)
	}
}

// TestRetryAfterCallerGaveUp: a blocking send whose caller went away (its
// timeout, a cut connection) runs on, and its retry gets the completed task;
// the backend saw the message once.
func TestRetryAfterCallerGaveUp(t *testing.T) {
	forEachRetryPair(t, func(t *testing.T, rc *retryCase) {
		g := newGateway(t, rc.backend, rc.b.version)
		c := rc.c
		abandonedSend(t, g, rc, c.send("m1", c.text("wait"), ""))
		rc.release()
		wantCompleted(t, c, sendResult(t, g, c, c.send("m1", c.text("wait"), "")))
		wantSends(t, rc, 1)
	})
}

// TestRetryWithIdempotencyKey: the header is the key; the retry's message
// id is fresh, as an SDK makes one per call.
func TestRetryWithIdempotencyKey(t *testing.T) {
	forEachRetryPair(t, func(t *testing.T, rc *retryCase) {
		g := newGateway(t, rc.backend, rc.b.version)
		c := rc.c
		abandonedSend(t, g, rc, c.send("m1", c.text("wait"), ""), HeaderIdempotencyKey, "order-42")
		rc.release()
		wantCompleted(t, c, sendResult(t, g, c, c.send("m2", c.text("wait"), ""), HeaderIdempotencyKey, "order-42"))
		wantSends(t, rc, 1)
		// Another key is other work.
		wantCompleted(t, c, sendResult(t, g, c, c.send("m3", c.text("wait"), ""), HeaderIdempotencyKey, "order-43"))
		wantSends(t, rc, 2)
	})
}

// TestRetryJoinsInFlight: two callers with one key while the first send
// runs: one backend call, both answered with its task.
func TestRetryJoinsInFlight(t *testing.T) {
	forEachRetryPair(t, func(t *testing.T, rc *retryCase) {
		reg := prometheus.NewRegistry()
		g := newGatewayOpts(t, rc.backend, rc.b.version, Options{Metrics: NewMetrics(reg, nil)})
		waiting := make(chan struct{}, 1)
		g.agent.retries.setWaitHook(func() { waiting <- struct{}{} })
		c := rc.c
		params := c.send("m1", c.text("wait"), "")
		answers := make(chan gjson.Result, 2)
		go func() { answers <- sendResult(t, g, c, params) }()
		<-rc.backend.arrived
		go func() { answers <- sendResult(t, g, c, params) }()
		// Released once the retry waits on the first send's flight.
		<-waiting
		rc.release()
		a, b := wantCompleted(t, c, <-answers), wantCompleted(t, c, <-answers)
		if a.Get("id").Str != b.Get("id").Str {
			t.Fatalf("two tasks for one send: %s and %s", a.Get("id").Str, b.Get("id").Str)
		}
		wantSends(t, rc, 1)
		if n := testutil.ToFloat64(g.agent.metrics.retries.WithLabelValues("test", retryJoinedInFlight)); n != 1 {
			t.Fatalf("joined_in_flight = %v, want 1", n)
		}
	})
}

// TestRetryOfDirectMessage: a send answered with a message gets the same
// message again.
func TestRetryOfDirectMessage(t *testing.T) {
	forEachRetryPair(t, func(t *testing.T, rc *retryCase) {
		g := newGateway(t, rc.backend, rc.b.version)
		c := rc.c
		first := mustResult(t, sendResult(t, g, c, c.send("m1", c.text("what time is it?"), "")))
		again := mustResult(t, sendResult(t, g, c, c.send("m1", c.text("what time is it?"), "")))
		if !jsonSame(first.Raw, again.Raw) {
			t.Fatalf("the retry got another answer:\n%s\n%s", first.Raw, again.Raw)
		}
		wantSends(t, rc, 1)
	})
}

// TestRetryKeyReuseRefused: a seen key with another message is refused,
// naming the reuse, and the backend does not see it.
func TestRetryKeyReuseRefused(t *testing.T) {
	forEachRetryPair(t, func(t *testing.T, rc *retryCase) {
		g := newGateway(t, rc.backend, rc.b.version)
		c := rc.c
		wantCompleted(t, c, sendResult(t, g, c, c.send("m1", c.text("hello"), "")))
		wantErrorSaying(t, sendResult(t, g, c, c.send("m1", c.text("goodbye"), "")), c.d, -32602, "message.messageId was already used for another message")
		wantErrorSaying(t, sendResult(t, g, c, c.send("m2", c.text("goodbye"), ""), HeaderIdempotencyKey, "m1"), c.d, -32602, "Idempotency-Key")
		wantSends(t, rc, 1)
	})
}

// TestRetryOfSendRecordedByOlderGateway: a record whose digest is of
// another form (an older gateway's sha256, on an index a rolling upgrade
// shares) cannot be compared: the send is taken as the retry it claims to
// be, not refused as key reuse.
func TestRetryOfSendRecordedByOlderGateway(t *testing.T) {
	forEachRetryPair(t, func(t *testing.T, rc *retryCase) {
		g := newGateway(t, rc.backend, rc.b.version)
		c := rc.c
		first := wantCompleted(t, c, sendResult(t, g, c, c.send("m1", c.text("hello"), "")))
		key := store.SendKey{Agent: g.agent.cfg.Name, Key: "m1"}
		rec, err := g.agent.tasks.LoadSend(context.Background(), key, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		rec.Digest = strings.Repeat("ab", 32)
		if err := g.agent.tasks.SaveSend(context.Background(), key, rec); err != nil {
			t.Fatal(err)
		}
		again := wantCompleted(t, c, sendResult(t, g, c, c.send("m1", c.text("hello"), "")))
		if again.Get("id").Str != first.Get("id").Str {
			t.Fatalf("the retry got another task: %s, first %s", again.Raw, first.Raw)
		}
		wantSends(t, rc, 1)
	})
}

// TestRetryKeysScopedByPrincipal: another caller's identical key and
// message is its own send, and learns nothing of the first.
func TestRetryKeysScopedByPrincipal(t *testing.T) {
	forEachRetryPair(t, func(t *testing.T, rc *retryCase) {
		g := newGateway(t, rc.backend, rc.b.version, withAuth(t))
		alice, bob := g.as(token(t, "alice")), g.as(token(t, "bob"))
		c := rc.c
		a := wantCompleted(t, c, sendResult(t, alice, c, c.send("m1", c.text("hello"), "")))
		r := sendResult(t, bob, c, c.send("m1", c.text("hello"), ""))
		b := wantCompleted(t, c, r)
		if a.Get("id").Str == b.Get("id").Str || strings.Contains(r.Raw, a.Get("id").Str) {
			t.Fatalf("bob's send learned alice's task: %s", r.Raw)
		}
		// Nor is another message under alice's key refused for bob.
		wantCompleted(t, c, sendResult(t, bob, c, c.send("m2", c.text("x"), ""), HeaderIdempotencyKey, "k"))
		wantCompleted(t, c, sendResult(t, alice, c, c.send("m2", c.text("y"), ""), HeaderIdempotencyKey, "k"))
		wantSends(t, rc, 4)
	})
}

// TestRetryAfterWindowIsNewSend: past retries.window the key is free: the
// same message is new work.
func TestRetryAfterWindowIsNewSend(t *testing.T) {
	forEachRetryPair(t, func(t *testing.T, rc *retryCase) {
		g := newGateway(t, rc.backend, rc.b.version, func(cfg *AgentConfig) { cfg.Retries.Window = time.Hour })
		clock := testclock.New(time.Now())
		g.agent.retries.setClock(clock.Now)
		c := rc.c
		a := wantCompleted(t, c, sendResult(t, g, c, c.send("m1", c.text("hello"), "")))
		clock.Advance(time.Hour - time.Second)
		if b := wantCompleted(t, c, sendResult(t, g, c, c.send("m1", c.text("hello"), ""))); b.Get("id").Str != a.Get("id").Str {
			t.Fatal("a retry within the window made a new task")
		}
		wantSends(t, rc, 1)
		clock.Advance(time.Second)
		if b := wantCompleted(t, c, sendResult(t, g, c, c.send("m1", c.text("hello"), ""))); b.Get("id").Str == a.Get("id").Str {
			t.Fatal("a send after the window got the old task")
		}
		wantSends(t, rc, 2)
	})
}

// TestRetryNotAcceptedIsResent: a send the backend refused (a JSON-RPC
// error, no task) is sent again by its retry.
func TestRetryNotAcceptedIsResent(t *testing.T) {
	forEachRetryPair(t, func(t *testing.T, rc *retryCase) {
		var refused atomic.Bool
		refuseFirst := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost && refused.CompareAndSwap(false, true) {
				body, _ := io.ReadAll(r.Body)
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+gjson.GetBytes(body, "id").Raw+`,"error":{"code":-32603,"message":"overloaded, try again"}}`)
				return
			}
			rc.backend.ServeHTTP(w, r)
		})
		reg := prometheus.NewRegistry()
		g := newGatewayOpts(t, refuseFirst, rc.b.version, Options{Metrics: NewMetrics(reg, nil)})
		c := rc.c
		wantError(t, sendResult(t, g, c, c.send("m1", c.text("hello"), "")), c.d, -32603)
		wantCompleted(t, c, sendResult(t, g, c, c.send("m1", c.text("hello"), "")))
		wantSends(t, rc, 1)
		if n := testutil.ToFloat64(g.agent.metrics.retries.WithLabelValues("test", retryResentNotAccepted)); n != 1 {
			t.Fatalf("resent_not_accepted = %v, want 1", n)
		}
	})
}

func TestNotAcceptedKinds(t *testing.T) {
	b := &backend{name: "b"}
	dial := b.transportError(context.Background(), &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")})
	read := b.transportError(context.Background(), &net.OpError{Op: "read", Net: "tcp", Err: errors.New("connection reset")})
	if !notAccepted(dial) || notAccepted(read) {
		t.Fatalf("notAccepted(dial) = %v, notAccepted(read) = %v; want true, false", notAccepted(dial), notAccepted(read))
	}
}

// replicas starts two gateways in front of rc's backend, each with its own
// Redis index sharing one prefix, as two replicas are, and returns them
// with alice's view of each.
func replicas(t *testing.T, rc *retryCase) (g1, g2, alice1, alice2 *testGateway) {
	prefix := fmt.Sprintf("a2agw-retry-%d:", time.Now().UnixNano())
	open := func() *testGateway {
		s := redisIndex(t, store.RedisConfig{Address: testredis.Addr(t), KeyPrefix: prefix, TTL: time.Hour})
		return newGatewayOpts(t, rc.backend, rc.b.version, Options{Tasks: s}, withAuth(t))
	}
	g1, g2 = open(), open()
	tok := token(t, "alice")
	return g1, g2, g1.as(tok), g2.as(tok)
}

// TestRetryOnAnotherReplica: the retry reaching the other gateway waits
// for the first's outcome there and gets the task; one backend call.
func TestRetryOnAnotherReplica(t *testing.T) {
	forEachRetryPair(t, func(t *testing.T, rc *retryCase) {
		_, _, a1, a2 := replicas(t, rc)
		c := rc.c
		abandonedSend(t, a1, rc, c.send("m1", c.text("wait"), ""))
		answer := make(chan gjson.Result, 1)
		go func() { answer <- sendResult(t, a2, c, c.send("m1", c.text("wait"), "")) }()
		rc.release()
		wantCompleted(t, c, <-answer)
		wantSends(t, rc, 1)
	})
}

// TestRetryAfterReplicaDied: the first replica stops renewing its claim
// mid-call (it is closed); past the lease, the retry on the other is told
// the gateway cannot know whether the agent took the work, and nothing is
// sent again; once the first's outcome is kept, a retry gets the task.
func TestRetryAfterReplicaDied(t *testing.T) {
	forEachRetryPair(t, func(t *testing.T, rc *retryCase) {
		g1, g2, a1, a2 := replicas(t, rc)
		c := rc.c
		params := c.send("m1", c.text("wait"), "")
		first := make(chan gjson.Result, 1)
		go func() { first <- sendResult(t, a1, c, params) }()
		<-rc.backend.arrived
		g1.agent.Close()
		clock := testclock.New(time.Now().Add(retryLease + time.Second))
		g2.agent.retries.setClock(clock.Now)
		wantErrorSaying(t, sendResult(t, a2, c, params), c.d, -32603, "cannot tell whether the agent took the work")
		wantSends(t, rc, 1)
		rc.release()
		task := wantCompleted(t, c, <-first)
		if again := wantCompleted(t, c, sendResult(t, a2, c, params)); again.Get("id").Str != task.Get("id").Str {
			t.Fatal("the retry after the outcome was kept got another task")
		}
		wantSends(t, rc, 1)
	})
}

// openedStream starts a streaming send and returns it once its first
// event, naming the task, has come; the task id with it.
func openedStream(t *testing.T, g *testGateway, c caller, params string) (*eventStream, string) {
	t.Helper()
	s := g.stream("1", c.method(dialect.SendStreamingMessage), params)
	first, ok := s.next()
	if !ok {
		t.Fatal("the stream ended before its first event")
	}
	id := mustResult(t, first).Get("id").Str
	if c.d == dialect.V10 {
		id = mustResult(t, first).Get("task.id").Str
	}
	if id == "" {
		t.Fatalf("the first event names no task: %s", first.Raw)
	}
	return s, id
}

// lastState is the task state the last event of a stream result says.
func lastState(c caller, events []gjson.Result) string {
	if len(events) == 0 {
		return ""
	}
	r := events[len(events)-1].Get("result")
	if c.d == dialect.V10 {
		if st := r.Get("statusUpdate.status.state"); st.Exists() {
			return st.Str
		}
		return r.Get("task.status.state").Str
	}
	return r.Get("status.state").Str
}

// TestStreamingRetryResubscribes: the caller of a streaming send goes away
// after the first event (its stream to the backend ends); its retry gets
// the task and then its updates, as a subscription gives them, and the
// backend saw the message once.
func TestStreamingRetryResubscribes(t *testing.T) {
	forEachRetryPair(t, func(t *testing.T, rc *retryCase) {
		g := newGateway(t, rc.backend, rc.b.version)
		c := rc.c
		params := c.send("m1", c.text("wait"), "")
		first, taskID := openedStream(t, g, c, params)
		first.done()
		retry, again := openedStream(t, g, c, params)
		if again != taskID {
			t.Fatalf("the retry's stream is about task %s, the first send's is %s", again, taskID)
		}
		rc.release()
		if st := lastState(c, retry.all()); st != c.state("completed") {
			t.Fatalf("the retry's stream ended in state %q", st)
		}
		wantSends(t, rc, 1)
		// A unary retry of the streaming send gets the task, now final.
		if got := wantCompleted(t, c, sendResult(t, g, c, params)); got.Get("id").Str != taskID {
			t.Fatalf("the unary retry got task %s, want %s", got.Get("id").Str, taskID)
		}
		// And a streaming retry of a finished task gets the task, once.
		done := g.stream("1", c.method(dialect.SendStreamingMessage), params).all()
		if len(done) != 1 || lastState(c, done) != c.state("completed") {
			t.Fatalf("a streaming retry of a finished task: %v", done)
		}
		wantSends(t, rc, 1)
	})
}

// TestStreamingRetryOfDirectMessage: a streaming send answered with a
// message gets the same message as its retry's one event.
func TestStreamingRetryOfDirectMessage(t *testing.T) {
	forEachRetryPair(t, func(t *testing.T, rc *retryCase) {
		g := newGateway(t, rc.backend, rc.b.version)
		c := rc.c
		params := c.send("m1", c.text("what time is it?"), "")
		first := g.stream("1", c.method(dialect.SendStreamingMessage), params).all()
		again := g.stream("1", c.method(dialect.SendStreamingMessage), params).all()
		if len(first) != 1 || len(again) != 1 || !jsonSame(mustResult(t, first[0]).Raw, mustResult(t, again[0]).Raw) {
			t.Fatalf("the retry got another answer:\n%v\n%v", first, again)
		}
		// The unary retry of it gets the message as a send's result.
		if unary := mustResult(t, sendResult(t, g, c, params)); !jsonSame(unary.Raw, mustResult(t, first[0]).Raw) {
			t.Fatalf("the unary retry: %s, want %s", unary.Raw, mustResult(t, first[0]).Raw)
		}
		wantSends(t, rc, 1)
	})
}

// TestRetryOfContinuation: a send continuing a task is deduplicated as a
// new one is: its retry gets the task it moved on (now completed, which a
// second message would be refused for), and the backend saw it once.
func TestRetryOfContinuation(t *testing.T) {
	forEachRetryPair(t, func(t *testing.T, rc *retryCase) {
		g := newGateway(t, rc.backend, rc.b.version)
		c := rc.c
		task := c.task(t, mustResult(t, sendResult(t, g, c, c.send("m1", c.text("input please"), ""))))
		if task.Get("status.state").Str != c.state("input-required") {
			t.Fatalf("want an input-required task: %s", task.Raw)
		}
		id := task.Get("id").Str
		params := c.continuation("m2", id, "Ada")
		a := wantCompleted(t, c, sendResult(t, g, c, params))
		b := wantCompleted(t, c, sendResult(t, g, c, params))
		if a.Get("id").Str != id || b.Get("id").Str != id {
			t.Fatalf("the continuation's retry answered another task: %s", b.Raw)
		}
		wantSends(t, rc, 2)
		// The same key with another message to the task is refused.
		wantError(t, sendResult(t, g, c, c.continuation("m2", id, "Bob")), c.d, -32602)
		// The streaming retry of the continuation gets the task, once.
		done := g.stream("1", c.method(dialect.SendStreamingMessage), params).all()
		if len(done) != 1 || lastState(c, done) != c.state("completed") {
			t.Fatalf("a streaming retry of the continuation: %v", done)
		}
		wantSends(t, rc, 2)
	})
}

// sendWrites counts how a send's outcome reached the index.
type sendWrites struct {
	store.Store
	putSends, saves atomic.Int32
}

func (s *sendWrites) PutSend(ctx context.Context, t store.Task, key store.SendKey, rec store.SendRecord) error {
	s.putSends.Add(1)
	return s.Store.PutSend(ctx, t, key, rec)
}

func (s *sendWrites) SaveSend(ctx context.Context, key store.SendKey, rec store.SendRecord) error {
	if rec.State == store.SendTask {
		s.saves.Add(1)
	}
	return s.Store.SaveSend(ctx, key, rec)
}

// TestOutcomeAfterARenewalInDoubt: once a claim's renewal gave up waiting
// for its write (which may still land), the send's outcome is written the
// renewal's ordered way, after it, not in the task's own script, which
// could overtake it and let the stale claim come back.
func TestOutcomeAfterARenewalInDoubt(t *testing.T) {
	for _, inDoubt := range []bool{false, true} {
		t.Run(fmt.Sprintf("in-doubt=%v", inDoubt), func(t *testing.T) {
			hold := make(chan struct{})
			backend := newSendCounter(backends[0].handler(t, hold))
			tasks := &sendWrites{Store: store.NewMemory(store.MemoryConfig{})}
			g := newGatewayOpts(t, backend, backends[0].version, Options{Tasks: tasks})
			c := callers[0]
			answer := make(chan gjson.Result, 1)
			go func() { answer <- sendResult(t, g, c, c.send("m1", c.text("wait"), "")) }()
			<-backend.arrived
			rs := g.agent.retries
			rs.mu.Lock()
			for _, fl := range rs.flights {
				fl.mu.Lock()
				fl.renewalInDoubt = inDoubt
				fl.mu.Unlock()
			}
			rs.mu.Unlock()
			close(hold)
			wantCompleted(t, c, <-answer)
			put, saved := tasks.putSends.Load(), tasks.saves.Load()
			if inDoubt && (put != 0 || saved != 1) || !inDoubt && (put != 1 || saved != 0) {
				t.Fatalf("renewal in doubt %v: outcome written in the task's script %d times, after the renewals %d times", inDoubt, put, saved)
			}
		})
	}
}

// TestRetryOfAnUnreadableAnswerIsNotResent: a send whose backend did the
// work but answered what the gateway cannot read (not JSON, not valid A2A,
// too large, compressed unasked) may have made a task: its retry is told
// the gateway cannot tell, and the message is not sent again. Before,
// such an answer counted as a refusal before the work (the gateway's own
// error kinds were taken for refusals before forwarding), and the retry
// sent the message a second time: the work was done twice.
func TestRetryOfAnUnreadableAnswerIsNotResent(t *testing.T) {
	forEachRetryPair(t, func(t *testing.T, rc *retryCase) {
		var answered atomic.Bool
		garbleFirst := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodPost || !answered.CompareAndSwap(false, true) {
				rc.backend.ServeHTTP(w, r)
				return
			}
			rec := httptest.NewRecorder()
			rc.backend.ServeHTTP(rec, r) // the work is done
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(rec.Body.Bytes()[:rec.Body.Len()/2])
		})
		g := newGateway(t, garbleFirst, rc.b.version)
		c := rc.c
		wantError(t, sendResult(t, g, c, c.send("m1", c.text("hello"), "")), c.d, -32006)
		wantErrorSaying(t, sendResult(t, g, c, c.send("m1", c.text("hello"), "")), c.d, -32603, "cannot tell whether the agent took the work")
		wantSends(t, rc, 1)
	})
}
