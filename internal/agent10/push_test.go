package agent10

import (
	"testing"

	"github.com/a2agate/gateway/internal/agentcore"
	"github.com/a2agate/gateway/internal/agenttest"
)

func TestPushNotificationConfigs(t *testing.T) {
	srv := parallelAgent(t)
	task := agenttest.Path(t, client.Call(t, srv, "SendMessage", obj{
		"message": userMessage("finish"),
		"configuration": obj{
			"taskPushNotificationConfig": obj{"id": "from-send", "url": "https://hooks.example/a", "token": "t0"},
		},
	}), "task").(obj)
	id := task["id"]

	created := client.Call(t, srv, "CreateTaskPushNotificationConfig", obj{
		"taskId": id, "url": "https://hooks.example/b", "token": "t1",
		"authentication": obj{"scheme": "Bearer", "credentials": "secret"},
	}).(obj)
	cfgID := agenttest.Str(t, created, "id")
	if cfgID == "" {
		t.Fatal("the agent assigned no config id")
	}
	wantB := obj{"id": cfgID, "taskId": id, "url": "https://hooks.example/b", "token": "t1",
		"authentication": obj{"scheme": "Bearer", "credentials": "secret"}}
	agenttest.WantJSON(t, "create result", created, wantB)
	wantA := obj{"id": "from-send", "taskId": id, "url": "https://hooks.example/a", "token": "t0"}

	agenttest.WantJSON(t, "get", client.Call(t, srv, "GetTaskPushNotificationConfig", obj{"taskId": id, "id": cfgID}), wantB)
	agenttest.WantJSON(t, "list", client.Call(t, srv, "ListTaskPushNotificationConfigs", obj{"taskId": id}),
		obj{"configs": []any{wantA, wantB}, "nextPageToken": ""})

	// One per page.
	page1 := client.Call(t, srv, "ListTaskPushNotificationConfigs", obj{"taskId": id, "pageSize": 1}).(obj)
	tok := agenttest.Str(t, page1, "nextPageToken")
	if tok == "" {
		t.Fatal("first of two pages has no nextPageToken")
	}
	agenttest.WantJSON(t, "page 1", page1["configs"], []any{wantA})
	agenttest.WantJSON(t, "page 2", client.Call(t, srv, "ListTaskPushNotificationConfigs", obj{"taskId": id, "pageSize": 1, "pageToken": tok}),
		obj{"configs": []any{wantB}, "nextPageToken": ""})

	if res := client.Call(t, srv, "DeleteTaskPushNotificationConfig", obj{"taskId": id, "id": "from-send"}); !agenttest.JSONEqual(t, res, obj{}) {
		t.Fatalf("delete result = %v, want {}", res)
	}
	agenttest.WantJSON(t, "list after delete", client.Call(t, srv, "ListTaskPushNotificationConfigs", obj{"taskId": id}),
		obj{"configs": []any{wantB}, "nextPageToken": ""})

	md := wantCode(t, client.CallErr(t, srv, "GetTaskPushNotificationConfig", obj{"taskId": id, "id": "from-send"}), agentcore.CodeInvalidParams)
	agenttest.WantJSON(t, "metadata", md, obj{"taskId": id, "id": "from-send"})
	wantCode(t, client.CallErr(t, srv, "DeleteTaskPushNotificationConfig", obj{"taskId": id, "id": "from-send"}), agentcore.CodeInvalidParams)
}

func TestPushNotificationConfigEmptyList(t *testing.T) {
	srv := parallelAgent(t)
	task := agenttest.Path(t, client.Call(t, srv, "SendMessage", send("finish")), "task").(obj)
	agenttest.WantJSON(t, "empty list", client.Call(t, srv, "ListTaskPushNotificationConfigs", obj{"taskId": task["id"]}),
		obj{"configs": []any{}, "nextPageToken": ""})
}

func TestPushNotificationConfigErrors(t *testing.T) {
	srv := parallelAgent(t)
	id := agenttest.Path(t, client.Call(t, srv, "SendMessage", send("finish")), "task", "id")
	tests := []struct {
		method string
		params obj
		code   int
	}{
		{"CreateTaskPushNotificationConfig", obj{"taskId": "missing", "url": "https://x"}, agentcore.CodeTaskNotFound},
		{"CreateTaskPushNotificationConfig", obj{"url": "https://x"}, agentcore.CodeInvalidParams},
		{"CreateTaskPushNotificationConfig", obj{"taskId": id}, agentcore.CodeInvalidParams},
		{"CreateTaskPushNotificationConfig", obj{"taskId": id, "url": "mailto:a@b"}, agentcore.CodeInvalidParams},
		// The 0.x nested shape is not a 1.0 config.
		{"CreateTaskPushNotificationConfig", obj{"taskId": id, "pushNotificationConfig": obj{"url": "https://x"}}, agentcore.CodeInvalidParams},
		{"GetTaskPushNotificationConfig", obj{"taskId": "missing", "id": "c"}, agentcore.CodeTaskNotFound},
		{"GetTaskPushNotificationConfig", obj{"taskId": id}, agentcore.CodeInvalidParams},
		{"GetTaskPushNotificationConfig", obj{"id": "c"}, agentcore.CodeInvalidParams},
		{"ListTaskPushNotificationConfigs", obj{"taskId": "missing"}, agentcore.CodeTaskNotFound},
		{"ListTaskPushNotificationConfigs", obj{}, agentcore.CodeInvalidParams},
		{"ListTaskPushNotificationConfigs", obj{"taskId": id, "pageSize": -1}, agentcore.CodeInvalidParams},
		{"ListTaskPushNotificationConfigs", obj{"taskId": id, "pageToken": "bogus"}, agentcore.CodeInvalidParams},
		{"DeleteTaskPushNotificationConfig", obj{"taskId": "missing", "id": "c"}, agentcore.CodeTaskNotFound},
		{"DeleteTaskPushNotificationConfig", obj{"taskId": id}, agentcore.CodeInvalidParams},
	}
	for _, tt := range tests {
		wantCode(t, client.CallErr(t, srv, tt.method, tt.params), tt.code)
	}
}
