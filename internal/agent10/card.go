package agent10

import (
	"encoding/json"
	"net/http"
	"slices"
)

// agentCard is the 1.0 AgentCard.
type agentCard struct {
	Name                string            `json:"name"`
	Description         string            `json:"description"`
	SupportedInterfaces []agentInterface  `json:"supportedInterfaces"`
	Provider            agentProvider     `json:"provider"`
	Version             string            `json:"version"`
	Capabilities        agentCapabilities `json:"capabilities"`
	DefaultInputModes   []string          `json:"defaultInputModes"`
	DefaultOutputModes  []string          `json:"defaultOutputModes"`
	Skills              []agentSkill      `json:"skills"`
}

type agentInterface struct {
	URL             string `json:"url"`
	ProtocolBinding string `json:"protocolBinding"`
	ProtocolVersion string `json:"protocolVersion"`
}

type agentProvider struct {
	URL          string `json:"url"`
	Organization string `json:"organization"`
}

// agentCapabilities holds proto3 optional bools: set, so written even when
// false.
type agentCapabilities struct {
	Streaming         bool `json:"streaming"`
	PushNotifications bool `json:"pushNotifications"`
	ExtendedAgentCard bool `json:"extendedAgentCard"`
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
			`artifact that echoes the text and every raw, url and data part.`,
		Tags:     []string{"task", "lifecycle"},
		Examples: []string{"Reset my password", "input please", "fail now", "wait for me"},
	}
	adminSkill = agentSkill{
		ID:          "admin",
		Name:        "Administer the helpdesk",
		Description: "Listed only in the extended agent card.",
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
		Name:        a.opts.Name,
		Description: "A helpdesk agent speaking A2A 1.0 JSON-RPC, a test peer of the A2A gateway.",
		SupportedInterfaces: []agentInterface{
			{URL: url, ProtocolBinding: "JSONRPC", ProtocolVersion: "1.0"},
		},
		Provider: agentProvider{URL: "https://github.com/a2agate/gateway", Organization: "a2agate"},
		Version:  "1.0.0",
		Capabilities: agentCapabilities{
			Streaming:         true,
			PushNotifications: true,
			ExtendedAgentCard: true,
		},
		DefaultInputModes:  slices.Clone(mediaModes),
		DefaultOutputModes: slices.Clone(mediaModes),
		Skills:             skills,
	}
}

func (a *Agent) serveCard(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		methodNotAllowed(w, "GET, HEAD")
		return
	}
	writeJSON(w, a.card(a.publicURL(r), false))
}

// getExtendedAgentCard answers GetExtendedAgentCard with the card plus the
// skills only it lists. Its params are optional: the specification's own
// example omits them.
func (a *Agent) getExtendedAgentCard(r *http.Request, params json.RawMessage) (any, *rpcError) {
	var p getExtendedAgentCardRequest
	if rerr := decodeParams(params, &p); rerr != nil {
		return nil, rerr
	}
	return a.card(a.publicURL(r), true), nil
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
