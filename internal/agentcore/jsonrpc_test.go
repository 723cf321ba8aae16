package agentcore_test

import (
	"encoding/json"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/a2agate/gateway/internal/agentcore"
	"github.com/a2agate/gateway/internal/agenttest"
)

func TestEnvelopeErrors(t *testing.T) {
	forEachAgent(t, func(t *testing.T, d dialect, srv *httptest.Server) {
		get := d.get
		tests := []struct {
			name, body string
			code       int
			id         any
		}{
			{"not JSON", `{"jsonrpc":`, agentcore.CodeParseError, nil},
			{"batch", `[{"jsonrpc":"2.0","id":1,"method":"` + get + `","params":{"id":"x"}}]`, agentcore.CodeInvalidRequest, nil},
			{"a string", `"hello"`, agentcore.CodeInvalidRequest, nil},
			{"a number", `42`, agentcore.CodeInvalidRequest, nil},
			{"notification", `{"jsonrpc":"2.0","method":"` + get + `","params":{"id":"x"}}`, agentcore.CodeInvalidRequest, nil},
			{"object id", `{"jsonrpc":"2.0","id":{},"method":"` + get + `"}`, agentcore.CodeInvalidRequest, nil},
			{"null id", `{"jsonrpc":"2.0","id":null,"method":"` + get + `"}`, agentcore.CodeInvalidRequest, nil},
			{"wrong version", `{"jsonrpc":"1.0","id":7,"method":"` + get + `","params":{"id":"x"}}`, agentcore.CodeInvalidRequest, json.Number("7")},
			{"no method", `{"jsonrpc":"2.0","id":"a","params":{}}`, agentcore.CodeInvalidRequest, "a"},
			{"method not a string", `{"jsonrpc":"2.0","id":"a","method":5}`, agentcore.CodeInvalidRequest, "a"},
			{"unknown method", `{"jsonrpc":"2.0","id":"a","method":"tasks/list","params":{}}`, agentcore.CodeMethodNotFound, "a"},
			{"the other dialect's method", `{"jsonrpc":"2.0","id":"a","method":"` + d.foreign + `","params":{}}`, agentcore.CodeMethodNotFound, "a"},
			{"0.3 card method", `{"jsonrpc":"2.0","id":"a","method":"agent/getAuthenticatedExtendedCard"}`, agentcore.CodeMethodNotFound, "a"},
			{"array params", `{"jsonrpc":"2.0","id":"a","method":"` + get + `","params":["x"]}`, agentcore.CodeInvalidParams, "a"},
			{"params of the wrong type", `{"jsonrpc":"2.0","id":"a","method":"` + get + `","params":{"id":5}}`, agentcore.CodeInvalidParams, "a"},
			{"string historyLength", `{"jsonrpc":"2.0","id":"a","method":"` + get + `","params":{"id":"x","historyLength":"5"}}`, agentcore.CodeInvalidParams, "a"},
			{"missing params", `{"jsonrpc":"2.0","id":"a","method":"` + get + `"}`, agentcore.CodeInvalidParams, "a"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				out := d.RPCRaw(t, srv, tt.body)
				e, ok := out["error"].(obj)
				if !ok {
					t.Fatalf("want an error, got %v", out)
				}
				agenttest.WantCode(t, e, tt.code)
				if out["id"] != tt.id || out["jsonrpc"] != "2.0" {
					t.Fatalf("envelope = %v, want id %v", out, tt.id)
				}
			})
		}
	})
}

func TestMethodNotFoundNamesMethod(t *testing.T) {
	forEachAgent(t, func(t *testing.T, d dialect, srv *httptest.Server) {
		e := agenttest.ErrorOf(t, d.RPCRaw(t, srv, agenttest.RPCRequest(d.foreign, obj{})), d.foreign)
		agenttest.WantJSON(t, "error detail", d.detail(t, e), obj{"method": d.foreign})
	})
}

func TestIDIsEchoedVerbatim(t *testing.T) {
	forEachAgent(t, func(t *testing.T, d dialect, srv *httptest.Server) {
		// A float64 decode would round this id; the agent must echo its bytes.
		resp := d.Post(t, srv, `{"jsonrpc":"2.0","id":12345678901234567890,"method":"`+d.get+`","params":{"id":"none"}}`)
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(body), `"id":12345678901234567890`) {
			t.Fatalf("id not echoed verbatim: %s", body)
		}
	})
}

func TestClosedAgentRefusesCalls(t *testing.T) {
	forEach(t, func(t *testing.T, d dialect) {
		a, srv := d.start(t, agentcore.Options{})
		a.Close()
		if resp := d.Post(t, srv, agenttest.RPCRequest(d.get, obj{"id": "x"})); resp.StatusCode != 503 {
			t.Fatalf("status after Close = %d, want 503", resp.StatusCode)
		}
	})
}

func TestOversizedBodyIsRefused(t *testing.T) {
	forEachAgent(t, func(t *testing.T, d dialect, srv *httptest.Server) {
		body := `{"jsonrpc":"2.0","id":"a","method":"` + d.get + `","params":{"id":"` + strings.Repeat("x", agentcore.MaxRequestBytes) + `"}}`
		e, ok := d.RPCRaw(t, srv, body)["error"].(obj)
		if !ok {
			t.Fatal("an oversized request was accepted")
		}
		agenttest.WantCode(t, e, agentcore.CodeInvalidRequest)
	})
}
