package legacyagent

import (
	"testing"
)

func TestTasksGet(t *testing.T) {
	t.Parallel()
	_, srv := startAgent(t, Options{})
	first := call(t, srv, "message/send", send("input")).(obj)
	reply := userMessage("Grace")
	reply["taskId"] = first["id"]
	done := call(t, srv, "message/send", obj{"message": reply}).(obj)

	got := call(t, srv, "tasks/get", obj{"id": first["id"], "metadata": obj{"ignored": true}}).(obj)
	wantJSON(t, "tasks/get", got, done)

	tests := []struct {
		name     string
		length   any
		wantLast []string
	}{
		{"absent", nil, []string{"input", question, "Grace"}},
		{"zero means all", 0, []string{"input", question, "Grace"}},
		{"last one", 1, []string{"Grace"}},
		{"last two", 2, []string{question, "Grace"}},
		{"more than there is", 10, []string{"input", question, "Grace"}},
	}
	for _, tt := range tests {
		params := obj{"id": first["id"]}
		if tt.length != nil {
			params["historyLength"] = tt.length
		}
		res := call(t, srv, "tasks/get", params).(obj)
		var texts []any
		for _, m := range path(t, res, "history").([]any) {
			texts = append(texts, str(t, m, "parts", 0, "text"))
		}
		want := make([]any, len(tt.wantLast))
		for i, s := range tt.wantLast {
			want[i] = s
		}
		wantJSON(t, tt.name, texts, want)
	}

	e := callErr(t, srv, "tasks/get", obj{"id": "missing"})
	wantCode(t, e, codeTaskNotFound)
	wantJSON(t, "not found data", e["data"], obj{"taskId": "missing"})
	wantCode(t, callErr(t, srv, "tasks/get", obj{}), codeInvalidParams)
	wantCode(t, callErr(t, srv, "tasks/get", obj{"id": first["id"], "historyLength": -1}), codeInvalidParams)
}

func TestTasksCancel(t *testing.T) {
	t.Parallel()
	_, srv := startAgent(t, Options{})

	asking := call(t, srv, "message/send", send("input")).(obj)
	res := call(t, srv, "tasks/cancel", obj{"id": asking["id"]}).(obj)
	if st := str(t, res, "status", "state"); st != "canceled" {
		t.Fatalf("canceling an input-required task: state %q", st)
	}
	if got := call(t, srv, "tasks/get", obj{"id": asking["id"]}).(obj); str(t, got, "status", "state") != "canceled" {
		t.Fatal("the cancel did not stick")
	}

	for _, text := range []string{"finish", "fail"} {
		done := call(t, srv, "message/send", send(text)).(obj)
		e := callErr(t, srv, "tasks/cancel", obj{"id": done["id"]})
		wantCode(t, e, codeTaskNotCancelable)
		wantJSON(t, "data", e["data"], obj{"taskId": done["id"], "state": done["status"].(obj)["state"]})
	}
	e := callErr(t, srv, "tasks/cancel", obj{"id": "missing"})
	wantCode(t, e, codeTaskNotFound)
	wantJSON(t, "data", e["data"], obj{"taskId": "missing"})
	wantCode(t, callErr(t, srv, "tasks/cancel", obj{}), codeInvalidParams)
}

func TestTasksResubscribe(t *testing.T) {
	t.Parallel()
	_, srv := startAgent(t, Options{})

	// A running task: the Task first, then its updates to the end.
	first := openStream(t, srv, "message/stream", send("wait"))
	snap := first.MustNext()
	first.MustNext() // working

	s := openStream(t, srv, "tasks/resubscribe", obj{"id": snap["id"]})
	if ev := s.MustNext(); ev["kind"] != "task" || str(t, ev, "status", "state") != "working" || ev["id"] != snap["id"] {
		t.Fatalf("first resubscribe event = %v, want the working task", ev)
	}
	call(t, srv, "tasks/cancel", obj{"id": snap["id"]})
	for _, stream := range []*sse{s, first} {
		if ev := stream.MustNext(); path(t, ev, "status", "state") != "canceled" || ev["final"] != true {
			t.Fatalf("event after cancel = %v", ev)
		}
		stream.WantEnd()
	}

	// A terminal task, and an interrupted one: the Task event alone.
	for _, text := range []string{"finish", "input"} {
		res := call(t, srv, "message/send", send(text)).(obj)
		s := openStream(t, srv, "tasks/resubscribe", obj{"id": res["id"]})
		wantJSON(t, text+" task event", s.MustNext(), res)
		s.WantEnd()
	}

	e := callErr(t, srv, "tasks/resubscribe", obj{"id": "missing"})
	wantCode(t, e, codeTaskNotFound)
	wantJSON(t, "data", e["data"], obj{"taskId": "missing"})
}
