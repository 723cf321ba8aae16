package legacyagent

import (
	"net/http"
	"slices"
)

// agentCard is the 0.2.5 AgentCard.
type agentCard struct {
	ProtocolVersion                   string            `json:"protocolVersion"`
	Name                              string            `json:"name"`
	Description                       string            `json:"description"`
	URL                               string            `json:"url"`
	PreferredTransport                string            `json:"preferredTransport"`
	Provider                          agentProvider     `json:"provider"`
	Version                           string            `json:"version"`
	Capabilities                      agentCapabilities `json:"capabilities"`
	DefaultInputModes                 []string          `json:"defaultInputModes"`
	DefaultOutputModes                []string          `json:"defaultOutputModes"`
	Skills                            []agentSkill      `json:"skills"`
	SupportsAuthenticatedExtendedCard bool              `json:"supportsAuthenticatedExtendedCard"`
}

type agentProvider struct {
	Organization string `json:"organization"`
	URL          string `json:"url"`
}

type agentCapabilities struct {
	Streaming              bool `json:"streaming"`
	PushNotifications      bool `json:"pushNotifications"`
	StateTransitionHistory bool `json:"stateTransitionHistory"`
}

type agentSkill struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Tags        []string `json:"tags"`
	Examples    []string `json:"examples,omitempty"`
}

var (
	answerSkill = agentSkill{
		ID:          "answer",
		Name:        "Answer questions",
		Description: "Replies at once with a message, without a task, to any text ending in a question mark.",
		Tags:        []string{"question", "message"},
		Examples:    []string{"Is the printer on fire?"},
	}
	workSkill = agentSkill{
		ID:   "work",
		Name: "Work on a task",
		Description: `Runs a task through its lifecycle. Text starting with "fail" fails, "input" asks ` +
			`for a name, "wait" works until canceled; anything else completes with a "result" ` +
			`artifact that echoes the text and every file and data part.`,
		Tags:     []string{"task", "lifecycle"},
		Examples: []string{"Reset my password", "input please", "fail now", "wait for me"},
	}
	adminSkill = agentSkill{
		ID:          "admin",
		Name:        "Administer the helpdesk",
		Description: "Listed only in the authenticated extended card.",
		Tags:        []string{"admin"},
	}
)

// mediaModes are the input and output modes: text, data parts as JSON, and
// files of any type, which the result artifact echoes back.
var mediaModes = []string{"text/plain", "application/json", "application/octet-stream"}

// card returns the public or the extended card, advertising url.
func (a *Agent) card(url string, extended bool) agentCard {
	skills := []agentSkill{answerSkill, workSkill}
	if extended {
		skills = append(skills, adminSkill)
	}
	return agentCard{
		ProtocolVersion:    "0.2.5",
		Name:               a.opts.Name,
		Description:        "A helpdesk agent speaking A2A 0.2.5 JSON-RPC, shipped with the A2A gateway for demonstrations and tests.",
		URL:                url,
		PreferredTransport: "JSONRPC",
		Provider:           agentProvider{Organization: "a2agate", URL: "https://github.com/a2agate/gateway"},
		Version:            "1.0.0",
		Capabilities: agentCapabilities{
			Streaming:              true,
			PushNotifications:      true,
			StateTransitionHistory: false,
		},
		DefaultInputModes:                 slices.Clone(mediaModes),
		DefaultOutputModes:                slices.Clone(mediaModes),
		Skills:                            skills,
		SupportsAuthenticatedExtendedCard: true,
	}
}

func (a *Agent) serveCard(w http.ResponseWriter, r *http.Request, extended bool) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		methodNotAllowed(w, "GET, HEAD")
		return
	}
	writeJSON(w, a.card(a.publicURL(r), extended))
}

// publicURL is Options.PublicURL, or the JSON-RPC endpoint on the host the
// request reached.
func (a *Agent) publicURL(r *http.Request) string {
	if a.opts.PublicURL != "" {
		return a.opts.PublicURL
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + rpcPath
}
