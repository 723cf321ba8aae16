package legacyagent

import (
	"testing"

	"github.com/a2agate/gateway/internal/agentcore"
	"github.com/a2agate/gateway/internal/agenttest"
)

func TestPushNotificationConfigs(t *testing.T) {
	srv := parallelAgent(t)
	task := client.Call(t, srv, "message/send", obj{
		"message": userMessage("finish"),
		"configuration": obj{
			"acceptedOutputModes":    []any{"text/plain"},
			"pushNotificationConfig": obj{"id": "from-send", "url": "https://hooks.example/a", "token": "t0"},
		},
	}).(obj)
	id := task["id"]

	set := client.Call(t, srv, "tasks/pushNotificationConfig/set", obj{
		"taskId": id,
		"pushNotificationConfig": obj{
			"url": "https://hooks.example/b", "token": "t1",
			"authentication": obj{"schemes": []any{"Bearer"}, "credentials": "secret"},
		},
	}).(obj)
	cfgID := agenttest.Str(t, set, "pushNotificationConfig", "id")
	if cfgID == "" {
		t.Fatal("the agent assigned no config id")
	}
	wantB := obj{"taskId": id, "pushNotificationConfig": obj{
		"id": cfgID, "url": "https://hooks.example/b", "token": "t1",
		"authentication": obj{"schemes": []any{"Bearer"}, "credentials": "secret"},
	}}
	agenttest.WantJSON(t, "set result", set, wantB)
	wantA := obj{"taskId": id, "pushNotificationConfig": obj{"id": "from-send", "url": "https://hooks.example/a", "token": "t0"}}

	agenttest.WantJSON(t, "get by id", client.Call(t, srv, "tasks/pushNotificationConfig/get", obj{"id": id, "pushNotificationConfigId": cfgID}), wantB)
	agenttest.WantJSON(t, "get without config id", client.Call(t, srv, "tasks/pushNotificationConfig/get", obj{"id": id}), wantA)
	agenttest.WantJSON(t, "list", client.Call(t, srv, "tasks/pushNotificationConfig/list", obj{"id": id}), []any{wantA, wantB})

	// Setting an existing id replaces that config.
	client.Call(t, srv, "tasks/pushNotificationConfig/set", obj{"taskId": id, "pushNotificationConfig": obj{"id": "from-send", "url": "https://hooks.example/c"}})
	wantA = obj{"taskId": id, "pushNotificationConfig": obj{"id": "from-send", "url": "https://hooks.example/c"}}
	agenttest.WantJSON(t, "list after replace", client.Call(t, srv, "tasks/pushNotificationConfig/list", obj{"id": id}), []any{wantA, wantB})

	out := client.RPCRaw(t, srv, agenttest.RPCRequest("tasks/pushNotificationConfig/delete", obj{"id": id, "pushNotificationConfigId": "from-send"}))
	if res, ok := out["result"]; !ok || res != nil {
		t.Fatalf("delete: want \"result\": null, got %v", out)
	}
	agenttest.WantJSON(t, "list after delete", client.Call(t, srv, "tasks/pushNotificationConfig/list", obj{"id": id}), []any{wantB})

	e := client.CallErr(t, srv, "tasks/pushNotificationConfig/get", obj{"id": id, "pushNotificationConfigId": "from-send"})
	agenttest.WantCode(t, e, agentcore.CodeInvalidParams)
	agenttest.WantJSON(t, "data", e["data"], obj{"taskId": id, "pushNotificationConfigId": "from-send"})
	agenttest.WantCode(t, client.CallErr(t, srv, "tasks/pushNotificationConfig/delete", obj{"id": id, "pushNotificationConfigId": "from-send"}), agentcore.CodeInvalidParams)
}

func TestPushNotificationConfigEmptyList(t *testing.T) {
	srv := parallelAgent(t)
	task := client.Call(t, srv, "message/send", send("finish")).(obj)
	out := client.RPCRaw(t, srv, agenttest.RPCRequest("tasks/pushNotificationConfig/list", obj{"id": task["id"]}))
	if list, ok := out["result"].([]any); !ok || len(list) != 0 {
		t.Fatalf("list of a task without configs = %v, want []", out["result"])
	}
	agenttest.WantCode(t, client.CallErr(t, srv, "tasks/pushNotificationConfig/get", obj{"id": task["id"]}), agentcore.CodeInvalidParams)
}

func TestPushNotificationConfigErrors(t *testing.T) {
	srv := parallelAgent(t)
	task := client.Call(t, srv, "message/send", send("finish")).(obj)
	good := obj{"url": "https://hooks.example/x"}
	tests := []struct {
		method string
		params obj
		code   int
	}{
		{"tasks/pushNotificationConfig/set", obj{"taskId": "missing", "pushNotificationConfig": good}, agentcore.CodeTaskNotFound},
		{"tasks/pushNotificationConfig/set", obj{"pushNotificationConfig": good}, agentcore.CodeInvalidParams},
		{"tasks/pushNotificationConfig/set", obj{"taskId": task["id"]}, agentcore.CodeInvalidParams},
		{"tasks/pushNotificationConfig/set", obj{"taskId": task["id"], "pushNotificationConfig": obj{"url": "ftp://x/y"}}, agentcore.CodeInvalidParams},
		{"tasks/pushNotificationConfig/set", obj{"taskId": task["id"], "pushNotificationConfig": obj{
			"url": "https://x", "authentication": obj{"schemes": []any{}},
		}}, agentcore.CodeInvalidParams},
		// The 1.0 flat shape is not a 0.2.5 config.
		{"tasks/pushNotificationConfig/set", obj{"taskId": task["id"], "url": "https://x"}, agentcore.CodeInvalidParams},
		{"tasks/pushNotificationConfig/get", obj{"id": "missing"}, agentcore.CodeTaskNotFound},
		{"tasks/pushNotificationConfig/get", obj{"taskId": task["id"]}, agentcore.CodeInvalidParams},
		{"tasks/pushNotificationConfig/list", obj{"id": "missing"}, agentcore.CodeTaskNotFound},
		{"tasks/pushNotificationConfig/list", obj{}, agentcore.CodeInvalidParams},
		{"tasks/pushNotificationConfig/delete", obj{"id": "missing", "pushNotificationConfigId": "c"}, agentcore.CodeTaskNotFound},
		{"tasks/pushNotificationConfig/delete", obj{"id": task["id"]}, agentcore.CodeInvalidParams},
	}
	for _, tt := range tests {
		agenttest.WantCode(t, client.CallErr(t, srv, tt.method, tt.params), tt.code)
	}
}
