package legacyagent

import (
	"net/http"

	"github.com/a2agate/gateway/internal/agentcore"
)

// The card routes; JSON-RPC is served on /.
const (
	cardPath         = "/.well-known/agent.json"
	extendedCardPath = "/agent/authenticatedExtendedCard"
)

// DefaultName is the agent card's name when Options.Name is empty.
const DefaultName = "Legacy Helpdesk Agent"

// Options configures an Agent. The zero value is usable.
type Options = agentcore.Options

// Agent is an A2A 0.2.5 agent. It is an http.Handler serving JSON-RPC on
// POST / and the agent cards on GET; see the package documentation for its
// behaviour.
type Agent struct{ core *core }

// core is the agent's dialect-neutral part, instantiated with the 0.2.5
// wire structs.
type core = agentcore.Core[message, artifact, pushConfig]

// New returns an Agent configured by opts.
func New(opts Options) *Agent {
	a := &Agent{}
	methods := &agentcore.Methods{
		Unary: map[string]agentcore.Unary{
			"message/send":                        agentcore.Handle(decodeParams, a.messageSend),
			"tasks/get":                           agentcore.Handle(decodeParams, a.tasksGet),
			"tasks/cancel":                        agentcore.Handle(decodeParams, a.tasksCancel),
			"tasks/pushNotificationConfig/set":    agentcore.Handle(decodeParams, a.pushConfigSet),
			"tasks/pushNotificationConfig/get":    agentcore.Handle(decodeParams, a.pushConfigGet),
			"tasks/pushNotificationConfig/list":   agentcore.Handle(decodeParams, a.pushConfigList),
			"tasks/pushNotificationConfig/delete": agentcore.Handle(decodeParams, a.pushConfigDelete),
		},
		Streaming: map[string]agentcore.Streaming{
			"message/stream":    agentcore.HandleStream(decodeParams, a.messageStream),
			"tasks/resubscribe": agentcore.HandleStream(decodeParams, a.tasksResubscribe),
		},
		EncodeError: encodeError,
	}
	a.core = agentcore.New[message, artifact, pushConfig](opts, agentcore.Wire[message, artifact, pushConfig]{
		DefaultName: DefaultName,
		Dialect:     wire{},
		Methods:     methods,
		Cards: map[string]func(string) any{
			cardPath:         func(url string) any { return a.card(url, false) },
			extendedCardPath: func(url string) any { return a.card(url, true) },
		},
		Card: agentcore.CardSpelling{
			Description:  "A helpdesk agent speaking A2A 0.2.5 JSON-RPC, shipped with the A2A gateway for demonstrations and tests.",
			Echoed:       "file and data",
			ExtendedCard: "authenticated extended card",
		},
		PushID:   pushID,
		Spelling: spelling,
	})
	// As 0.2.5 SDKs do: the whole task after each batch of events, the
	// token in X-A2A-Notification-Token.
	a.core.SendWebhooks(agentcore.Webhooks[message, artifact, pushConfig]{
		TokenHeader: "X-A2A-Notification-Token",
		Target:      func(c pushConfig) (string, string) { return c.URL, c.Token },
		Bodies: func(t agentcore.Task[message, artifact], _ []agentcore.Event[message, artifact]) []any {
			return []any{renderTask(t, 0)}
		},
	})
	return a
}

// ServeHTTP serves JSON-RPC on POST / and the agent cards on GET.
func (a *Agent) ServeHTTP(w http.ResponseWriter, r *http.Request) { a.core.ServeHTTP(w, r) }

// Close stops every running task script, ends open streams and blocking
// sends, and waits for the scripts to return. Later JSON-RPC calls get 503.
// Close is idempotent.
func (a *Agent) Close() { a.core.Close() }
