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

// CardProvider is the provider both agents' cards name: the project that
// ships them.
func CardProvider() Provider {
	return Provider{Organization: "a2agate", URL: "https://github.com/a2agate/gateway"}
}

// CardVersion is the agent version both cards give.
const CardVersion = "1.0.0"

// Skills are the card's skills. echoed names the non-text part kinds the
// result artifact copies and extendedCard what the dialect calls the card
// the admin skill is listed in.
func Skills(extended bool, echoed, extendedCard string) []Skill {
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

// MediaModes are the input and output modes: text, data parts as JSON, and
// files of any type, which the result artifact echoes back.
func MediaModes() []string {
	return []string{"text/plain", "application/json", "application/octet-stream"}
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
