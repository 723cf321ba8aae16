package legacyagent

import (
	"testing"

	"github.com/a2agate/gateway/internal/agenttest"
)

func TestCard(t *testing.T) {
	srv := parallelAgent(t)
	card := agenttest.GetJSON(t, srv.URL+"/.well-known/agent.json")

	for key, want := range map[string]any{
		"protocolVersion":                   "0.2.5",
		"name":                              DefaultName,
		"url":                               srv.URL + "/",
		"preferredTransport":                "JSONRPC",
		"supportsAuthenticatedExtendedCard": true,
		"capabilities":                      obj{"streaming": true, "pushNotifications": true, "stateTransitionHistory": false},
		"defaultInputModes":                 []any{"text/plain", "application/json", "application/octet-stream"},
	} {
		agenttest.WantJSON(t, key, agenttest.Path(t, card, key), want)
	}
	for _, key := range []string{"description", "version", "defaultOutputModes"} {
		agenttest.Path(t, card, key) // required by the 0.2.5 schema
	}
	agenttest.WantJSON(t, "skill ids", agenttest.SkillIDs(t, card), []any{"answer", "work"})
	for _, key := range []string{"supportedInterfaces", "additionalInterfaces"} {
		if _, ok := card[key]; ok {
			t.Errorf("0.2.5 card has %q", key)
		}
	}
}

func TestExtendedCard(t *testing.T) {
	srv := parallelAgent(t)
	card := agenttest.GetJSON(t, srv.URL+"/agent/authenticatedExtendedCard")
	agenttest.WantJSON(t, "skill ids", agenttest.SkillIDs(t, card), []any{"answer", "work", "admin"})
	if card["protocolVersion"] != "0.2.5" || card["url"] != srv.URL+"/" {
		t.Fatalf("extended card protocolVersion, url = %v, %v", card["protocolVersion"], card["url"])
	}
}
