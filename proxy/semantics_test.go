package proxy

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/agent10"
	"github.com/a2agate/gateway/internal/agentcore"
	"github.com/a2agate/gateway/legacyagent"
)

// sdkBackends are the backends of the end-to-end tests, each test agent
// also as it answers where the SDK servers of its dialect differ: the
// caller's answer must be its own spec's whichever built the backend.
var sdkBackends = []backendKind{
	backends[0],
	{"js-0.2.5", dialect.Version025, func(t *testing.T, hold chan struct{}) http.Handler {
		a := legacyagent.New(legacyagent.Options{Hold: hold, Like: agentcore.JS025})
		t.Cleanup(a.Close)
		return a
	}},
	backends[1],
	{"a2a-go-v2", dialect.Version10, func(t *testing.T, hold chan struct{}) http.Handler {
		a := agent10.New(agent10.Options{Hold: hold, Like: agentcore.GoV2})
		t.Cleanup(a.Close)
		return a
	}},
}

// forEachSDK runs f for every caller dialect against every SDK backend.
func forEachSDK(t *testing.T, f func(t *testing.T, c caller, g *testGateway)) {
	forEachPairOf(t, sdkBackends, f)
}

// historyOf returns the messageIds of a task's history.
func historyOf(task gjson.Result) []string {
	var ids []string
	for _, m := range task.Get("history").Array() {
		ids = append(ids, m.Get("messageId").Str)
	}
	return ids
}

// answeredTask makes a task that asked for input and was answered: its
// history holds the user's message, the agent's question and the answer.
func answeredTask(t *testing.T, c caller, g *testGateway) (string, gjson.Result) {
	t.Helper()
	task := c.task(t, mustResult(t, g.call("1", c.method(dialect.SendMessage), c.send("m1", c.text("input please"), ""))))
	id := task.Get("id").Str
	done := c.task(t, mustResult(t, g.call("2", c.method(dialect.SendMessage), c.continuation("m2", id, "Ada"))))
	return id, done
}

// A task read without historyLength carries all of its history on every
// path, whatever the backend reads a missing historyLength as.
func TestHistoryUnsetMeansAll(t *testing.T) {
	forEachSDK(t, func(t *testing.T, c caller, g *testGateway) {
		id, done := answeredTask(t, c, g)
		if h := historyOf(done); len(h) < 3 {
			t.Fatalf("send result: want the whole history (at least 3 messages), got %v: %s", h, done.Raw)
		}
		got := mustResult(t, g.call("3", c.method(dialect.GetTask), `{"id":"`+id+`"}`))
		all := historyOf(got)
		if len(all) < 3 {
			t.Fatalf("GetTask without historyLength: want the whole history, got %v: %s", all, got.Raw)
		}
		if c.d == dialect.V10 {
			list := mustResult(t, g.call("4", "ListTasks", `{}`))
			if h := historyOf(list.Get("tasks.0")); len(h) != len(all) {
				t.Fatalf("ListTasks without historyLength: want %d history messages, got %v: %s", len(all), h, list.Raw)
			}
			one := mustResult(t, g.call("5", "ListTasks", `{"historyLength":1}`))
			if h := historyOf(one.Get("tasks.0")); len(h) != 1 || h[0] != all[len(all)-1] {
				t.Fatalf("ListTasks historyLength 1: want the newest message, got %v", h)
			}
			none := mustResult(t, g.call("6", "ListTasks", `{"historyLength":0}`))
			if none.Get("tasks.0.history").Exists() {
				t.Fatalf("ListTasks historyLength 0: want no history: %s", none.Raw)
			}
		}
	})
}

// The task opening a send's stream keeps what the send's historyLength
// asked, and a 1.0 "none" leaves no history member.
func TestStreamStartHistoryLength(t *testing.T) {
	forEachSDK(t, func(t *testing.T, c caller, g *testGateway) {
		task := c.task(t, mustResult(t, g.call("1", c.method(dialect.SendMessage), c.send("m1", c.text("input please"), ""))))
		id := task.Get("id").Str
		cont := c.continuation("m2", id, "Ada")
		// 1.0 asks for none (which 0.x cannot say), 0.x for one.
		if c.d == dialect.V10 {
			cont = cont[:len(cont)-1] + `,"configuration":{"historyLength":0}}`
		} else {
			cont = cont[:len(cont)-1] + `,"configuration":{"historyLength":1,"acceptedOutputModes":[]}}`
		}
		events := g.stream("2", c.method(dialect.SendStreamingMessage), cont).all()
		if len(events) == 0 {
			t.Fatal("empty stream")
		}
		first := mustResult(t, events[0])
		if kindOf(c.d, first) != "task" {
			t.Skipf("the stream opens with %s", first.Raw)
		}
		if c.d == dialect.V10 {
			first = first.Get("task")
		}
		switch h := first.Get("history"); {
		case c.d == dialect.V10 && h.Exists():
			t.Fatalf("historyLength 0: the opening task has a history: %s", first.Raw)
		case len(h.Array()) > 1:
			t.Fatalf("historyLength 1: the opening task has %d history messages: %s", len(h.Array()), first.Raw)
		}
	})
}

// A subscription opens with the task once, complete with its history,
// whatever the backend's resubscribe opens with.
func TestSubscribeOpensWithOneCompleteTask(t *testing.T) {
	forEachSDK(t, func(t *testing.T, c caller, g *testGateway) {
		task := c.task(t, mustResult(t, g.call("1", c.method(dialect.SendMessage), c.send("m1", c.text("input please"), ""))))
		id := task.Get("id").Str
		events := g.stream("2", c.method(dialect.SubscribeToTask), `{"id":"`+id+`"}`).all()
		tasks := 0
		for _, e := range events {
			if kindOf(c.d, mustResult(t, e)) == "task" {
				tasks++
			}
		}
		if len(events) == 0 || tasks != 1 || kindOf(c.d, mustResult(t, events[0])) != "task" {
			t.Fatalf("want one task event first, got %d task events in %v", tasks, events)
		}
		first := mustResult(t, events[0])
		if c.d == dialect.V10 {
			first = first.Get("task")
		}
		if h := historyOf(first); len(h) < 2 {
			t.Fatalf("the opening task must carry its history (the message and the question), got %v: %s", h, first.Raw)
		}
	})
}

// canceledBehindTheIndex makes a task, then cancels it at the backend
// directly: the backend holds it canceled while the gateway's index still
// holds it working, so the gateway learns it is final only from the
// backend's answers.
func canceledBehindTheIndex(t *testing.T, c caller, g *testGateway) string {
	t.Helper()
	id := c.task(t, mustResult(t, g.call("1", c.method(dialect.SendMessage), c.send("m-behind-the-index", c.text("wait"), c.nonBlocking())))).Get("id").Str
	method, header := "tasks/cancel", ""
	if g.agent.backend.dialect == dialect.V10 {
		method, header = "CancelTask", "1.0"
	}
	req, _ := http.NewRequest(http.MethodPost, g.backend.URL+"/", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":{"id":"`+id+`"}}`))
	req.Header.Set("Content-Type", "application/json")
	if header != "" {
		req.Header.Set("A2A-Version", header)
	}
	_, b := roundTrip(t, req)
	if !strings.Contains(strings.ToLower(string(b)), "canceled") {
		t.Fatalf("canceling at the backend: %s", b)
	}
	return id
}

// streamError reads the error a streaming call was answered with: one SSE
// data event, whatever the caller's dialect.
func streamError(t *testing.T, s *eventStream) gjson.Result {
	t.Helper()
	if ct := s.res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		b, _ := io.ReadAll(s.res.Body)
		t.Fatalf("a streaming call's error came as %q, not an event: %s", ct, b)
	}
	events := s.all()
	if len(events) != 1 {
		t.Fatalf("want one error event, got %v", events)
	}
	return events[0]
}

// A message to a task in a final state gets the caller's spec's refusal:
// 1.0 UnsupportedOperationError, 0.x InvalidRequest (what the JS 0.x
// reference servers answer), whether the index or only the backend knows
// the task is final, and whichever SDK built the backend.
func TestMessageToFinalTask(t *testing.T) {
	forEachSDK(t, func(t *testing.T, c caller, g *testGateway) {
		want := -32600
		if c.d == dialect.V10 {
			want = -32004
		}
		id := canceledBehindTheIndex(t, c, g)
		// First only the backend knows; the gateway's read of the task then
		// tells the index.
		for range 2 {
			wantError(t, g.call("2", c.method(dialect.SendMessage), c.continuation("m2", id, "more")), c.d, want)
		}
		wantError(t, streamError(t, g.stream("3", c.method(dialect.SendStreamingMessage), c.continuation("m3", id, "more"))), c.d, want)
		id = canceledBehindTheIndex(t, c, g)
		wantError(t, streamError(t, g.stream("4", c.method(dialect.SendStreamingMessage), c.continuation("m4", id, "more"))), c.d, want)
	})
}

// A subscription to a task in a final state: 1.0 says
// UnsupportedOperationError; 0.3 says the stream returns the task, as
// GetTask would, and closes.
func TestSubscribeToFinalTask(t *testing.T) {
	forEachSDK(t, func(t *testing.T, c caller, g *testGateway) {
		id := canceledBehindTheIndex(t, c, g)
		for range 2 { // the backend's answer, then the index's
			s := g.stream("2", c.method(dialect.SubscribeToTask), `{"id":"`+id+`"}`)
			if c.d == dialect.V10 {
				wantError(t, streamError(t, s), c.d, -32004)
				continue
			}
			events := s.all()
			if len(events) != 1 || stateOf(c.d, mustResult(t, events[0])) != "canceled" || kindOf(c.d, mustResult(t, events[0])) != "task" {
				t.Fatalf("want the canceled task alone, got %v", events)
			}
		}
	})
}

// A cancel of a task already final is TaskNotCancelable in both specs; the
// JS 1.x and a2a-go v2 servers answer the task instead, which a 0.x caller
// then gets as the error. Between peers of one dialect the backend's
// answer stands.
func TestCancelFinalTask(t *testing.T) {
	forEachSDK(t, func(t *testing.T, c caller, g *testGateway) {
		task := c.task(t, mustResult(t, g.call("1", c.method(dialect.SendMessage), c.send("m1", c.text("hello"), ""))))
		id := task.Get("id").Str
		if task.Get("status.state").Str != c.state("completed") {
			t.Fatalf("want completed: %s", task.Raw)
		}
		r := g.call("2", c.method(dialect.CancelTask), `{"id":"`+id+`"}`)
		if c.d == dialect.V10 && g.agent.backend.dialect == dialect.V10 && !r.Get("error").Exists() {
			if r.Get("result.status.state").Str != c.state("completed") {
				t.Fatalf("the backend's own answer passes through: %s", r.Raw)
			}
			return
		}
		wantError(t, r, c.d, -32002)
		// And so behind the index.
		id = canceledBehindTheIndex(t, c, g)
		r = g.call("3", c.method(dialect.CancelTask), `{"id":"`+id+`"}`)
		if c.d == dialect.V10 && g.agent.backend.dialect == dialect.V10 && !r.Get("error").Exists() {
			return
		}
		wantError(t, r, c.d, -32002)
	})
}

// A push config delete answers "result":null to a 0.x caller and the 1.0
// Empty ({}) to a 1.0 caller, also from an a2a-go v2 backend, which answers
// with no result member at all.
func TestPushConfigDeleteResult(t *testing.T) {
	forEachSDK(t, func(t *testing.T, c caller, g *testGateway) {
		id := c.task(t, mustResult(t, g.call("1", c.method(dialect.SendMessage), c.send("m1", c.text("input please"), "")))).Get("id").Str
		set := `{"taskId":"` + id + `","id":"cfg1","url":"https://hooks.example/a2a"}`
		del := `{"taskId":"` + id + `","id":"cfg1"}`
		if c.d == dialect.V03 {
			set = `{"taskId":"` + id + `","pushNotificationConfig":{"id":"cfg1","url":"https://hooks.example/a2a"}}`
			del = `{"id":"` + id + `","pushNotificationConfigId":"cfg1"}`
		}
		mustResult(t, g.call("2", c.method(dialect.CreatePushConfig), set))
		r := g.call("3", c.method(dialect.DeletePushConfig), del)
		if want := map[dialect.ID]string{dialect.V03: "null", dialect.V10: "{}"}[c.d]; r.Get("result").Raw != want {
			t.Fatalf("delete answered %s, want result %s", r.Raw, want)
		}
	})
}
