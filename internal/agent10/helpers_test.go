package agent10

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/a2agate/gateway/internal/agentcore"
	"github.com/a2agate/gateway/internal/agentcore/agenttest"
)

// The tests read the wire as generic JSON through agenttest, never through
// the agent's own structs, so that a misspelled tag cannot pass unnoticed.

const testTimeout = agenttest.Timeout

// question is the status message of an input-required task.
const question = agentcore.Question

// JSON-RPC error codes the 1.0 agent shares with 0.2.5.
const (
	codeParseError        = agentcore.CodeParseError
	codeInvalidRequest    = agentcore.CodeInvalidRequest
	codeMethodNotFound    = agentcore.CodeMethodNotFound
	codeInvalidParams     = agentcore.CodeInvalidParams
	codeTaskNotFound      = agentcore.CodeTaskNotFound
	codeTaskNotCancelable = agentcore.CodeTaskNotCancelable
)

type (
	obj = agenttest.Obj
	sse = agenttest.SSE
)

var (
	rpcRequest     = agenttest.RPCRequest
	decodeResponse = agenttest.DecodeResponse
	path           = agenttest.Path
	str            = agenttest.Str
	jsonEqual      = agenttest.JSONEqual
	wantJSON       = agenttest.WantJSON
	keys           = agenttest.Keys
)

func startAgent(t *testing.T, opts Options) (*Agent, *httptest.Server) {
	t.Helper()
	a := New(opts)
	return a, agenttest.Start(t, a)
}

// post sends body with the version header of a 1.0 client.
func post(t *testing.T, srv *httptest.Server, body string) *http.Response {
	t.Helper()
	return agenttest.Post(t, srv, body, "1.0")
}

// postVersion sends body with A2A-Version: version, or none when it is "".
func postVersion(t *testing.T, srv *httptest.Server, body, version string) *http.Response {
	t.Helper()
	return agenttest.Post(t, srv, body, version)
}

// rpcRaw posts body and decodes the whole JSON-RPC response.
func rpcRaw(t *testing.T, srv *httptest.Server, body string) obj {
	t.Helper()
	return decodeResponse(t, post(t, srv, body))
}

// call invokes method and returns its result, failing on a JSON-RPC error.
func call(t *testing.T, srv *httptest.Server, method string, params any) any {
	t.Helper()
	return agenttest.Result(t, rpcRaw(t, srv, rpcRequest(method, params)), method)
}

// callErr invokes method and returns its JSON-RPC error object.
func callErr(t *testing.T, srv *httptest.Server, method string, params any) obj {
	t.Helper()
	return agenttest.ErrorOf(t, rpcRaw(t, srv, rpcRequest(method, params)), method)
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

// openStream calls a streaming method. Each result must be a
// StreamResponse: an object with one key.
func openStream(t *testing.T, srv *httptest.Server, method string, params any) *sse {
	t.Helper()
	return agenttest.OpenStream(t, post(t, srv, rpcRequest(method, params)), true)
}

// serve runs one JSON-RPC call straight through ServeHTTP, so that it can
// run inside a synctest bubble, and returns the response body.
func serve(t *testing.T, a *Agent, method string, params any) string {
	t.Helper()
	return agenttest.Serve(t, a, "1.0", method, params)
}

func serveResult(t *testing.T, a *Agent, method string, params any) obj {
	t.Helper()
	return agenttest.ServeResult(t, a, "1.0", method, params)
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
