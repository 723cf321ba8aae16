package agent10

import (
	"net/http"

	"github.com/a2agate/gateway/internal/agentcore"
)

// agentCard is the 1.0 AgentCard.
type agentCard struct {
	Name                string             `json:"name"`
	Description         string             `json:"description"`
	SupportedInterfaces []agentInterface   `json:"supportedInterfaces"`
	Provider            agentcore.Provider `json:"provider"`
	Version             string             `json:"version"`
	Capabilities        agentCapabilities  `json:"capabilities"`
	DefaultInputModes   []string           `json:"defaultInputModes"`
	DefaultOutputModes  []string           `json:"defaultOutputModes"`
	Skills              []agentcore.Skill  `json:"skills"`
}

type agentInterface struct {
	URL             string `json:"url"`
	ProtocolBinding string `json:"protocolBinding"`
	ProtocolVersion string `json:"protocolVersion"`
}

// agentCapabilities holds proto3 optional bools: set, so written even when
// false.
type agentCapabilities struct {
	Streaming         bool `json:"streaming"`
	PushNotifications bool `json:"pushNotifications"`
	ExtendedAgentCard bool `json:"extendedAgentCard"`
}

// card returns the public or the extended card, advertising url.
func (a *Agent) card(url string, extended bool) agentCard {
	return agentCard{
		Name:        a.core.Opts.Name,
		Description: "A helpdesk agent speaking A2A 1.0 JSON-RPC, a test peer of the A2A gateway.",
		SupportedInterfaces: []agentInterface{
			{URL: url, ProtocolBinding: "JSONRPC", ProtocolVersion: "1.0"},
		},
		Provider: agentcore.CardProvider(),
		Version:  agentcore.CardVersion,
		Capabilities: agentCapabilities{
			Streaming:         true,
			PushNotifications: true,
			ExtendedAgentCard: true,
		},
		DefaultInputModes:  agentcore.MediaModes(),
		DefaultOutputModes: agentcore.MediaModes(),
		Skills:             agentcore.Skills(extended, "raw, url and data", "extended agent card"),
	}
}

// getExtendedAgentCard answers GetExtendedAgentCard with the card plus the
// skills only it lists. Its params are optional: the specification's own
// example omits them.
func (a *Agent) getExtendedAgentCard(r *http.Request, _ *getExtendedAgentCardRequest) (any, *agentcore.Error) {
	return a.card(a.core.PublicURL(r), true), nil
}
