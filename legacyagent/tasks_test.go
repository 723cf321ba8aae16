package legacyagent

import (
	"testing"

	"github.com/a2agate/gateway/internal/agentcore"
	"github.com/a2agate/gateway/internal/agenttest"
)

func TestTasksGet(t *testing.T) {
	t.Parallel()
	_, srv := startAgent(t, Options{})
	first := client.Call(t, srv, "message/send", send("input")).(obj)
	reply := userMessage("Grace")
	reply["taskId"] = first["id"]
	done := client.Call(t, srv, "message/send", obj{"message": reply}).(obj)

	got := client.Call(t, srv, "tasks/get", obj{"id": first["id"], "metadata": obj{"ignored": true}}).(obj)
	agenttest.WantJSON(t, "tasks/get", got, done)

	tests := []struct {
		name     string
		length   any
		wantLast []string
	}{
		{"absent", nil, []string{"input", agentcore.Question, "Grace"}},
		{"zero means all", 0, []string{"input", agentcore.Question, "Grace"}},
		{"last one", 1, []string{"Grace"}},
		{"last two", 2, []string{agentcore.Question, "Grace"}},
		{"more than there is", 10, []string{"input", agentcore.Question, "Grace"}},
	}
	for _, tt := range tests {
		params := obj{"id": first["id"]}
		if tt.length != nil {
			params["historyLength"] = tt.length
		}
		res := client.Call(t, srv, "tasks/get", params).(obj)
		agenttest.WantJSON(t, tt.name, agenttest.FirstTexts(t, agenttest.Path(t, res, "history")), tt.wantLast)
	}

	e := client.CallErr(t, srv, "tasks/get", obj{"id": "missing"})
	agenttest.WantCode(t, e, agentcore.CodeTaskNotFound)
	agenttest.WantJSON(t, "not found data", e["data"], obj{"taskId": "missing"})
	agenttest.WantCode(t, client.CallErr(t, srv, "tasks/get", obj{}), agentcore.CodeInvalidParams)
	agenttest.WantCode(t, client.CallErr(t, srv, "tasks/get", obj{"id": first["id"], "historyLength": -1}), agentcore.CodeInvalidParams)
}

func TestTasksCancel(t *testing.T) {
	t.Parallel()
	_, srv := startAgent(t, Options{})

	asking := client.Call(t, srv, "message/send", send("input")).(obj)
	res := client.Call(t, srv, "tasks/cancel", obj{"id": asking["id"]}).(obj)
	if st := agenttest.Str(t, res, "status", "state"); st != "canceled" {
		t.Fatalf("canceling an input-required task: state %q", st)
	}
	if got := client.Call(t, srv, "tasks/get", obj{"id": asking["id"]}).(obj); agenttest.Str(t, got, "status", "state") != "canceled" {
		t.Fatal("the cancel did not stick")
	}

	for _, text := range []string{"finish", "fail"} {
		done := client.Call(t, srv, "message/send", send(text)).(obj)
		e := client.CallErr(t, srv, "tasks/cancel", obj{"id": done["id"]})
		agenttest.WantCode(t, e, agentcore.CodeTaskNotCancelable)
		agenttest.WantJSON(t, "data", e["data"], obj{"taskId": done["id"], "state": done["status"].(obj)["state"]})
	}
	e := client.CallErr(t, srv, "tasks/cancel", obj{"id": "missing"})
	agenttest.WantCode(t, e, agentcore.CodeTaskNotFound)
	agenttest.WantJSON(t, "data", e["data"], obj{"taskId": "missing"})
	agenttest.WantCode(t, client.CallErr(t, srv, "tasks/cancel", obj{}), agentcore.CodeInvalidParams)
}

func TestTasksResubscribe(t *testing.T) {
	t.Parallel()
	_, srv := startAgent(t, Options{})

	// A running task: the Task first, then its updates to the end.
	first := client.OpenStream(t, srv, "message/stream", send("wait"))
	snap := first.MustNext()
	first.MustNext() // working

	s := client.OpenStream(t, srv, "tasks/resubscribe", obj{"id": snap["id"]})
	if ev := s.MustNext(); ev["kind"] != "task" || agenttest.Str(t, ev, "status", "state") != "working" || ev["id"] != snap["id"] {
		t.Fatalf("first resubscribe event = %v, want the working task", ev)
	}
	client.Call(t, srv, "tasks/cancel", obj{"id": snap["id"]})
	for _, stream := range []*agenttest.SSE{s, first} {
		if ev := stream.MustNext(); agenttest.Path(t, ev, "status", "state") != "canceled" || ev["final"] != true {
			t.Fatalf("event after cancel = %v", ev)
		}
		stream.WantEnd()
	}

	// A terminal task, and an interrupted one: the Task event alone.
	for _, text := range []string{"finish", "input"} {
		res := client.Call(t, srv, "message/send", send(text)).(obj)
		s := client.OpenStream(t, srv, "tasks/resubscribe", obj{"id": res["id"]})
		agenttest.WantJSON(t, text+" task event", s.MustNext(), res)
		s.WantEnd()
	}

	e := client.CallErr(t, srv, "tasks/resubscribe", obj{"id": "missing"})
	agenttest.WantCode(t, e, agentcore.CodeTaskNotFound)
	agenttest.WantJSON(t, "data", e["data"], obj{"taskId": "missing"})
}

func TestRequiredFields(t *testing.T) {
	t.Parallel()
	_, srv := startAgent(t, Options{})
	invalidParams := func(t *testing.T, e obj) { agenttest.WantCode(t, e, agentcore.CodeInvalidParams) }
	tests := []struct {
		method string
		params obj
		detail string
	}{
		{"tasks/get", obj{}, "parameters: id: required"},
		{"tasks/cancel", obj{}, "parameters: id: required"},
		{"tasks/resubscribe", obj{}, "parameters: id: required"},
		{"tasks/pushNotificationConfig/set", obj{"pushNotificationConfig": obj{"url": "https://x"}}, "parameters: taskId: required"},
		{"tasks/pushNotificationConfig/get", obj{}, "parameters: id: required"},
		{"tasks/pushNotificationConfig/list", obj{}, "parameters: id: required"},
		{"tasks/pushNotificationConfig/delete", obj{"pushNotificationConfigId": "c"}, "parameters: id: required"},
		{"tasks/pushNotificationConfig/delete", obj{"id": "t"}, "parameters: pushNotificationConfigId: required"},
	}
	for _, tt := range tests {
		client.WantRefused(t, srv, []string{tt.method}, invalidParams, tt.params, tt.detail)
	}
}
