package agent10

import (
	"testing"

	"github.com/a2agate/gateway/internal/agentcore"
	"github.com/a2agate/gateway/internal/agenttest"
)

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
