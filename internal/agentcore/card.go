package agentcore

import (
	"net/http"
)

// Skill is an AgentSkill, spelled alike in 0.2.5 and 1.0.
type Skill struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Tags        []string `json:"tags"`
	Examples    []string `json:"examples,omitempty"`
}

// Provider is an AgentProvider, spelled alike in 0.2.5 and 1.0.
type Provider struct {
	Organization string `json:"organization"`
	URL          string `json:"url"`
}

// CardBody is what 0.2.5 and 1.0 agent cards spell alike. Each agent's card
// embeds it beside the fields of its dialect: the protocol version, the
// endpoint and the capabilities beyond streaming and push.
type CardBody struct {
	Name               string   `json:"name"`
	Description        string   `json:"description"`
	Provider           Provider `json:"provider"`
	Version            string   `json:"version"`
	DefaultInputModes  []string `json:"defaultInputModes"`
	DefaultOutputModes []string `json:"defaultOutputModes"`
	Skills             []Skill  `json:"skills"`
}

// Capabilities are the card capabilities spelled alike in 0.2.5 and 1.0,
// written even when false (required in 0.2.5, proto3 optional and so set in
// 1.0). Both agents have both.
type Capabilities struct {
	Streaming         bool `json:"streaming"`
	PushNotifications bool `json:"pushNotifications"`
}

// CardSpelling is how a dialect describes its agent in the card: what the
// description says, the non-text part kinds the result artifact echoes and
// what the dialect calls the card only the admin skill is listed in.
type CardSpelling struct {
	Description, Echoed, ExtendedCard string
}

// CardBody is the common part of the card, or of the extended card, which
// also lists the admin skill.
func (c *Core[M, A, C]) CardBody(extended bool) CardBody {
	sp := c.card
	// The media modes are text, data parts as JSON, and files of any type,
	// which the result artifact echoes back.
	modes := []string{"text/plain", "application/json", "application/octet-stream"}
	return CardBody{
		Name:               c.Opts.Name,
		Description:        sp.Description,
		Provider:           Provider{Organization: "a2agate", URL: "https://github.com/a2agate/gateway"},
		Version:            "1.0.0",
		DefaultInputModes:  modes,
		DefaultOutputModes: modes,
		Skills:             skills(extended, sp.Echoed, sp.ExtendedCard),
	}
}

// skills are the card's skills.
func skills(extended bool, echoed, extendedCard string) []Skill {
	skills := []Skill{
		{
			ID:          "answer",
			Name:        "Answer questions",
			Description: "Replies at once with a message, without a task, to any text ending in a question mark.",
			Tags:        []string{"question", "message"},
			Examples:    []string{"Is the printer on fire?"},
		},
		{
			ID:   "work",
			Name: "Work on a task",
			Description: `Runs a task through its lifecycle. Text starting with "fail" fails, "input" asks ` +
				`for a name, "wait" works until canceled; anything else completes with a "result" ` +
				`artifact that echoes the text and every ` + echoed + ` part.`,
			Tags:     []string{"task", "lifecycle"},
			Examples: []string{"Reset my password", "input please", "fail now", "wait for me"},
		},
	}
	if extended {
		skills = append(skills, Skill{
			ID:          "admin",
			Name:        "Administer the helpdesk",
			Description: "Listed only in the " + extendedCard + ".",
			Tags:        []string{"admin"},
		})
	}
	return skills
}

// serveCard answers a GET or HEAD with card(the public JSON-RPC URL).
func (c *Core[M, A, C]) serveCard(w http.ResponseWriter, r *http.Request, card func(url string) any) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		MethodNotAllowed(w, "GET, HEAD")
		return
	}
	WriteJSON(w, card(c.PublicURL(r)))
}

// PublicURL is Options.PublicURL, or the JSON-RPC endpoint (/) on the host
// the request reached.
func (c *Core[M, A, C]) PublicURL(r *http.Request) string {
	if c.Opts.PublicURL != "" {
		return c.Opts.PublicURL
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + "/"
}
