package legacyagent

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

// JSON-RPC and A2A 0.2.5 error codes (specification §8).
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
	rpcRequest = agenttest.RPCRequest
	wantCode   = agenttest.WantCode
	path       = agenttest.Path
	str        = agenttest.Str
	jsonEqual  = agenttest.JSONEqual
	wantJSON   = agenttest.WantJSON
	keys       = agenttest.Keys
)

func startAgent(t *testing.T, opts Options) (*Agent, *httptest.Server) {
	t.Helper()
	a := New(opts)
	return a, agenttest.Start(t, a)
}

// post sends body as a 0.2.5 client does, with no A2A-Version header.
func post(t *testing.T, srv *httptest.Server, body string) *http.Response {
	t.Helper()
	return agenttest.Post(t, srv, body, "")
}

// rpcRaw posts body and decodes the whole JSON-RPC response.
func rpcRaw(t *testing.T, srv *httptest.Server, body string) obj {
	t.Helper()
	return agenttest.DecodeResponse(t, post(t, srv, body))
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

func openStream(t *testing.T, srv *httptest.Server, method string, params any) *sse {
	t.Helper()
	return agenttest.OpenStream(t, post(t, srv, rpcRequest(method, params)), false)
}

// userMessage is a 0.2.5 user message whose first part is text.
func userMessage(text string, more ...obj) obj {
	parts := []any{obj{"kind": "text", "text": text}}
	for _, p := range more {
		parts = append(parts, p)
	}
	return obj{"kind": "message", "messageId": "m-" + text, "role": "user", "parts": parts}
}

func send(text string) obj { return obj{"message": userMessage(text)} }
