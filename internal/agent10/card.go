package agent10

import (
	"net/http"

	"github.com/a2agate/gateway/internal/agentcore"
)

// agentCard is the 1.0 AgentCard.
type agentCard struct {
	agentcore.CardBody
	SupportedInterfaces []agentInterface  `json:"supportedInterfaces"`
	Capabilities        agentCapabilities `json:"capabilities"`
}

type agentInterface struct {
	URL             string `json:"url"`
	ProtocolBinding string `json:"protocolBinding"`
	ProtocolVersion string `json:"protocolVersion"`
}

// agentCapabilities holds proto3 optional bools: set, so written even when
// false.
type agentCapabilities struct {
	agentcore.Capabilities
	ExtendedAgentCard bool `json:"extendedAgentCard"`
}

// card returns the public or the extended card, advertising url.
func (a *Agent) card(url string, extended bool) agentCard {
	return agentCard{
		CardBody:            a.core.CardBody(extended),
		SupportedInterfaces: []agentInterface{{URL: url, ProtocolBinding: "JSONRPC", ProtocolVersion: "1.0"}},
		Capabilities: agentCapabilities{
			Capabilities:      agentcore.Capabilities{Streaming: true, PushNotifications: true},
			ExtendedAgentCard: true,
		},
	}
}

// getExtendedAgentCard answers GetExtendedAgentCard with the card plus the
// skills only it lists. Its params are optional: the specification's own
// example omits them.
func (a *Agent) getExtendedAgentCard(r *http.Request, _ *getExtendedAgentCardRequest) (any, *agentcore.Error) {
	return a.card(a.core.PublicURL(r), true), nil
}
