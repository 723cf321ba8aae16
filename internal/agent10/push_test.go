package agent10

import (
	"testing"
)

func TestPushNotificationConfigs(t *testing.T) {
	t.Parallel()
	_, srv := startAgent(t, Options{})
	task := path(t, call(t, srv, "SendMessage", obj{
		"message": userMessage("finish"),
		"configuration": obj{
			"taskPushNotificationConfig": obj{"id": "from-send", "url": "https://hooks.example/a", "token": "t0"},
		},
	}), "task").(obj)
	id := task["id"]

	created := call(t, srv, "CreateTaskPushNotificationConfig", obj{
		"taskId": id, "url": "https://hooks.example/b", "token": "t1",
		"authentication": obj{"scheme": "Bearer", "credentials": "secret"},
	}).(obj)
	cfgID := str(t, created, "id")
	if cfgID == "" {
		t.Fatal("the agent assigned no config id")
	}
	wantB := obj{"id": cfgID, "taskId": id, "url": "https://hooks.example/b", "token": "t1",
		"authentication": obj{"scheme": "Bearer", "credentials": "secret"}}
	wantJSON(t, "create result", created, wantB)
	wantA := obj{"id": "from-send", "taskId": id, "url": "https://hooks.example/a", "token": "t0"}

	wantJSON(t, "get", call(t, srv, "GetTaskPushNotificationConfig", obj{"taskId": id, "id": cfgID}), wantB)
	wantJSON(t, "list", call(t, srv, "ListTaskPushNotificationConfigs", obj{"taskId": id}),
		obj{"configs": []any{wantA, wantB}, "nextPageToken": ""})

	// One per page.
	page1 := call(t, srv, "ListTaskPushNotificationConfigs", obj{"taskId": id, "pageSize": 1}).(obj)
	tok := str(t, page1, "nextPageToken")
	if tok == "" {
		t.Fatal("first of two pages has no nextPageToken")
	}
	wantJSON(t, "page 1", page1["configs"], []any{wantA})
	wantJSON(t, "page 2", call(t, srv, "ListTaskPushNotificationConfigs", obj{"taskId": id, "pageSize": 1, "pageToken": tok}),
		obj{"configs": []any{wantB}, "nextPageToken": ""})

	if res := call(t, srv, "DeleteTaskPushNotificationConfig", obj{"taskId": id, "id": "from-send"}); !jsonEqual(t, res, obj{}) {
		t.Fatalf("delete result = %v, want {}", res)
	}
	wantJSON(t, "list after delete", call(t, srv, "ListTaskPushNotificationConfigs", obj{"taskId": id}),
		obj{"configs": []any{wantB}, "nextPageToken": ""})

	md := wantCode(t, callErr(t, srv, "GetTaskPushNotificationConfig", obj{"taskId": id, "id": "from-send"}), codeInvalidParams)
	wantJSON(t, "metadata", md, obj{"taskId": id, "id": "from-send"})
	wantCode(t, callErr(t, srv, "DeleteTaskPushNotificationConfig", obj{"taskId": id, "id": "from-send"}), codeInvalidParams)
}

func TestPushNotificationConfigEmptyList(t *testing.T) {
	t.Parallel()
	_, srv := startAgent(t, Options{})
	task := path(t, call(t, srv, "SendMessage", send("finish")), "task").(obj)
	wantJSON(t, "empty list", call(t, srv, "ListTaskPushNotificationConfigs", obj{"taskId": task["id"]}),
		obj{"configs": []any{}, "nextPageToken": ""})
}

func TestPushNotificationConfigErrors(t *testing.T) {
	t.Parallel()
	_, srv := startAgent(t, Options{})
	id := path(t, call(t, srv, "SendMessage", send("finish")), "task", "id")
	tests := []struct {
		method string
		params obj
		code   int
	}{
		{"CreateTaskPushNotificationConfig", obj{"taskId": "missing", "url": "https://x"}, codeTaskNotFound},
		{"CreateTaskPushNotificationConfig", obj{"url": "https://x"}, codeInvalidParams},
		{"CreateTaskPushNotificationConfig", obj{"taskId": id}, codeInvalidParams},
		{"CreateTaskPushNotificationConfig", obj{"taskId": id, "url": "mailto:a@b"}, codeInvalidParams},
		// The 0.x nested shape is not a 1.0 config.
		{"CreateTaskPushNotificationConfig", obj{"taskId": id, "pushNotificationConfig": obj{"url": "https://x"}}, codeInvalidParams},
		{"GetTaskPushNotificationConfig", obj{"taskId": "missing", "id": "c"}, codeTaskNotFound},
		{"GetTaskPushNotificationConfig", obj{"taskId": id}, codeInvalidParams},
		{"GetTaskPushNotificationConfig", obj{"id": "c"}, codeInvalidParams},
		{"ListTaskPushNotificationConfigs", obj{"taskId": "missing"}, codeTaskNotFound},
		{"ListTaskPushNotificationConfigs", obj{}, codeInvalidParams},
		{"ListTaskPushNotificationConfigs", obj{"taskId": id, "pageSize": -1}, codeInvalidParams},
		{"ListTaskPushNotificationConfigs", obj{"taskId": id, "pageToken": "bogus"}, codeInvalidParams},
		{"DeleteTaskPushNotificationConfig", obj{"taskId": "missing", "id": "c"}, codeTaskNotFound},
		{"DeleteTaskPushNotificationConfig", obj{"taskId": id}, codeInvalidParams},
	}
	for _, tt := range tests {
		wantCode(t, callErr(t, srv, tt.method, tt.params), tt.code)
	}
}
