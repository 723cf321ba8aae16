package agent10

import (
	"testing"

	"github.com/a2agate/gateway/internal/agentcore"
	"github.com/a2agate/gateway/internal/agenttest"
)

func TestCard(t *testing.T) {
	srv := parallelAgent(t)
	// The card needs no A2A-Version header: clients fetch it to learn the
	// version in the first place.
	card := agenttest.GetJSON(t, srv.URL+"/.well-known/agent-card.json")

	for key, want := range map[string]any{
		"name":                DefaultName,
		"supportedInterfaces": []any{obj{"url": srv.URL + "/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}},
		"capabilities":        obj{"streaming": true, "pushNotifications": true, "extendedAgentCard": true},
		"defaultInputModes":   []any{"text/plain", "application/json", "application/octet-stream"},
	} {
		agenttest.WantJSON(t, key, agenttest.Path(t, card, key), want)
	}
	for _, key := range []string{"description", "version", "defaultOutputModes", "provider"} {
		agenttest.Path(t, card, key) // REQUIRED in the proto
	}
	agenttest.WantJSON(t, "skill ids", agenttest.SkillIDs(t, card), []any{"answer", "work"})
	// 0.x card fields have no place in a 1.0 card.
	for _, key := range []string{"protocolVersion", "url", "preferredTransport", "supportsAuthenticatedExtendedCard", "additionalInterfaces"} {
		if _, ok := card[key]; ok {
			t.Errorf("1.0 card has the 0.x key %q", key)
		}
	}
}

func TestGetExtendedAgentCard(t *testing.T) {
	srv := parallelAgent(t)
	for _, body := range []string{
		agenttest.RPCRequest("GetExtendedAgentCard", obj{}),
		agenttest.RPCRequest("GetExtendedAgentCard", obj{"tenant": "t1"}),
		`{"jsonrpc":"2.0","id":"req-1","method":"GetExtendedAgentCard"}`,
	} {
		out := client.RPCRaw(t, srv, body)
		card, ok := out["result"].(obj)
		if !ok {
			t.Fatalf("%s: %v", body, out)
		}
		agenttest.WantJSON(t, "skill ids", agenttest.SkillIDs(t, card), []any{"answer", "work", "admin"})
		agenttest.WantJSON(t, "interfaces", card["supportedInterfaces"], []any{obj{"url": srv.URL + "/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}})
	}
	wantCode(t, client.CallErr(t, srv, "GetExtendedAgentCard", obj{"id": "x"}), agentcore.CodeInvalidParams)
}
