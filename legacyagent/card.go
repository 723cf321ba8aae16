package legacyagent

import "github.com/a2agate/gateway/internal/agentcore"

// agentCard is the 0.2.5 AgentCard.
type agentCard struct {
	ProtocolVersion string `json:"protocolVersion"`
	agentcore.CardBody
	URL                               string            `json:"url"`
	PreferredTransport                string            `json:"preferredTransport"`
	Capabilities                      agentCapabilities `json:"capabilities"`
	SupportsAuthenticatedExtendedCard bool              `json:"supportsAuthenticatedExtendedCard"`
}

type agentCapabilities struct {
	agentcore.Capabilities
	StateTransitionHistory bool `json:"stateTransitionHistory"`
}

// card returns the public or the extended card, advertising url.
func (a *Agent) card(url string, extended bool) agentCard {
	return agentCard{
		ProtocolVersion:    "0.2.5",
		CardBody:           a.core.CardBody(extended),
		URL:                url,
		PreferredTransport: "JSONRPC",
		Capabilities: agentCapabilities{
			Capabilities:           agentcore.Capabilities{Streaming: true, PushNotifications: true},
			StateTransitionHistory: false,
		},
		SupportsAuthenticatedExtendedCard: true,
	}
}
