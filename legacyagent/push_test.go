package legacyagent

import (
	"testing"
)

func TestPushNotificationConfigs(t *testing.T) {
	t.Parallel()
	_, srv := startAgent(t, Options{})
	task := call(t, srv, "message/send", obj{
		"message": userMessage("finish"),
		"configuration": obj{
			"acceptedOutputModes":    []any{"text/plain"},
			"pushNotificationConfig": obj{"id": "from-send", "url": "https://hooks.example/a", "token": "t0"},
		},
	}).(obj)
	id := task["id"]

	set := call(t, srv, "tasks/pushNotificationConfig/set", obj{
		"taskId": id,
		"pushNotificationConfig": obj{
			"url": "https://hooks.example/b", "token": "t1",
			"authentication": obj{"schemes": []any{"Bearer"}, "credentials": "secret"},
		},
	}).(obj)
	cfgID := str(t, set, "pushNotificationConfig", "id")
	if cfgID == "" {
		t.Fatal("the agent assigned no config id")
	}
	wantB := obj{"taskId": id, "pushNotificationConfig": obj{
		"id": cfgID, "url": "https://hooks.example/b", "token": "t1",
		"authentication": obj{"schemes": []any{"Bearer"}, "credentials": "secret"},
	}}
	wantJSON(t, "set result", set, wantB)
	wantA := obj{"taskId": id, "pushNotificationConfig": obj{"id": "from-send", "url": "https://hooks.example/a", "token": "t0"}}

	wantJSON(t, "get by id", call(t, srv, "tasks/pushNotificationConfig/get", obj{"id": id, "pushNotificationConfigId": cfgID}), wantB)
	wantJSON(t, "get without config id", call(t, srv, "tasks/pushNotificationConfig/get", obj{"id": id}), wantA)
	wantJSON(t, "list", call(t, srv, "tasks/pushNotificationConfig/list", obj{"id": id}), []any{wantA, wantB})

	// Setting an existing id replaces that config.
	call(t, srv, "tasks/pushNotificationConfig/set", obj{"taskId": id, "pushNotificationConfig": obj{"id": "from-send", "url": "https://hooks.example/c"}})
	wantA = obj{"taskId": id, "pushNotificationConfig": obj{"id": "from-send", "url": "https://hooks.example/c"}}
	wantJSON(t, "list after replace", call(t, srv, "tasks/pushNotificationConfig/list", obj{"id": id}), []any{wantA, wantB})

	out := rpcRaw(t, srv, rpcRequest("tasks/pushNotificationConfig/delete", obj{"id": id, "pushNotificationConfigId": "from-send"}))
	if res, ok := out["result"]; !ok || res != nil {
		t.Fatalf("delete: want \"result\": null, got %v", out)
	}
	wantJSON(t, "list after delete", call(t, srv, "tasks/pushNotificationConfig/list", obj{"id": id}), []any{wantB})

	e := callErr(t, srv, "tasks/pushNotificationConfig/get", obj{"id": id, "pushNotificationConfigId": "from-send"})
	wantCode(t, e, codeInvalidParams)
	wantJSON(t, "data", e["data"], obj{"taskId": id, "pushNotificationConfigId": "from-send"})
	wantCode(t, callErr(t, srv, "tasks/pushNotificationConfig/delete", obj{"id": id, "pushNotificationConfigId": "from-send"}), codeInvalidParams)
}

func TestPushNotificationConfigEmptyList(t *testing.T) {
	t.Parallel()
	_, srv := startAgent(t, Options{})
	task := call(t, srv, "message/send", send("finish")).(obj)
	out := rpcRaw(t, srv, rpcRequest("tasks/pushNotificationConfig/list", obj{"id": task["id"]}))
	if list, ok := out["result"].([]any); !ok || len(list) != 0 {
		t.Fatalf("list of a task without configs = %v, want []", out["result"])
	}
	wantCode(t, callErr(t, srv, "tasks/pushNotificationConfig/get", obj{"id": task["id"]}), codeInvalidParams)
}

func TestPushNotificationConfigErrors(t *testing.T) {
	t.Parallel()
	_, srv := startAgent(t, Options{})
	task := call(t, srv, "message/send", send("finish")).(obj)
	good := obj{"url": "https://hooks.example/x"}
	tests := []struct {
		method string
		params obj
		code   int
	}{
		{"tasks/pushNotificationConfig/set", obj{"taskId": "missing", "pushNotificationConfig": good}, codeTaskNotFound},
		{"tasks/pushNotificationConfig/set", obj{"pushNotificationConfig": good}, codeInvalidParams},
		{"tasks/pushNotificationConfig/set", obj{"taskId": task["id"]}, codeInvalidParams},
		{"tasks/pushNotificationConfig/set", obj{"taskId": task["id"], "pushNotificationConfig": obj{"url": "ftp://x/y"}}, codeInvalidParams},
		{"tasks/pushNotificationConfig/set", obj{"taskId": task["id"], "pushNotificationConfig": obj{
			"url": "https://x", "authentication": obj{"schemes": []any{}},
		}}, codeInvalidParams},
		// The 1.0 flat shape is not a 0.2.5 config.
		{"tasks/pushNotificationConfig/set", obj{"taskId": task["id"], "url": "https://x"}, codeInvalidParams},
		{"tasks/pushNotificationConfig/get", obj{"id": "missing"}, codeTaskNotFound},
		{"tasks/pushNotificationConfig/get", obj{"taskId": task["id"]}, codeInvalidParams},
		{"tasks/pushNotificationConfig/list", obj{"id": "missing"}, codeTaskNotFound},
		{"tasks/pushNotificationConfig/list", obj{}, codeInvalidParams},
		{"tasks/pushNotificationConfig/delete", obj{"id": "missing", "pushNotificationConfigId": "c"}, codeTaskNotFound},
		{"tasks/pushNotificationConfig/delete", obj{"id": task["id"]}, codeInvalidParams},
	}
	for _, tt := range tests {
		wantCode(t, callErr(t, srv, tt.method, tt.params), tt.code)
	}
}
