package legacyagent

import "github.com/a2agate/gateway/internal/agentcore"

// agentCard is the 0.2.5 AgentCard.
type agentCard struct {
	ProtocolVersion                   string             `json:"protocolVersion"`
	Name                              string             `json:"name"`
	Description                       string             `json:"description"`
	URL                               string             `json:"url"`
	PreferredTransport                string             `json:"preferredTransport"`
	Provider                          agentcore.Provider `json:"provider"`
	Version                           string             `json:"version"`
	Capabilities                      agentCapabilities  `json:"capabilities"`
	DefaultInputModes                 []string           `json:"defaultInputModes"`
	DefaultOutputModes                []string           `json:"defaultOutputModes"`
	Skills                            []agentcore.Skill  `json:"skills"`
	SupportsAuthenticatedExtendedCard bool               `json:"supportsAuthenticatedExtendedCard"`
}

type agentCapabilities struct {
	Streaming              bool `json:"streaming"`
	PushNotifications      bool `json:"pushNotifications"`
	StateTransitionHistory bool `json:"stateTransitionHistory"`
}

// card returns the public or the extended card, advertising url.
func (a *Agent) card(url string, extended bool) agentCard {
	return agentCard{
		ProtocolVersion:    "0.2.5",
		Name:               a.core.Opts.Name,
		Description:        "A helpdesk agent speaking A2A 0.2.5 JSON-RPC, shipped with the A2A gateway for demonstrations and tests.",
		URL:                url,
		PreferredTransport: "JSONRPC",
		Provider:           agentcore.CardProvider(),
		Version:            agentcore.CardVersion,
		Capabilities: agentCapabilities{
			Streaming:              true,
			PushNotifications:      true,
			StateTransitionHistory: false,
		},
		DefaultInputModes:                 agentcore.MediaModes(),
		DefaultOutputModes:                agentcore.MediaModes(),
		Skills:                            agentcore.Skills(extended, "file and data", "authenticated extended card"),
		SupportsAuthenticatedExtendedCard: true,
	}
}
