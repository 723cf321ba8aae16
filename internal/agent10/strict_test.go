package agent10

import (
	"reflect"
	"testing"

	"github.com/a2agate/gateway/internal/agenttest"
)

// TestZeroXKeysAreRejected sends each 0.x key a sloppy translation could
// leak into a 1.0 request; the agent must refuse every one.
func TestZeroXKeysAreRejected(t *testing.T) {
	srv := parallelAgent(t)
	task := client.Call(t, srv, "SendMessage", send("finish")).(obj)["task"].(obj)
	id := task["id"]

	msgWith := func(key string, v any) obj {
		m := userMessage("hello")
		m[key] = v
		return obj{"message": m}
	}
	tests := []struct {
		name, method string
		params       obj
		field        string
	}{
		{"message kind", "SendMessage", msgWith("kind", "message"), `params.message: unknown field "kind"`},
		{"part kind", "SendMessage", obj{"message": obj{"messageId": "m", "role": "ROLE_USER", "parts": []any{obj{"kind": "text", "text": "x"}}}}, `params.message.parts[0]: unknown field "kind"`},
		{"file part", "SendMessage", obj{"message": obj{"messageId": "m", "role": "ROLE_USER", "parts": []any{obj{"file": obj{"uri": "https://x"}}}}}, `unknown field "file"`},
		{"mimeType", "SendMessage", obj{"message": obj{"messageId": "m", "role": "ROLE_USER", "parts": []any{obj{"url": "https://x", "mimeType": "a/b"}}}}, `unknown field "mimeType"`},
		{"file name", "SendMessage", obj{"message": obj{"messageId": "m", "role": "ROLE_USER", "parts": []any{obj{"url": "https://x", "name": "b"}}}}, `unknown field "name"`},
		{"blocking", "SendMessage", obj{"message": userMessage("x"), "configuration": obj{"blocking": false}}, `params.configuration: unknown field "blocking"`},
		{"nested push config", "SendMessage", obj{"message": userMessage("x"), "configuration": obj{"pushNotificationConfig": obj{"url": "https://x"}}}, `unknown field "pushNotificationConfig"`},
		{"push schemes", "SendMessage", obj{"message": userMessage("x"), "configuration": obj{"taskPushNotificationConfig": obj{
			"url": "https://x", "authentication": obj{"schemes": []any{"Bearer"}},
		}}}, `params.configuration.taskPushNotificationConfig.authentication: unknown field "schemes"`},
		{"snake case", "SendMessage", msgWith("context_id", "c"), `unknown field "context_id"`},
		{"wrong case", "SendMessage", msgWith("MessageId", "c"), `unknown field "MessageId"`},
		{"GetTask metadata", "GetTask", obj{"id": id, "metadata": obj{}}, `params: unknown field "metadata"`},
		{"SubscribeToTask metadata", "SubscribeToTask", obj{"id": id, "metadata": obj{}}, `params: unknown field "metadata"`},
		{"pushNotificationConfigId", "GetTaskPushNotificationConfig", obj{"taskId": id, "id": "c", "pushNotificationConfigId": "c"}, `unknown field "pushNotificationConfigId"`},
		{"final", "SendMessage", obj{"message": userMessage("x"), "final": true}, `params: unknown field "final"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			client.WantRefused(t, srv, []string{tt.method}, wantInvalidParams, tt.params, tt.field)
		})
	}
}

// TestEveryFieldIsAccepted sends a request with every field the proto
// defines, so that the strict decoder is known not to refuse a legal key.
func TestEveryFieldIsAccepted(t *testing.T) {
	srv := parallelAgent(t)
	res := client.Call(t, srv, "SendMessage", obj{
		"tenant": "t",
		"message": obj{
			"messageId": "m1", "contextId": "c1", "role": "ROLE_USER",
			"parts": []any{
				obj{"text": "all of it", "metadata": obj{"a": 1}, "mediaType": "text/plain", "filename": "t.txt"},
				obj{"raw": "AAE=", "mediaType": "application/octet-stream", "filename": "b.bin"},
				obj{"url": "https://x/y", "mediaType": "a/b"},
				obj{"data": obj{"free": obj{"any": "keys", "kind": "allowed inside a Struct"}}},
			},
			"metadata": obj{"kind": "free form"}, "extensions": []any{"urn:x"}, "referenceTaskIds": []any{"t0"},
		},
		"configuration": obj{
			"acceptedOutputModes": []any{"text/plain"},
			"taskPushNotificationConfig": obj{
				"tenant": "t", "id": "p1", "url": "https://hooks.example/a", "token": "tok",
				"authentication": obj{"scheme": "Bearer", "credentials": "s"},
			},
			"historyLength": 5, "returnImmediately": false,
		},
		"metadata": obj{"k": "v"},
	}).(obj)
	if st := agenttest.Str(t, res, "task", "status", "state"); st != "TASK_STATE_COMPLETED" {
		t.Fatalf("state = %q", st)
	}
}

func TestCheckKeys(t *testing.T) {
	t.Parallel()
	type inner struct {
		A string `json:"a"`
	}
	type outer struct {
		In    *inner      `json:"in"`
		List  []inner     `json:"list"`
		Free  jsonObject  `json:"free"`
		Raw   *protoBytes `json:"raw"`
		Other string      `json:"-"`
	}
	tests := []struct {
		data, err string
	}{
		{`{"in":{"a":"x"},"list":[{"a":"y"}],"free":{"z":1},"raw":"AA=="}`, ""},
		{`{"in":null,"list":null}`, ""},
		{`{"in":"not an object"}`, ""},            // left for the decoder
		{`{"b":1,"a":1}`, `p: unknown field "a"`}, // sorted: a is reported first
		{`{"in":{"b":1}}`, `p.in: unknown field "b"`},
		{`{"list":[{"a":"y"},{"c":1}]}`, `p.list[1]: unknown field "c"`},
		{`{"Other":1}`, `p: unknown field "Other"`},
		{`{"-":1}`, `p: unknown field "-"`},
	}
	for _, tt := range tests {
		err := checkKeys([]byte(tt.data), reflect.TypeFor[*outer](), "p")
		if got := errString(err); got != tt.err {
			t.Errorf("checkKeys(%s) = %q, want %q", tt.data, got, tt.err)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
