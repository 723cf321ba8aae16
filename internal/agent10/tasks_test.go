package agent10

import (
	"testing"

	"github.com/a2agate/gateway/internal/agentcore"
	"github.com/a2agate/gateway/internal/agenttest"
)

func TestGetTask(t *testing.T) {
	t.Parallel()
	_, srv := startAgent(t, Options{})
	first := agenttest.Path(t, client.Call(t, srv, "SendMessage", send("input")), "task").(obj)
	reply := userMessage("Grace")
	reply["taskId"] = first["id"]
	done := agenttest.Path(t, client.Call(t, srv, "SendMessage", obj{"message": reply}), "task").(obj)

	got := client.Call(t, srv, "GetTask", obj{"id": first["id"], "tenant": "t"}).(obj)
	agenttest.WantJSON(t, "GetTask", got, done) // the bare Task, no wrapper

	tests := []struct {
		name   string
		length any
		want   []any // history texts; nil: no history key at all
	}{
		{"absent", nil, []any{"input", agentcore.Question, "Grace"}},
		{"zero means none", 0, nil},
		{"last one", 1, []any{"Grace"}},
		{"last two", 2, []any{agentcore.Question, "Grace"}},
		{"more than there is", 10, []any{"input", agentcore.Question, "Grace"}},
	}
	for _, tt := range tests {
		params := obj{"id": first["id"]}
		if tt.length != nil {
			params["historyLength"] = tt.length
		}
		res := client.Call(t, srv, "GetTask", params).(obj)
		h, present := res["history"]
		if tt.want == nil {
			if present {
				t.Fatalf("%s: history = %v, want the key omitted", tt.name, h)
			}
			continue
		}
		agenttest.WantJSON(t, tt.name, agenttest.FirstTexts(t, h), tt.want)
	}

	md := wantCode(t, client.CallErr(t, srv, "GetTask", obj{"id": "missing"}), agentcore.CodeTaskNotFound)
	agenttest.WantJSON(t, "metadata", md, obj{"taskId": "missing"})
	wantCode(t, client.CallErr(t, srv, "GetTask", obj{}), agentcore.CodeInvalidParams)
	wantCode(t, client.CallErr(t, srv, "GetTask", obj{"id": first["id"], "historyLength": -1}), agentcore.CodeInvalidParams)
}

func TestCancelTask(t *testing.T) {
	t.Parallel()
	_, srv := startAgent(t, Options{})

	asking := agenttest.Path(t, client.Call(t, srv, "SendMessage", send("input")), "task").(obj)
	res := client.Call(t, srv, "CancelTask", obj{"id": asking["id"], "metadata": obj{"why": "test"}}).(obj)
	if st := agenttest.Str(t, res, "status", "state"); st != "TASK_STATE_CANCELED" {
		t.Fatalf("canceling an input-required task: state %q", st)
	}

	for _, text := range []string{"finish", "fail"} {
		done := agenttest.Path(t, client.Call(t, srv, "SendMessage", send(text)), "task").(obj)
		md := wantCode(t, client.CallErr(t, srv, "CancelTask", obj{"id": done["id"]}), agentcore.CodeTaskNotCancelable)
		agenttest.WantJSON(t, "metadata", md, obj{"taskId": done["id"], "state": agenttest.Path(t, done, "status", "state")})
	}
	md := wantCode(t, client.CallErr(t, srv, "CancelTask", obj{"id": "missing"}), agentcore.CodeTaskNotFound)
	agenttest.WantJSON(t, "metadata", md, obj{"taskId": "missing"})
	wantCode(t, client.CallErr(t, srv, "CancelTask", obj{}), agentcore.CodeInvalidParams)
}

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
