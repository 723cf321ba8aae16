package agentcore_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/a2agate/gateway/internal/agentcore"
	"github.com/a2agate/gateway/internal/agenttest"
)

// lifecycle is the expected stream and ending of a behaviour, in neutral
// state names.
type lifecycle struct {
	name, text string
	// events are the stream's event kinds, a status update written as its
	// state.
	events     []string
	final      string
	statusText string
}

// lifecycles are the behaviours' lifecycles.
var lifecycles = []lifecycle{
	{"complete", "Reset my password", []string{"task", "working", "artifact", "completed"}, "completed", ""},
	{"fail", "FAIL loudly", []string{"task", "working", "failed"}, "failed", `Failed as asked: the message starts with "fail".`},
	{"input", "Input needed", []string{"task", "working", "input-required"}, "input-required", agentcore.Question},
}

// forEachLifecycle runs test as a parallel subtest per dialect and
// lifecycle, a dialect's lifecycles against one agent.
func forEachLifecycle(t *testing.T, test func(t *testing.T, d dialect, srv *httptest.Server, tt lifecycle)) {
	forEachAgent(t, func(t *testing.T, d dialect, srv *httptest.Server) {
		for _, tt := range lifecycles {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				test(t, d, srv, tt)
			})
		}
	})
}

func TestBlockingSendReturnsTheSettledTask(t *testing.T) {
	forEachLifecycle(t, func(t *testing.T, d dialect, srv *httptest.Server, tt lifecycle) {
		msg := d.userMessage(tt.text)
		msg["contextId"] = "ctx-" + tt.name
		res := d.task(t, d.Call(t, srv, d.send, obj{"message": msg}).(obj))
		d.wantState(t, "blocking send", res, tt.final)
		if res["contextId"] != "ctx-"+tt.name {
			t.Fatalf("contextId = %v, want the caller's", res["contextId"])
		}
		first := agenttest.Path(t, res, "history", 0).(obj)
		if first["messageId"] != msg["messageId"] || first["taskId"] != res["id"] || first["contextId"] != res["contextId"] || first["role"] != d.user {
			t.Fatalf("history[0] = %v, want the user message bound to the task", first)
		}
		status := agenttest.Path(t, res, "status").(obj)
		if tt.statusText == "" {
			if _, ok := status["message"]; ok {
				t.Fatalf("unexpected status message %v", status["message"])
			}
			return
		}
		if got := agenttest.Str(t, status, "message", "parts", 0, "text"); got != tt.statusText {
			t.Fatalf("status message = %q, want %q", got, tt.statusText)
		}
		if agenttest.Str(t, status, "message", "role") != d.agent || agenttest.Str(t, status, "message", "taskId") != res["id"] {
			t.Fatalf("status message = %v", status["message"])
		}
		// The agent's status message is kept in the history too.
		agenttest.WantJSON(t, "last history message", agenttest.Path(t, res, "history", 1), status["message"])
	})
}

func TestStreamEventOrder(t *testing.T) {
	forEachLifecycle(t, func(t *testing.T, d dialect, srv *httptest.Server, tt lifecycle) {
		s := d.OpenStream(t, srv, d.stream, d.sendText(tt.text))
		var got []string
		var taskID, contextID string
		for {
			ev, ok := s.Next()
			if !ok {
				break
			}
			kind, inner := d.event(t, ev)
			switch kind {
			case "task":
				taskID, contextID = agenttest.Str(t, inner, "id"), agenttest.Str(t, inner, "contextId")
				d.wantState(t, "first task event", inner, "submitted")
			case "status":
				state := agenttest.Str(t, inner, "status", "state")
				d.wantFinal(t, inner, state == d.states[tt.final])
				for neutral, name := range d.states {
					if name == state {
						kind = neutral
					}
				}
			case "artifact":
				if agenttest.Str(t, inner, "artifact", "parts", 0, "text") != "done: "+tt.text || inner["lastChunk"] != true {
					t.Fatalf("artifact update = %v", inner)
				}
			}
			if kind != "task" && (inner["taskId"] != taskID || inner["contextId"] != contextID) {
				t.Fatalf("%s event names task %v/%v, want %s/%s", kind, inner["taskId"], inner["contextId"], taskID, contextID)
			}
			got = append(got, kind)
		}
		if strings.Join(got, " ") != strings.Join(tt.events, " ") {
			t.Fatalf("events = %v, want %v", got, tt.events)
		}
	})
}

func TestWaitRunsUntilCanceled(t *testing.T) {
	forEachAgent(t, func(t *testing.T, d dialect, srv *httptest.Server) {
		s := d.OpenStream(t, srv, d.stream, d.sendText("wait for it"))
		snap := d.next(t, s, "task")
		d.nextStatus(t, s, "working", false)

		canceled := d.Call(t, srv, d.cancel, obj{"id": snap["id"]}).(obj)
		if agenttest.Str(t, canceled, "status", "state") != d.states["canceled"] || canceled["id"] != snap["id"] {
			t.Fatalf("cancel result = %v, want the canceled task", canceled)
		}
		d.nextStatus(t, s, "canceled", true)
		s.WantEnd()

		e := d.CallErr(t, srv, d.cancel, obj{"id": snap["id"]})
		agenttest.WantCode(t, e, agentcore.CodeTaskNotCancelable)
		agenttest.WantJSON(t, "error detail", d.detail(t, e), obj{"taskId": snap["id"], "state": d.states["canceled"]})
	})
}

func TestHoldCompletesWaitAndStreamsUnbuffered(t *testing.T) {
	forEach(t, func(t *testing.T, d dialect) {
		hold := make(chan struct{})
		_, srv := d.start(t, agentcore.Options{Hold: hold})
		s := d.OpenStream(t, srv, d.stream, d.sendText("wait and see"))
		d.next(t, s, "task")
		// The working update arrives while the task is held: each event is
		// flushed as it happens, not when the stream ends.
		d.nextStatus(t, s, "working", false)
		close(hold)
		d.next(t, s, "artifact")
		d.nextStatus(t, s, "completed", true)
		s.WantEnd()
	})
}

func TestBlockingSendWaitsForTheHold(t *testing.T) {
	forEach(t, func(t *testing.T, d dialect) {
		hold := make(chan struct{})
		_, srv := d.start(t, agentcore.Options{Hold: hold})
		close(hold)
		// Returning before the hold had released the task would show working.
		res := d.task(t, d.Call(t, srv, d.send, d.sendText("wait a bit")).(obj))
		d.wantState(t, "send", res, "completed")
	})
}

func TestContinuationErrors(t *testing.T) {
	forEachAgent(t, func(t *testing.T, d dialect, srv *httptest.Server) {
		done := d.task(t, d.Call(t, srv, d.send, d.sendText("finish")).(obj))
		asking := d.task(t, d.Call(t, srv, d.send, d.sendText("input")).(obj))
		running := d.task(t, d.Call(t, srv, d.send, d.sendNow(d.userMessage("wait"))).(obj))

		followUp := func(taskID any, contextID string) obj {
			m := d.userMessage("more")
			m["taskId"] = taskID
			if contextID != "" {
				m["contextId"] = contextID
			}
			return obj{"message": m}
		}
		tests := []struct {
			name   string
			params obj
			code   int
			detail obj
		}{
			{"unknown task", followUp("nope", ""), agentcore.CodeTaskNotFound, obj{"taskId": "nope"}},
			{"terminal task", followUp(done["id"], ""), d.notAccepting, obj{"taskId": done["id"], "state": d.states["completed"]}},
			{"running task", followUp(running["id"], ""), d.notAccepting, nil},
			{"other context", followUp(asking["id"], "elsewhere"), agentcore.CodeInvalidParams, obj{"taskId": asking["id"], "contextId": asking["contextId"]}},
		}
		for _, tt := range tests {
			for _, method := range []string{d.send, d.stream} {
				e := d.CallErr(t, srv, method, tt.params)
				agenttest.WantCode(t, e, tt.code)
				detail, _ := d.detail(t, e).(obj)
				if tt.detail == nil { // submitted or working, depending on timing
					if st := detail["state"]; detail["taskId"] != running["id"] || (st != d.states["submitted"] && st != d.states["working"]) {
						t.Fatalf("%s %s detail = %v", tt.name, method, detail)
					}
					continue
				}
				agenttest.WantJSON(t, tt.name+" "+method+" detail", detail, tt.detail)
			}
		}
		// The rejected follow-ups changed nothing.
		still := d.Call(t, srv, d.get, obj{"id": asking["id"]}).(obj)
		if st := agenttest.Str(t, still, "status", "state"); st != d.states["input-required"] || len(agenttest.Path(t, still, "history").([]any)) != 2 {
			t.Fatalf("task after rejected follow-ups: state %q history %v", st, still["history"])
		}
	})
}

func TestInputRequiredThenFollowUp(t *testing.T) {
	forEachAgent(t, func(t *testing.T, d dialect, srv *httptest.Server) {
		for _, streaming := range []bool{false, true} {
			first := d.task(t, d.Call(t, srv, d.send, d.sendText("input please")).(obj))
			d.wantState(t, "first turn", first, "input-required")
			reply := d.userMessage("Ada Lovelace")
			reply["taskId"] = first["id"]

			var done obj
			if streaming {
				s := d.OpenStream(t, srv, d.stream, obj{"message": reply})
				d.wantState(t, "first follow-up event", d.next(t, s, "task"), "working")
				d.next(t, s, "artifact")
				d.nextStatus(t, s, "completed", true)
				s.WantEnd()
				done = d.Call(t, srv, d.get, obj{"id": first["id"]}).(obj)
			} else {
				done = d.task(t, d.Call(t, srv, d.send, obj{"message": reply}).(obj))
			}

			d.wantState(t, "after the follow-up", done, "completed")
			if got := agenttest.Str(t, done, "artifacts", 0, "parts", 0, "text"); !strings.Contains(got, "Ada Lovelace") {
				t.Fatalf("artifact text %q does not quote the follow-up", got)
			}
			var roles, texts []string
			for _, m := range agenttest.Path(t, done, "history").([]any) {
				roles = append(roles, agenttest.Str(t, m, "role"))
				texts = append(texts, agenttest.Str(t, m, "parts", 0, "text"))
			}
			wantRoles := []string{d.user, d.agent, d.user}
			wantTexts := []string{"input please", agentcore.Question, "Ada Lovelace"}
			if strings.Join(roles, ",") != strings.Join(wantRoles, ",") || strings.Join(texts, "|") != strings.Join(wantTexts, "|") {
				t.Fatalf("history roles %v texts %v", roles, texts)
			}
			if agenttest.Str(t, done, "history", 2, "contextId") != first["contextId"] {
				t.Fatal("follow-up message not bound to the task's context")
			}
		}
	})
}

func TestQuestionGetsADirectMessage(t *testing.T) {
	forEachAgent(t, func(t *testing.T, d dialect, srv *httptest.Server) {

		msg := d.userMessage("  Is the VPN up? ")
		msg["contextId"] = "ctx-q"
		reply := d.reply(t, d.Call(t, srv, d.send, obj{"message": msg}).(obj))
		agenttest.WantJSON(t, "reply", reply, d.agentMessage(reply["messageId"], "You asked: Is the VPN up?", "ctx-q"))
		if reply["messageId"] == "" {
			t.Fatal("reply without a messageId")
		}

		// Without a contextId the agent makes one up.
		reply = d.reply(t, d.Call(t, srv, d.send, d.sendText("WHY?")).(obj))
		if agenttest.Str(t, reply, "contextId") == "" {
			t.Fatal("reply without a contextId")
		}

		// A question sends exactly one message event on a stream.
		s := d.OpenStream(t, srv, d.stream, d.sendText("Streaming?"))
		if got := agenttest.Str(t, d.next(t, s, "message"), "parts", 0, "text"); got != "You asked: Streaming?" {
			t.Fatalf("streamed reply = %q", got)
		}
		s.WantEnd()
	})
}

func TestSendValidation(t *testing.T) {
	forEachAgent(t, func(t *testing.T, d dialect, srv *httptest.Server) {
		withConfig := func(key string, v any) func(params, _ obj) {
			return func(params, _ obj) {
				cfg := d.sendNow(nil)["configuration"].(obj)
				cfg[key] = v
				params["configuration"] = cfg
			}
		}
		tests := append([]badSend{
			{"no message", func(p, _ obj) { delete(p, "message") }, "message: required"},
			{"other dialect's role", func(_, m obj) { m["role"] = d.foreignUser }, "message.role"},
			{"agent role", func(_, m obj) { m["role"] = d.agent }, "message.role"},
			{"no messageId", func(_, m obj) { delete(m, "messageId") }, "message.messageId"},
			{"no parts", parts(), "message.parts"},
			{"negative historyLength", withConfig("historyLength", -1), "historyLength"},
			{"relative push url", withConfig(d.pushKey, obj{"url": "/hook"}), d.pushKey + ".url"},
		}, d.badSends...)
		invalidParams := func(t *testing.T, e obj) { d.wantCode(t, e, agentcore.CodeInvalidParams) }
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				msg := d.userMessage("hello")
				params := obj{"message": msg}
				tt.edit(params, msg)
				d.WantRefused(t, srv, []string{d.send, d.stream}, invalidParams, params, tt.detail)
			})
		}
	})
}

func TestCompletedTaskCarriesTheResultArtifact(t *testing.T) {
	forEachAgent(t, func(t *testing.T, d dialect, srv *httptest.Server) {
		msg := d.userMessage("Echo these")
		msg["parts"] = append(msg["parts"].([]any), d.echoParts...)
		res := d.task(t, d.Call(t, srv, d.send, obj{"message": msg}).(obj))
		agenttest.WantJSON(t, "artifacts", res["artifacts"], []any{obj{
			"artifactId": agenttest.Str(t, res, "artifacts", 0, "artifactId"),
			"name":       "result",
			"parts":      append([]any{d.textPart("done: Echo these")}, d.echoParts...),
		}})
	})
}

func TestSendReturningAtOnce(t *testing.T) {
	forEach(t, func(t *testing.T, d dialect) {
		hold := make(chan struct{})
		_, srv := d.start(t, agentcore.Options{Hold: hold})
		res := d.task(t, d.Call(t, srv, d.send, d.sendNow(d.userMessage("wait for me"))).(obj))
		d.wantState(t, "send returning at once", res, "submitted")
		if _, ok := res["artifacts"]; ok {
			t.Fatal("a submitted task has artifacts")
		}

		// The task runs on: following it shows it complete once released.
		s := d.OpenStream(t, srv, d.subscribe, obj{"id": res["id"]})
		d.next(t, s, "task")
		close(hold)
		var last string
		for {
			ev, ok := s.Next()
			if !ok {
				break
			}
			if kind, inner := d.event(t, ev); kind == "status" {
				last = agenttest.Str(t, inner, "status", "state")
			}
		}
		if last != d.states["completed"] {
			t.Fatalf("last state seen = %q, want completed", last)
		}
	})
}

func TestSendHistoryLength(t *testing.T) {
	forEachAgent(t, func(t *testing.T, d dialect, srv *httptest.Server) {
		zero := 0 // no history key at all
		if d.zeroHistoryAll {
			zero = 2
		}
		for _, tt := range []struct {
			length any
			want   int
		}{{nil, 2}, {0, zero}, {1, 1}, {5, 2}} {
			cfg := d.config()
			if tt.length != nil {
				cfg["historyLength"] = tt.length
			}
			task := d.task(t, d.Call(t, srv, d.send, obj{"message": d.userMessage("input x"), "configuration": cfg}).(obj))
			h, present := task["history"].([]any)
			if tt.want == 0 {
				if present {
					t.Fatalf("historyLength %v: history key present: %v", tt.length, task["history"])
				}
				continue
			}
			if len(h) != tt.want {
				t.Fatalf("historyLength %v: %d messages, want %d", tt.length, len(h), tt.want)
			}
			// The last ones are kept: the agent's question ends it.
			if last := h[len(h)-1]; agenttest.Str(t, last, "role") != d.agent {
				t.Fatalf("historyLength %v: last message %v, want the agent's question", tt.length, last)
			}
		}
	})
}
