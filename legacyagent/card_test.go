package legacyagent

import (
	"testing"

	"github.com/a2agate/gateway/internal/agenttest"
)

func TestExtendedCard(t *testing.T) {
	srv := parallelAgent(t)
	card := agenttest.GetJSON(t, srv.URL+"/agent/authenticatedExtendedCard")
	agenttest.WantJSON(t, "skill ids", agenttest.SkillIDs(t, card), []any{"answer", "work", "admin"})
	if card["protocolVersion"] != "0.2.5" || card["url"] != srv.URL+"/" {
		t.Fatalf("extended card protocolVersion, url = %v, %v", card["protocolVersion"], card["url"])
	}
}
