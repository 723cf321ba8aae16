package agent10

import (
	"testing"
)

func TestGetTask(t *testing.T) {
	t.Parallel()
	_, srv := startAgent(t, Options{})
	first := path(t, call(t, srv, "SendMessage", send("input")), "task").(obj)
	reply := userMessage("Grace")
	reply["taskId"] = first["id"]
	done := path(t, call(t, srv, "SendMessage", obj{"message": reply}), "task").(obj)

	got := call(t, srv, "GetTask", obj{"id": first["id"], "tenant": "t"}).(obj)
	wantJSON(t, "GetTask", got, done) // the bare Task, no wrapper

	tests := []struct {
		name   string
		length any
		want   []any // history texts; nil: no history key at all
	}{
		{"absent", nil, []any{"input", question, "Grace"}},
		{"zero means none", 0, nil},
		{"last one", 1, []any{"Grace"}},
		{"last two", 2, []any{question, "Grace"}},
		{"more than there is", 10, []any{"input", question, "Grace"}},
	}
	for _, tt := range tests {
		params := obj{"id": first["id"]}
		if tt.length != nil {
			params["historyLength"] = tt.length
		}
		res := call(t, srv, "GetTask", params).(obj)
		h, present := res["history"]
		if tt.want == nil {
			if present {
				t.Fatalf("%s: history = %v, want the key omitted", tt.name, h)
			}
			continue
		}
		var texts []any
		for _, m := range h.([]any) {
			texts = append(texts, str(t, m, "parts", 0, "text"))
		}
		wantJSON(t, tt.name, texts, tt.want)
	}

	md := wantCode(t, callErr(t, srv, "GetTask", obj{"id": "missing"}), codeTaskNotFound)
	wantJSON(t, "metadata", md, obj{"taskId": "missing"})
	wantCode(t, callErr(t, srv, "GetTask", obj{}), codeInvalidParams)
	wantCode(t, callErr(t, srv, "GetTask", obj{"id": first["id"], "historyLength": -1}), codeInvalidParams)
}

func TestCancelTask(t *testing.T) {
	t.Parallel()
	_, srv := startAgent(t, Options{})

	asking := path(t, call(t, srv, "SendMessage", send("input")), "task").(obj)
	res := call(t, srv, "CancelTask", obj{"id": asking["id"], "metadata": obj{"why": "test"}}).(obj)
	if st := str(t, res, "status", "state"); st != "TASK_STATE_CANCELED" {
		t.Fatalf("canceling an input-required task: state %q", st)
	}

	for _, text := range []string{"finish", "fail"} {
		done := path(t, call(t, srv, "SendMessage", send(text)), "task").(obj)
		md := wantCode(t, callErr(t, srv, "CancelTask", obj{"id": done["id"]}), codeTaskNotCancelable)
		wantJSON(t, "metadata", md, obj{"taskId": done["id"], "state": path(t, done, "status", "state")})
	}
	md := wantCode(t, callErr(t, srv, "CancelTask", obj{"id": "missing"}), codeTaskNotFound)
	wantJSON(t, "metadata", md, obj{"taskId": "missing"})
	wantCode(t, callErr(t, srv, "CancelTask", obj{}), codeInvalidParams)
}

func TestSubscribeToTask(t *testing.T) {
	t.Parallel()
	_, srv := startAgent(t, Options{})

	first := openStream(t, srv, "SendStreamingMessage", send("wait"))
	snap := first.NextOf("task")
	first.NextOf("statusUpdate") // working

	s := openStream(t, srv, "SubscribeToTask", obj{"id": snap["id"]})
	if ev := s.NextOf("task"); str(t, ev, "status", "state") != "TASK_STATE_WORKING" || ev["id"] != snap["id"] {
		t.Fatalf("first subscribe event = %v, want the working task", ev)
	}
	call(t, srv, "CancelTask", obj{"id": snap["id"]})
	for _, stream := range []*sse{s, first} {
		if st := str(t, stream.NextOf("statusUpdate"), "status", "state"); st != "TASK_STATE_CANCELED" {
			t.Fatalf("event after cancel: state %q", st)
		}
		stream.WantEnd()
	}

	// An interrupted task: the task event alone.
	asking := path(t, call(t, srv, "SendMessage", send("input")), "task").(obj)
	s = openStream(t, srv, "SubscribeToTask", obj{"id": asking["id"]})
	wantJSON(t, "task event", s.NextOf("task"), asking)
	s.WantEnd()

	// A terminal task cannot be subscribed to.
	done := path(t, call(t, srv, "SendMessage", send("finish")), "task").(obj)
	md := wantCode(t, callErr(t, srv, "SubscribeToTask", obj{"id": done["id"]}), codeUnsupportedOperation)
	wantJSON(t, "metadata", md, obj{"taskId": done["id"], "state": "TASK_STATE_COMPLETED"})

	md = wantCode(t, callErr(t, srv, "SubscribeToTask", obj{"id": "missing"}), codeTaskNotFound)
	wantJSON(t, "metadata", md, obj{"taskId": "missing"})
	wantCode(t, callErr(t, srv, "SubscribeToTask", obj{}), codeInvalidParams)
}
