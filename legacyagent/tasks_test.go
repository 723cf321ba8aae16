package legacyagent

import (
	"testing"

	"github.com/a2agate/gateway/internal/agentcore"
	"github.com/a2agate/gateway/internal/agenttest"
)

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
