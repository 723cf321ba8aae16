package agent10

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/a2agate/gateway/internal/agentcore"
	"github.com/a2agate/gateway/internal/agenttest"
)

// The tests read the wire as generic JSON through agenttest, never through
// the agent's own structs, so that a misspelled tag cannot pass unnoticed.

type obj = agenttest.Obj

// client calls as a 1.0 client does; its streams carry one-key
// StreamResponses.
var client = agenttest.Wire{Version: "1.0", OneKey: true}

// parallelAgent marks the test parallel, which every test that has an
// agent of its own can be, and serves it a default agent.
func parallelAgent(t *testing.T) *httptest.Server {
	t.Helper()
	t.Parallel()
	return agenttest.Start(t, New(Options{}))
}

// postVersion sends body with A2A-Version: version, or none when it is "".
func postVersion(t *testing.T, srv *httptest.Server, body, version string) *http.Response {
	t.Helper()
	return agenttest.Post(t, srv, body, version)
}

// wantCode checks the error's code and that its data is exactly one
// google.rpc.ErrorInfo with the code's reason; it returns the ErrorInfo's
// metadata (nil when absent).
func wantCode(t *testing.T, e obj, code int) obj {
	t.Helper()
	agenttest.WantCode(t, e, code)
	data, ok := e["data"].([]any)
	if !ok || len(data) != 1 {
		t.Fatalf("error data = %v, want an array of one ErrorInfo", e["data"])
	}
	info := data[0].(obj)
	if info["@type"] != "type.googleapis.com/google.rpc.ErrorInfo" || info["domain"] != "a2a-protocol.org" || info["reason"] != reasons[code] {
		t.Fatalf("ErrorInfo = %v, want reason %s", info, reasons[code])
	}
	md, _ := info["metadata"].(obj)
	for k, v := range md {
		if _, isString := v.(string); !isString {
			t.Fatalf("ErrorInfo metadata %q = %v, want a string", k, v)
		}
	}
	return md
}

func wantInvalidParams(t *testing.T, e obj) {
	t.Helper()
	wantCode(t, e, agentcore.CodeInvalidParams)
}

// userMessage is a 1.0 user message whose first part is text.
func userMessage(text string, more ...obj) obj {
	parts := []any{obj{"text": text}}
	for _, p := range more {
		parts = append(parts, p)
	}
	return obj{"messageId": "m-" + text, "role": "ROLE_USER", "parts": parts}
}

func send(text string) obj { return obj{"message": userMessage(text)} }
