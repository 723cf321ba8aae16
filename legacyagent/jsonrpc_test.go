package legacyagent

import (
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/a2agate/gateway/internal/agentcore"
)

func TestEnvelopeErrors(t *testing.T) {
	t.Parallel()
	_, srv := startAgent(t, Options{})
	tests := []struct {
		name, body string
		code       int
		id         any
	}{
		{"not JSON", `{"jsonrpc":`, codeParseError, nil},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"x"}}]`, codeInvalidRequest, nil},
		{"not an object", `"hello"`, codeInvalidRequest, nil},
		{"notification", `{"jsonrpc":"2.0","method":"tasks/get","params":{"id":"x"}}`, codeInvalidRequest, nil},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"tasks/get"}`, codeInvalidRequest, nil},
		{"wrong version", `{"jsonrpc":"1.0","id":7,"method":"tasks/get","params":{"id":"x"}}`, codeInvalidRequest, json.Number("7")},
		{"no method", `{"jsonrpc":"2.0","id":"a","params":{}}`, codeInvalidRequest, "a"},
		{"unknown method", `{"jsonrpc":"2.0","id":"a","method":"tasks/list","params":{}}`, codeMethodNotFound, "a"},
		{"1.0 method", `{"jsonrpc":"2.0","id":"a","method":"SendMessage","params":{}}`, codeMethodNotFound, "a"},
		{"0.3 card method", `{"jsonrpc":"2.0","id":"a","method":"agent/getAuthenticatedExtendedCard"}`, codeMethodNotFound, "a"},
		{"array params", `{"jsonrpc":"2.0","id":"a","method":"tasks/get","params":["x"]}`, codeInvalidParams, "a"},
		{"params of the wrong type", `{"jsonrpc":"2.0","id":"a","method":"tasks/get","params":{"id":5}}`, codeInvalidParams, "a"},
		{"missing params", `{"jsonrpc":"2.0","id":"a","method":"tasks/get"}`, codeInvalidParams, "a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out := rpcRaw(t, srv, tt.body)
			e, ok := out["error"].(obj)
			if !ok {
				t.Fatalf("want an error, got %v", out)
			}
			wantCode(t, e, tt.code)
			if out["id"] != tt.id {
				t.Fatalf("id = %v, want %v", out["id"], tt.id)
			}
			if out["jsonrpc"] != "2.0" {
				t.Fatalf("jsonrpc = %v", out["jsonrpc"])
			}
		})
	}
}

func TestMethodNotFoundNamesMethod(t *testing.T) {
	t.Parallel()
	_, srv := startAgent(t, Options{})
	e := callErr(t, srv, "tasks/list", obj{})
	wantJSON(t, "error data", e["data"], obj{"method": "tasks/list"})
}

func TestIDIsEchoedVerbatim(t *testing.T) {
	t.Parallel()
	_, srv := startAgent(t, Options{})
	// A float64 decode would round this id; the agent must echo its bytes.
	resp := post(t, srv, `{"jsonrpc":"2.0","id":12345678901234567890,"method":"tasks/get","params":{"id":"none"}}`)
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(body), `"id":12345678901234567890`) {
		t.Fatalf("id not echoed verbatim: %s", body)
	}
}

func TestClosedAgentRefusesCalls(t *testing.T) {
	t.Parallel()
	a, srv := startAgent(t, Options{})
	a.Close()
	resp := post(t, srv, rpcRequest("tasks/get", obj{"id": "x"}))
	if resp.StatusCode != 503 {
		t.Fatalf("status after Close = %d, want 503", resp.StatusCode)
	}
}

func TestOversizedBodyIsRefused(t *testing.T) {
	t.Parallel()
	_, srv := startAgent(t, Options{})
	body := `{"jsonrpc":"2.0","id":"a","method":"tasks/get","params":{"id":"` + strings.Repeat("x", agentcore.MaxRequestBytes) + `"}}`
	e, ok := rpcRaw(t, srv, body)["error"].(obj)
	if !ok {
		t.Fatal("an oversized request was accepted")
	}
	wantCode(t, e, codeInvalidRequest)
}
