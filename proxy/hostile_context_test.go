package proxy

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/testlog"
	"github.com/a2agate/gateway/store"
)

// contextFiler is a 1.0 backend that puts every task it answers for in
// the context it is told to, whatever the message named: the task of a
// send is "t-" and the message id, or the message's own taskId.
type contextFiler struct {
	mu        sync.Mutex
	contextID string
	// messages answers sends with a message in the context, not a task.
	messages bool
}

// answerMessages makes f answer sends with a message (true) or a task.
func (f *contextFiler) answerMessages(on bool) {
	f.mu.Lock()
	f.messages = on
	f.mu.Unlock()
}

func (f *contextFiler) fileIn(contextID string) {
	f.mu.Lock()
	f.contextID = contextID
	f.mu.Unlock()
}

func (f *contextFiler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := gjson.ParseBytes(body)
	f.mu.Lock()
	contextID, messages := f.contextID, f.messages
	f.mu.Unlock()
	id := req.Get("id").Raw
	if messages {
		message := `{"message":{"messageId":"r-` + req.Get("params.message.messageId").Str + `","role":"ROLE_AGENT","contextId":"` + contextID + `","parts":[{"text":"reply"}]}}`
		if strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
			w.Header().Set("Content-Type", "text/event-stream")
			sseWrite(w, `data: {"jsonrpc":"2.0","id":`+id+`,"result":`+message+"}\n\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"result":`+message+`}`)
		return
	}
	taskID := req.Get("params.message.taskId").Str
	if taskID == "" {
		taskID = req.Get("params.id").Str
	}
	if taskID == "" {
		taskID = "t-" + req.Get("params.message.messageId").Str
	}
	task := `{"id":"` + taskID + `","contextId":"` + contextID + `","status":{"state":"TASK_STATE_WORKING"},"artifacts":[{"artifactId":"a","parts":[{"text":"reply"}]}]}`
	if strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		w.Header().Set("Content-Type", "text/event-stream")
		sseWrite(w, `data: {"jsonrpc":"2.0","id":`+id+`,"result":{"task":`+task+"}}\n\n",
			`data: {"jsonrpc":"2.0","id":`+id+`,"result":{"statusUpdate":{"taskId":"`+taskID+`","contextId":"`+contextID+`","status":{"state":"TASK_STATE_COMPLETED"}}}}`+"\n\n")
		return
	}
	result := `{"task":` + task + `}`
	if m := req.Get("method").Str; m == "GetTask" || m == "CancelTask" {
		result = task
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"result":`+result+`}`)
}

// TestBackendFilesTaskInAnothersContext: a backend that puts alice's task
// in bob's context (a new task of hers, or one she continues or reads) is
// not relayed: alice gets an error in her dialect that names neither the
// context nor bob, the index gains no task of hers there (a context keeps
// one owner), and the gateway logs and counts the backend's fault. Before,
// alice got bob's contextId and the index a second owner of the context.
func TestBackendFilesTaskInAnothersContext(t *testing.T) {
	const says = "put this task in a context that belongs to another caller"
	back, alice, bob, faultsCounted := twoContexts(t)
	c10 := callers[1]

	back.fileIn("c-bob")
	faults := 0
	for i, c := range callers {
		n := strconv.Itoa(i)
		answers := map[string]gjson.Result{
			"new task":            alice.call("3", c.method(dialect.SendMessage), c.send("alice-new-"+n, c.text("hi"), "")),
			"her own task":        alice.call("4", c.method(dialect.SendMessage), c.continuation("alice-more-"+n, "t-alice-own", "more")),
			"a get of her task":   alice.call("5", c.method(dialect.GetTask), `{"id":"t-alice-own"}`),
			"a new task, stream":  streamLast(t, alice.stream("6", c.method(dialect.SendStreamingMessage), c.send("alice-stream-"+n, c.text("hi"), ""))),
			"her own task stream": streamLast(t, alice.stream("7", c.method(dialect.SendStreamingMessage), c.continuation("alice-stream-more-"+n, "t-alice-own", "more"))),
		}
		for name, r := range answers {
			faults++
			wantErrorSaying(t, r, c.d, -32603, says)
			if strings.Contains(r.Raw, "c-bob") || strings.Contains(r.Raw, "bob") {
				t.Errorf("%s, %s: the answer names bob's context: %s", c.d, name, r.Raw)
			}
		}
		wantError(t, alice.call("8", c.method(dialect.GetTask), `{"id":"t-alice-new-`+n+`"}`), c.d, -32001)
	}

	back.fileIn("c-alice")
	own := mustResult(t, alice.call("9", "GetTask", `{"id":"t-alice-own"}`))
	if own.Get("contextId").Str != "c-alice" {
		t.Errorf("alice's task after the withheld answers: %s, want it in c-alice", own.Raw)
	}
	for _, q := range []struct {
		who  *testGateway
		ctx  string
		want int
	}{{alice, "c-bob", 0}, {alice, "c-alice", 1}, {bob, "c-bob", 1}} {
		// A list reads its tasks from the backend, which files them where told.
		back.fileIn(q.ctx)
		list := mustResult(t, q.who.call("10", "ListTasks", `{"contextId":"`+q.ctx+`"}`))
		if n := len(list.Get("tasks").Array()); n != q.want {
			t.Errorf("ListTasks(contextId %s) = %s, want %d tasks", q.ctx, list.Raw, q.want)
		}
	}
	// Bob's context is still his alone: alice may not name it.
	wantError(t, alice.call("11", "SendMessage", strings.Replace(c10.send("alice-named", c10.text("hi"), ""), `"messageId"`, `"contextId":"c-bob","messageId"`, 1)), dialect.V10, -32602)
	faultsCounted(faults)
}

// TestBackendAnswersMessageInAnothersContext: a backend that answers
// alice's send with a message (no task) in bob's context is not relayed,
// as a task there is not: alice gets an error in her dialect and binding
// that names neither the context nor bob, for a send and a stream, and the
// gateway logs and counts the backend's fault. A message in her own
// context, or in one nobody holds, is relayed. Before, alice got bob's
// contextId, and could then list his context's tasks by it at the backend.
func TestBackendAnswersMessageInAnothersContext(t *testing.T) {
	const says = "answered with a message in a context that belongs to another caller"
	back, alice, _, faultsCounted := twoContexts(t)

	back.answerMessages(true)
	for _, ok := range []string{"c-alice", "c-nobody"} {
		back.fileIn(ok)
		for i, c := range callers {
			r := mustResult(t, alice.call("3", c.method(dialect.SendMessage), c.send("alice-ok-"+ok+strconv.Itoa(i), c.text("hi"), "")))
			if !strings.Contains(r.Raw, ok) {
				t.Errorf("%s: a message in %s: %s", c.d, ok, r.Raw)
			}
		}
	}
	back.fileIn("c-bob")
	faults := 0
	for i, c := range callers {
		n := strconv.Itoa(i)
		answers := map[string]gjson.Result{
			"send":   alice.call("4", c.method(dialect.SendMessage), c.send("alice-new-"+n, c.text("hi"), "")),
			"stream": streamLast(t, alice.stream("5", c.method(dialect.SendStreamingMessage), c.send("alice-stream-"+n, c.text("hi"), ""))),
		}
		for name, r := range answers {
			faults++
			wantErrorSaying(t, r, c.d, -32603, says)
			if strings.Contains(r.Raw, "bob") {
				t.Errorf("%s, %s: the answer names bob's context: %s", c.d, name, r.Raw)
			}
		}
	}
	// The REST binding answers the same refusal in its own shape.
	faults++
	status, body := restRaw(t, alice, "POST", "/message:send", `{"message":{"messageId":"alice-rest","role":"ROLE_USER","parts":[{"text":"hi"}]}}`, alice.token)
	if status != http.StatusInternalServerError || !strings.Contains(body, says) || strings.Contains(body, "bob") {
		t.Errorf("REST: HTTP %d %s", status, body)
	}
	faultsCounted(faults)
}

// TestViaStreamMessageInAnothersContext: a blocking send served from the
// backend's stream (blocking_via_stream) that the backend answers with a
// message in another caller's context is withheld, as a plain send's
// answer is, in every caller dialect. Before, the folded answer, a message
// with no task, was never checked against the index: alice got bob's
// contextId.
func TestViaStreamMessageInAnothersContext(t *testing.T) {
	const says = "answered with a message in a context that belongs to another caller"
	back, alice, _, faultsCounted := twoContexts(t, viaStreamOn)
	back.answerMessages(true)
	back.fileIn("c-alice")
	for i, c := range callers {
		if r := mustResult(t, alice.call("3", c.method(dialect.SendMessage), c.send("alice-ok-"+strconv.Itoa(i), c.text("hi"), ""))); !strings.Contains(r.Raw, "c-alice") {
			t.Errorf("%s: a message in her own context: %s", c.d, r.Raw)
		}
	}
	back.fileIn("c-bob")
	for i, c := range callers {
		r := alice.call("4", c.method(dialect.SendMessage), c.send("alice-new-"+strconv.Itoa(i), c.text("hi"), ""))
		wantErrorSaying(t, r, c.d, -32603, says)
		if strings.Contains(r.Raw, "bob") {
			t.Errorf("%s: the answer names bob's context: %s", c.d, r.Raw)
		}
	}
	faultsCounted(len(callers))
}

// streamLast reads a stream to its end and returns its last event.
func streamLast(t *testing.T, s *eventStream) gjson.Result {
	t.Helper()
	events := s.all()
	if len(events) == 0 {
		t.Fatal("the stream ended without an event")
	}
	for _, ev := range events[:len(events)-1] {
		if strings.Contains(ev.Raw, "c-bob") {
			t.Errorf("an event relayed before the refusal names bob's context: %s", ev.Raw)
		}
	}
	return events[len(events)-1]
}

// TestPushDeliveryInAnotherContext: a backend's push delivery for a task
// that names another contextId than the task's is refused (400) and
// reaches no webhook: relayed, it would show the caller a context that may
// be another caller's. Before, it was delivered.
func TestPushDeliveryInAnotherContext(t *testing.T) {
	g := newGateway(t, backends[1].handler(t, nil), backends[1].version, allowLoopback)
	c := caller{dialect.V10}
	rcv := newReceiver(t, 0)
	id, path, token := pushedTask(t, g, c, dialect.Version10, rcv.url)
	contextID := mustResult(t, g.call("5", "GetTask", `{"id":"`+id+`"}`)).Get("contextId").Str
	if contextID == "" {
		t.Fatal("the task has no context")
	}
	update := func(contextID, state string) string {
		return `{"statusUpdate":{"taskId":"` + id + `","contextId":"` + contextID + `","status":{"state":"` + state + `"}}}`
	}
	// Before any snapshot, the context the index recorded is the task's.
	if status, answer := deliver(t, g, path, "A2A-Notification-Token", token, update("c-bob", "TASK_STATE_WORKING")); status != http.StatusBadRequest || !strings.Contains(answer, "not the context of task") {
		t.Fatalf("a delivery in another context answered %d: %s", status, answer)
	}
	rcv.none(t, g)
	if status, answer := deliver(t, g, path, "A2A-Notification-Token", token, update(contextID, "TASK_STATE_WORKING")); status != http.StatusOK {
		t.Fatalf("a delivery in the task's context answered %d: %s", status, answer)
	}
	if d := rcv.next(t); d.body.Get("statusUpdate.contextId").Str != contextID {
		t.Fatalf("delivered: %s", d.body.Raw)
	}
	// Once a snapshot is kept, it says the task's context.
	if status, _ := deliver(t, g, path, "A2A-Notification-Token", token, update("c-bob", "TASK_STATE_COMPLETED")); status != http.StatusBadRequest {
		t.Fatalf("a later delivery in another context answered %d, want 400", status)
	}
	rcv.none(t, g)
}

// twoContexts is a 1.0 gateway with auth in front of a contextFiler, as
// alice and as bob, each with a task in a context of their own: bob's in
// c-bob, alice's t-alice-own in c-alice. faultsCounted checks that the
// gateway counted and logged, faults times, a backend's reply that put
// alice in another caller's context.
func twoContexts(t *testing.T, edit ...func(*AgentConfig)) (back *contextFiler, alice, bob *testGateway, faultsCounted func(faults int)) {
	t.Helper()
	back = &contextFiler{}
	reg := prometheus.NewRegistry()
	logs := &testlog.Buffer{}
	g := newGatewayOpts(t, back, dialect.Version10,
		Options{Metrics: NewMetrics(reg, nil), Logger: slog.New(slog.NewJSONHandler(logs, nil))}, append([]func(*AgentConfig){withAuth(t)}, edit...)...)
	alice, bob = g.as(token(t, "alice")), g.as(token(t, "bob"))
	c10 := callers[1]
	back.fileIn("c-bob")
	mustResult(t, bob.call("1", "SendMessage", c10.send("bob-1", c10.text("hi"), "")))
	back.fileIn("c-alice")
	mustResult(t, alice.call("2", "SendMessage", c10.send("alice-own", c10.text("hi"), "")))
	return back, alice, bob, func(faults int) {
		t.Helper()
		if got := counterValue(t, reg, "a2a_gateway_backend_errors_total", map[string]string{"agent": "test", "kind": "invalid_reply"}); int(got) != faults {
			t.Errorf("backend_errors_total{kind=invalid_reply} = %v, want %d", got, faults)
		}
		if n := strings.Count(logs.String(), "a context the index holds for another caller"); n != faults {
			t.Errorf("%d warnings logged, want %d:\n%s", n, faults, logs.String())
		}
	}
}

// TestBackendMovesTaskToAnotherContext: a backend that answers a get, a
// subscription, a message continuing the task, or a listing's read of it
// with the task in another context than the index holds for it is
// withheld: the index is the truth for whose a task is, and a context
// shown is one the caller may go on to continue. The same answers in the
// task's own context pass.
func TestBackendMovesTaskToAnotherContext(t *testing.T) {
	filer := &contextFiler{contextID: "c-first"}
	g := newGateway(t, filer, dialect.Version10)
	c10 := callers[1]
	id := c10.task(t, mustResult(t, g.call("1", c10.method(dialect.SendMessage), c10.send("m1", c10.text("hi"), "")))).Get("id").Str
	const says = "with another contextId than the task has"
	filer.fileIn("c-moved")
	for i, c := range callers {
		n := strconv.Itoa(i)
		wantErrorSaying(t, g.call("2"+n, c.method(dialect.GetTask), `{"id":"`+id+`"}`), c.d, -32603, says)
		wantErrorSaying(t, g.call("3"+n, c.method(dialect.SendMessage), c.continuation("m2"+n, id, "more")), c.d, -32603, says)
		wantErrorSaying(t, streamError(t, g.stream("4"+n, c.method(dialect.SubscribeToTask), `{"id":"`+id+`"}`)), c.d, -32603, says)
		wantErrorSaying(t, g.call("9"+n, c.method(dialect.CancelTask), `{"id":"`+id+`"}`), c.d, -32603, says)
	}
	wantErrorSaying(t, g.call("5", "ListTasks", `{}`), dialect.V10, -32603, says)
	if e := g.call("8", "GetTask", `{"id":"`+id+`"}`); strings.Contains(e.Raw, "c-moved") {
		t.Fatalf("the refusal names the context the backend gave: %s", e.Raw)
	}
	if known, err := g.agent.tasks.Get(t.Context(), "test", id); err != nil || known.ContextID != "c-first" {
		t.Fatalf("the index holds %+v (%v)", known, err)
	}
	filer.fileIn("c-first")
	for i, c := range callers {
		if got := mustResult(t, g.call("6"+strconv.Itoa(i), c.method(dialect.GetTask), `{"id":"`+id+`"}`)).Get("contextId").Str; got != "c-first" {
			t.Fatalf("%s: the task's own context answered %q", c.d, got)
		}
	}
	mustResult(t, g.call("7", "ListTasks", `{}`))
}

// contextOwnerReads counts the index's reads of a context's owner.
type contextOwnerReads struct {
	store.Store
	reads atomic.Int32
}

func (s *contextOwnerReads) ContextOwner(ctx context.Context, agent, contextID string) (string, error) {
	s.reads.Add(1)
	return s.Store.ContextOwner(ctx, agent, contextID)
}

// TestMessageInAnotherContextWithoutAuth: without auth every caller is
// the same owner, so a message the backend answers in a context the index
// holds (another task's) is relayed, in a send and a stream, as it was;
// and the index is not read for the context's owner, which cannot be
// another caller.
func TestMessageInAnotherContextWithoutAuth(t *testing.T) {
	back := &contextFiler{}
	tasks := &contextOwnerReads{Store: store.NewMemory(store.MemoryConfig{})}
	g := newGatewayOpts(t, back, dialect.Version10, Options{Tasks: tasks})
	c10 := callers[1]
	back.fileIn("c-held")
	mustResult(t, g.call("1", c10.method(dialect.SendMessage), c10.send("first", c10.text("hi"), "")))
	back.answerMessages(true)
	for i, c := range callers {
		n := strconv.Itoa(i)
		if r := mustResult(t, g.call("2", c.method(dialect.SendMessage), c.send("send-"+n, c.text("hi"), ""))); !strings.Contains(r.Raw, "c-held") {
			t.Errorf("%s: a send's message in c-held: %s", c.d, r.Raw)
		}
		if r := mustResult(t, streamLast(t, g.stream("3", c.method(dialect.SendStreamingMessage), c.send("stream-"+n, c.text("hi"), "")))); !strings.Contains(r.Raw, "c-held") {
			t.Errorf("%s: a stream's message in c-held: %s", c.d, r.Raw)
		}
	}
	if n := tasks.reads.Load(); n != 0 {
		t.Errorf("the index was read %d times for a context's owner, without auth", n)
	}
}
