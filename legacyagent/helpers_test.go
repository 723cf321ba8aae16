package legacyagent

import (
	"net/http/httptest"
	"testing"

	"github.com/a2agate/gateway/internal/agenttest"
)

// The tests read the wire as generic JSON through agenttest, never through
// the agent's own structs, so that a misspelled tag cannot pass unnoticed.

type obj = agenttest.Obj

// client calls as a 0.2.5 client does, with no A2A-Version header.
var client = agenttest.Wire{}

// parallelAgent marks the test parallel, which every test that has an
// agent of its own can be, and serves it a default agent.
func parallelAgent(t *testing.T) *httptest.Server {
	t.Helper()
	t.Parallel()
	return agenttest.Start(t, New(Options{}))
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
