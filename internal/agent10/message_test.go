package agent10

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestQuestionGetsADirectMessage(t *testing.T) {
	t.Parallel()
	_, srv := startAgent(t, Options{})

	msg := userMessage("  Is the VPN up? ")
	msg["contextId"] = "ctx-q"
	res := call(t, srv, "SendMessage", obj{"message": msg}).(obj)
	if len(res) != 1 {
		t.Fatalf("result = %v, want {\"message\": ...} alone", res)
	}
	reply := path(t, res, "message").(obj)
	wantJSON(t, "reply", reply, obj{
		"messageId": reply["messageId"],
		"role":      "ROLE_AGENT",
		"parts":     []any{obj{"text": "You asked: Is the VPN up?"}},
		"contextId": "ctx-q",
	})
	if reply["messageId"] == "" {
		t.Fatal("reply without a messageId")
	}

	res = call(t, srv, "SendMessage", send("WHY?")).(obj)
	if str(t, res, "message", "contextId") == "" {
		t.Fatal("reply without a contextId")
	}

	s := openStream(t, srv, "SendStreamingMessage", send("Streaming?"))
	if got := str(t, s.NextOf("message"), "parts", 0, "text"); got != "You asked: Streaming?" {
		t.Fatalf("streamed reply = %q", got)
	}
	s.WantEnd()
}

// lifecycles is the expected stream and ending of each behaviour.
var lifecycles = []struct {
	name, text string
	// events are the stream's wrapper keys, a status update written as its
	// state.
	events     []string
	final      string
	statusText string
}{
	{"complete", "Reset my password", []string{"task", "TASK_STATE_WORKING", "artifactUpdate", "TASK_STATE_COMPLETED"}, "TASK_STATE_COMPLETED", ""},
	{"fail", "FAIL loudly", []string{"task", "TASK_STATE_WORKING", "TASK_STATE_FAILED"}, "TASK_STATE_FAILED", `Failed as asked: the message starts with "fail".`},
	{"input", "Input needed", []string{"task", "TASK_STATE_WORKING", "TASK_STATE_INPUT_REQUIRED"}, "TASK_STATE_INPUT_REQUIRED", question},
}

func TestBlockingSendReturnsTheSettledTask(t *testing.T) {
	t.Parallel()
	_, srv := startAgent(t, Options{})
	for _, tt := range lifecycles {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			msg := userMessage(tt.text)
			msg["contextId"] = "ctx-" + tt.name
			out := call(t, srv, "SendMessage", obj{"message": msg}).(obj)
			if len(out) != 1 {
				t.Fatalf("result = %v, want {\"task\": ...} alone", out)
			}
			res := path(t, out, "task").(obj)
			if _, ok := res["kind"]; ok {
				t.Fatal("1.0 task has a kind")
			}
			if got := str(t, res, "status", "state"); got != tt.final {
				t.Fatalf("state = %q, want %q", got, tt.final)
			}
			if res["contextId"] != "ctx-"+tt.name {
				t.Fatalf("contextId = %v, want the caller's", res["contextId"])
			}
			first := path(t, res, "history", 0).(obj)
			if first["messageId"] != msg["messageId"] || first["taskId"] != res["id"] || first["contextId"] != res["contextId"] || first["role"] != "ROLE_USER" {
				t.Fatalf("history[0] = %v, want the user message bound to the task", first)
			}
			status := path(t, res, "status").(obj)
			if tt.statusText == "" {
				if _, ok := status["message"]; ok {
					t.Fatalf("unexpected status message %v", status["message"])
				}
				return
			}
			if got := str(t, status, "message", "parts", 0, "text"); got != tt.statusText {
				t.Fatalf("status message = %q, want %q", got, tt.statusText)
			}
			if str(t, status, "message", "role") != "ROLE_AGENT" {
				t.Fatalf("status message = %v", status["message"])
			}
			wantJSON(t, "last history message", path(t, res, "history", 1), status["message"])
		})
	}
}

func TestCompletedTaskCarriesTheResultArtifact(t *testing.T) {
	t.Parallel()
	_, srv := startAgent(t, Options{})
	raw := obj{"raw": "aGVsbG8=", "mediaType": "text/plain", "filename": "a.txt"}
	link := obj{"url": "https://example.com/y.pdf", "mediaType": "application/pdf", "metadata": obj{"m": 1}}
	data := obj{"data": obj{"k": []any{1, "two", nil}, "big": json.Number("12345678901234567890")}}
	list := obj{"data": []any{1, 2}, "mediaType": "application/json"}
	null := obj{"data": nil}

	res := call(t, srv, "SendMessage", obj{"message": userMessage("Echo these", raw, link, data, list, null)}).(obj)
	wantJSON(t, "artifacts", path(t, res, "task", "artifacts"), []any{obj{
		"artifactId": str(t, res, "task", "artifacts", 0, "artifactId"),
		"name":       "result",
		"parts":      []any{obj{"text": "done: Echo these"}, raw, link, data, list, null},
	}})
}

func TestRawBytesAreReencodedAsStandardBase64(t *testing.T) {
	t.Parallel()
	_, srv := startAgent(t, Options{})
	// URL-safe and unpadded, both of which ProtoJSON parsers accept.
	res := call(t, srv, "SendMessage", obj{"message": userMessage("bytes", obj{"raw": "-_8"})}).(obj)
	if got := str(t, res, "task", "artifacts", 0, "parts", 1, "raw"); got != "+/8=" {
		t.Fatalf("raw = %q, want +/8=", got)
	}
	e := callErr(t, srv, "SendMessage", obj{"message": userMessage("bytes", obj{"raw": "not base64!"})})
	wantCode(t, e, codeInvalidParams)
}

func TestStreamEventOrder(t *testing.T) {
	t.Parallel()
	_, srv := startAgent(t, Options{})
	for _, tt := range lifecycles {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := openStream(t, srv, "SendStreamingMessage", send(tt.text))
			var got []string
			var taskID, contextID string
			for {
				ev, ok := s.Next()
				if !ok {
					break
				}
				var key string
				var inner obj
				for k, v := range ev {
					key, inner = k, v.(obj)
				}
				switch key {
				case "task":
					taskID, contextID = str(t, inner, "id"), str(t, inner, "contextId")
					if st := str(t, inner, "status", "state"); st != "TASK_STATE_SUBMITTED" {
						t.Fatalf("first task event state = %q", st)
					}
				case "statusUpdate":
					key = str(t, inner, "status", "state")
					if _, ok := inner["final"]; ok {
						t.Fatalf("1.0 status update has final: %v", inner)
					}
				case "artifactUpdate":
					if str(t, inner, "artifact", "parts", 0, "text") != "done: "+tt.text || inner["lastChunk"] != true {
						t.Fatalf("artifact update = %v", inner)
					}
				}
				if key != "task" && (inner["taskId"] != taskID || inner["contextId"] != contextID) {
					t.Fatalf("%s event names task %v/%v, want %s/%s", key, inner["taskId"], inner["contextId"], taskID, contextID)
				}
				got = append(got, key)
			}
			if strings.Join(got, " ") != strings.Join(tt.events, " ") {
				t.Fatalf("events = %v, want %v", got, tt.events)
			}
		})
	}
}

func TestReturnImmediately(t *testing.T) {
	t.Parallel()
	_, srv := startAgent(t, Options{})
	res := call(t, srv, "SendMessage", obj{
		"message":       userMessage("Later please"),
		"configuration": obj{"returnImmediately": true},
	}).(obj)
	task := path(t, res, "task").(obj)
	if st := str(t, task, "status", "state"); st != "TASK_STATE_SUBMITTED" {
		t.Fatalf("state = %q, want submitted", st)
	}
	if _, ok := task["artifacts"]; ok {
		t.Fatal("a submitted task has artifacts")
	}
}

func TestInputRequiredThenFollowUp(t *testing.T) {
	t.Parallel()
	_, srv := startAgent(t, Options{})
	for _, streaming := range []bool{false, true} {
		first := path(t, call(t, srv, "SendMessage", send("input please")), "task").(obj)
		if st := str(t, first, "status", "state"); st != "TASK_STATE_INPUT_REQUIRED" {
			t.Fatalf("state = %q, want input-required", st)
		}
		reply := userMessage("Ada Lovelace")
		reply["taskId"] = first["id"]

		var done obj
		if streaming {
			s := openStream(t, srv, "SendStreamingMessage", obj{"message": reply})
			if st := str(t, s.NextOf("task"), "status", "state"); st != "TASK_STATE_WORKING" {
				t.Fatalf("first follow-up event state = %q, want working", st)
			}
			s.NextOf("artifactUpdate")
			if st := str(t, s.NextOf("statusUpdate"), "status", "state"); st != "TASK_STATE_COMPLETED" {
				t.Fatalf("last follow-up event state = %q, want completed", st)
			}
			s.WantEnd()
			done = call(t, srv, "GetTask", obj{"id": first["id"]}).(obj)
		} else {
			done = path(t, call(t, srv, "SendMessage", obj{"message": reply}), "task").(obj)
		}

		if st := str(t, done, "status", "state"); st != "TASK_STATE_COMPLETED" {
			t.Fatalf("follow-up state = %q, want completed", st)
		}
		if got := str(t, done, "artifacts", 0, "parts", 0, "text"); !strings.Contains(got, "Ada Lovelace") {
			t.Fatalf("artifact text %q does not quote the follow-up", got)
		}
		var roles, texts []string
		for _, m := range path(t, done, "history").([]any) {
			roles = append(roles, str(t, m, "role"))
			texts = append(texts, str(t, m, "parts", 0, "text"))
		}
		want := []string{"input please", question, "Ada Lovelace"}
		if strings.Join(roles, ",") != "ROLE_USER,ROLE_AGENT,ROLE_USER" || strings.Join(texts, "|") != strings.Join(want, "|") {
			t.Fatalf("history roles %v texts %v", roles, texts)
		}
	}
}

func TestWaitRunsUntilCanceled(t *testing.T) {
	t.Parallel()
	_, srv := startAgent(t, Options{})
	s := openStream(t, srv, "SendStreamingMessage", send("wait for it"))
	snap := s.NextOf("task")
	if st := str(t, s.NextOf("statusUpdate"), "status", "state"); st != "TASK_STATE_WORKING" {
		t.Fatalf("second event state = %q, want working", st)
	}

	canceled := call(t, srv, "CancelTask", obj{"id": snap["id"]}).(obj)
	if str(t, canceled, "status", "state") != "TASK_STATE_CANCELED" || canceled["id"] != snap["id"] {
		t.Fatalf("cancel result = %v, want the bare canceled task", canceled)
	}
	if st := str(t, s.NextOf("statusUpdate"), "status", "state"); st != "TASK_STATE_CANCELED" {
		t.Fatalf("event after cancel state = %q", st)
	}
	s.WantEnd()

	md := wantCode(t, callErr(t, srv, "CancelTask", obj{"id": snap["id"]}), codeTaskNotCancelable)
	wantJSON(t, "metadata", md, obj{"taskId": snap["id"], "state": "TASK_STATE_CANCELED"})
}

func TestHoldCompletesWaitAndStreamsUnbuffered(t *testing.T) {
	t.Parallel()
	hold := make(chan struct{})
	_, srv := startAgent(t, Options{Hold: hold})
	s := openStream(t, srv, "SendStreamingMessage", send("wait and see"))
	s.NextOf("task")
	// The working update arrives while the task is held: each event is
	// flushed as it happens, not when the stream ends.
	s.NextOf("statusUpdate")
	close(hold)
	s.NextOf("artifactUpdate")
	if st := str(t, s.NextOf("statusUpdate"), "status", "state"); st != "TASK_STATE_COMPLETED" {
		t.Fatalf("last state = %q, want completed", st)
	}
	s.WantEnd()
}

func TestBlockingSendWaitsForTheHold(t *testing.T) {
	t.Parallel()
	hold := make(chan struct{})
	_, srv := startAgent(t, Options{Hold: hold})
	close(hold)
	res := call(t, srv, "SendMessage", send("wait a bit")).(obj)
	if st := str(t, res, "task", "status", "state"); st != "TASK_STATE_COMPLETED" {
		t.Fatalf("state = %q, want completed", st)
	}
}

func TestSendHistoryLength(t *testing.T) {
	t.Parallel()
	_, srv := startAgent(t, Options{})
	for _, tt := range []struct {
		length any
		want   int
	}{{nil, 2}, {0, 0}, {1, 1}, {5, 2}} {
		cfg := obj{}
		if tt.length != nil {
			cfg["historyLength"] = tt.length
		}
		task := path(t, call(t, srv, "SendMessage", obj{"message": userMessage("input x"), "configuration": cfg}), "task").(obj)
		h, ok := task["history"].([]any)
		if tt.want == 0 {
			if _, present := task["history"]; present {
				t.Fatalf("historyLength 0: history key present: %v", task["history"])
			}
			continue
		}
		if !ok || len(h) != tt.want {
			t.Fatalf("historyLength %v: %d messages, want %d", tt.length, len(h), tt.want)
		}
	}
}

func TestContinuationErrors(t *testing.T) {
	t.Parallel()
	_, srv := startAgent(t, Options{})
	done := path(t, call(t, srv, "SendMessage", send("finish")), "task").(obj)
	asking := path(t, call(t, srv, "SendMessage", send("input")), "task").(obj)
	running := path(t, call(t, srv, "SendMessage", obj{
		"message": userMessage("wait"), "configuration": obj{"returnImmediately": true},
	}), "task").(obj)

	followUp := func(taskID any, contextID string) obj {
		m := userMessage("more")
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
		md     obj
	}{
		{"unknown task", followUp("nope", ""), codeTaskNotFound, obj{"taskId": "nope"}},
		{"terminal task", followUp(done["id"], ""), codeUnsupportedOperation, obj{"taskId": done["id"], "state": "TASK_STATE_COMPLETED"}},
		{"running task", followUp(running["id"], ""), codeUnsupportedOperation, nil},
		{"other context", followUp(asking["id"], "elsewhere"), codeInvalidParams, obj{"taskId": asking["id"], "contextId": asking["contextId"]}},
	}
	for _, tt := range tests {
		for _, method := range []string{"SendMessage", "SendStreamingMessage"} {
			md := wantCode(t, callErr(t, srv, method, tt.params), tt.code)
			if tt.md == nil { // submitted or working, depending on timing
				if md["taskId"] != running["id"] || !strings.HasPrefix(md["state"].(string), "TASK_STATE_") {
					t.Fatalf("%s %s metadata = %v", tt.name, method, md)
				}
				continue
			}
			wantJSON(t, tt.name+" "+method+" metadata", md, tt.md)
		}
	}
	still := call(t, srv, "GetTask", obj{"id": asking["id"]}).(obj)
	if st := str(t, still, "status", "state"); st != "TASK_STATE_INPUT_REQUIRED" || len(path(t, still, "history").([]any)) != 2 {
		t.Fatalf("task after rejected follow-ups: state %q history %v", st, still["history"])
	}
}

func TestSendValidation(t *testing.T) {
	t.Parallel()
	_, srv := startAgent(t, Options{})
	with := func(edit func(m obj)) obj {
		m := userMessage("hello")
		edit(m)
		return obj{"message": m}
	}
	tests := []struct {
		name   string
		params obj
		detail string
	}{
		{"no message", obj{}, "message: required"},
		{"0.x role", with(func(m obj) { m["role"] = "user" }), "message.role"},
		{"agent role", with(func(m obj) { m["role"] = "ROLE_AGENT" }), "message.role"},
		{"numeric role", with(func(m obj) { m["role"] = 1 }), "message.role"},
		{"no messageId", with(func(m obj) { delete(m, "messageId") }), "message.messageId"},
		{"no parts", with(func(m obj) { m["parts"] = []any{} }), "message.parts"},
		{"empty part", with(func(m obj) { m["parts"] = []any{obj{"mediaType": "text/plain"}} }), "message.parts[0]"},
		{"two contents", with(func(m obj) { m["parts"] = []any{obj{"text": "a", "url": "https://x"}} }), "message.parts[0]"},
		{"metadata not an object", with(func(m obj) { m["metadata"] = "x" }), "must be a JSON object"},
		{"negative historyLength", obj{"message": userMessage("x"), "configuration": obj{"historyLength": -1}}, "historyLength"},
		{"relative push url", obj{"message": userMessage("x"), "configuration": obj{
			"taskPushNotificationConfig": obj{"url": "/hook"},
		}}, "taskPushNotificationConfig.url"},
		{"push auth without scheme", obj{"message": userMessage("x"), "configuration": obj{
			"taskPushNotificationConfig": obj{"url": "https://x", "authentication": obj{"credentials": "c"}},
		}}, "authentication.scheme"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, method := range []string{"SendMessage", "SendStreamingMessage"} {
				e := callErr(t, srv, method, tt.params)
				wantCode(t, e, codeInvalidParams)
				if msg := e["message"].(string); !strings.Contains(msg, tt.detail) {
					t.Fatalf("%s: message %q does not mention %q", method, msg, tt.detail)
				}
			}
		})
	}
}
