package agent10

import (
	"net/http"

	"github.com/a2agate/gateway/internal/agentcore"
)

// cardPath is the card's route; JSON-RPC is served on /.
const cardPath = "/.well-known/agent-card.json"

// DefaultName is the agent card's name when Options.Name is empty.
const DefaultName = "Helpdesk Agent"

// Options configures an Agent. The zero value is usable.
type Options = agentcore.Options

// Agent is an A2A 1.0 agent. It is an http.Handler serving JSON-RPC on
// POST / and the public agent card on GET; see the package documentation
// for its behaviour.
type Agent struct{ core *core }

// core is the agent's dialect-neutral part, instantiated with the 1.0 wire
// structs.
type core = agentcore.Core[message, artifact, pushConfig]

// New returns an Agent configured by opts.
func New(opts Options) *Agent {
	a := &Agent{}
	methods := &agentcore.Methods{
		Unary: map[string]agentcore.Unary{
			"SendMessage":                      agentcore.Handle(decodeParams, a.sendMessage),
			"GetTask":                          agentcore.Handle(decodeParams, a.getTask),
			"ListTasks":                        agentcore.Handle(decodeParams, a.listTasks),
			"CancelTask":                       agentcore.Handle(decodeParams, a.cancelTask),
			"CreateTaskPushNotificationConfig": agentcore.Handle(decodeParams, a.createPushConfig),
			"GetTaskPushNotificationConfig":    agentcore.Handle(decodeParams, a.getPushConfig),
			"ListTaskPushNotificationConfigs":  agentcore.Handle(decodeParams, a.listPushConfigs),
			"DeleteTaskPushNotificationConfig": agentcore.Handle(decodeParams, a.deletePushConfig),
			"GetExtendedAgentCard":             agentcore.Handle(decodeParams, a.getExtendedAgentCard),
		},
		Streaming: map[string]agentcore.Streaming{
			"SendStreamingMessage": agentcore.HandleStream(decodeParams, a.sendStreamingMessage),
			"SubscribeToTask":      agentcore.HandleStream(decodeParams, a.subscribeToTask),
		},
		// Like the Python 1.0 server, the version is checked once the
		// method is known: an unknown method is -32601 whatever the header
		// says.
		Admit:       checkVersion,
		EncodeError: encodeError,
	}
	a.core = agentcore.New[message, artifact, pushConfig](opts, agentcore.Wire[message, artifact, pushConfig]{
		DefaultName: DefaultName,
		Dialect:     wire{},
		Methods:     methods,
		Cards:       map[string]func(string) any{cardPath: func(url string) any { return a.card(url, false) }},
		Card: agentcore.CardSpelling{
			Description:  "A helpdesk agent speaking A2A 1.0 JSON-RPC, a test peer of the A2A gateway.",
			Echoed:       "raw, url and data",
			ExtendedCard: "extended agent card",
		},
		PushID:   pushID,
		Spelling: spelling,
	})
	// As a2a-go v2 does: each event's StreamResponse, the token in
	// A2A-Notification-Token.
	a.core.SendWebhooks(agentcore.Webhooks[message, artifact, pushConfig]{
		TokenHeader: "A2A-Notification-Token",
		Target:      func(c pushConfig) (string, string) { return c.URL, c.Token },
		Bodies: func(_ agentcore.Task[message, artifact], events []agentcore.Event[message, artifact]) []any {
			bodies := make([]any, len(events))
			for i, e := range events {
				bodies[i] = renderEvent(e)
			}
			return bodies
		},
	})
	return a
}

// ServeHTTP serves JSON-RPC on POST / and the public agent card on GET.
func (a *Agent) ServeHTTP(w http.ResponseWriter, r *http.Request) { a.core.ServeHTTP(w, r) }

// Close stops every running task script, ends open streams and blocking
// sends, and waits for the scripts to return. Later JSON-RPC calls get 503.
// Close is idempotent.
func (a *Agent) Close() { a.core.Close() }
