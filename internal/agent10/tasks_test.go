package agent10

import (
	"testing"

	"github.com/a2agate/gateway/internal/agentcore"
	"github.com/a2agate/gateway/internal/agenttest"
)

func TestSubscribeToTask(t *testing.T) {
	t.Parallel()
	_, srv := startAgent(t, Options{})

	first := client.OpenStream(t, srv, "SendStreamingMessage", send("wait"))
	snap := first.NextOf("task")
	first.NextOf("statusUpdate") // working

	s := client.OpenStream(t, srv, "SubscribeToTask", obj{"id": snap["id"]})
	if ev := s.NextOf("task"); agenttest.Str(t, ev, "status", "state") != "TASK_STATE_WORKING" || ev["id"] != snap["id"] {
		t.Fatalf("first subscribe event = %v, want the working task", ev)
	}
	client.Call(t, srv, "CancelTask", obj{"id": snap["id"]})
	for _, stream := range []*agenttest.SSE{s, first} {
		if st := agenttest.Str(t, stream.NextOf("statusUpdate"), "status", "state"); st != "TASK_STATE_CANCELED" {
			t.Fatalf("event after cancel: state %q", st)
		}
		stream.WantEnd()
	}

	// An interrupted task: the task event alone.
	asking := agenttest.Path(t, client.Call(t, srv, "SendMessage", send("input")), "task").(obj)
	s = client.OpenStream(t, srv, "SubscribeToTask", obj{"id": asking["id"]})
	agenttest.WantJSON(t, "task event", s.NextOf("task"), asking)
	s.WantEnd()

	// A terminal task cannot be subscribed to.
	done := agenttest.Path(t, client.Call(t, srv, "SendMessage", send("finish")), "task").(obj)
	md := wantCode(t, client.CallErr(t, srv, "SubscribeToTask", obj{"id": done["id"]}), codeUnsupportedOperation)
	agenttest.WantJSON(t, "metadata", md, obj{"taskId": done["id"], "state": "TASK_STATE_COMPLETED"})

	md = wantCode(t, client.CallErr(t, srv, "SubscribeToTask", obj{"id": "missing"}), agentcore.CodeTaskNotFound)
	agenttest.WantJSON(t, "metadata", md, obj{"taskId": "missing"})
	wantCode(t, client.CallErr(t, srv, "SubscribeToTask", obj{}), agentcore.CodeInvalidParams)
}

func TestRequiredFields(t *testing.T) {
	t.Parallel()
	_, srv := startAgent(t, Options{})
	tests := []struct {
		method string
		params obj
		detail string
	}{
		{"GetTask", obj{}, "parameters: id: required"},
		{"CancelTask", obj{}, "parameters: id: required"},
		{"SubscribeToTask", obj{}, "parameters: id: required"},
		{"CreateTaskPushNotificationConfig", obj{"url": "https://x"}, "parameters: taskId: required"},
		{"GetTaskPushNotificationConfig", obj{"id": "c"}, "parameters: taskId: required"},
		{"GetTaskPushNotificationConfig", obj{"taskId": "t"}, "parameters: id: required"},
		{"ListTaskPushNotificationConfigs", obj{}, "parameters: taskId: required"},
		{"DeleteTaskPushNotificationConfig", obj{"id": "c"}, "parameters: taskId: required"},
		{"DeleteTaskPushNotificationConfig", obj{"taskId": "t"}, "parameters: id: required"},
	}
	for _, tt := range tests {
		client.WantRefused(t, srv, []string{tt.method}, wantInvalidParams, tt.params, tt.detail)
	}
}
