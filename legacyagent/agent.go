package legacyagent

import (
	"net/http"
	"time"

	"github.com/a2agate/gateway/internal/agentcore"
)

// Routes served by an Agent.
const (
	rpcPath          = "/"
	cardPath         = "/.well-known/agent.json"
	extendedCardPath = "/agent/authenticatedExtendedCard"
)

// DefaultName is the agent card's name when Options.Name is empty.
const DefaultName = "Legacy Helpdesk Agent"

// Options configures an Agent. The zero value is usable.
type Options = agentcore.Options

// Agent is an A2A 0.2.5 agent. It is an http.Handler; see the package
// documentation for its routes and behaviour.
type Agent struct {
	core    *core
	methods *agentcore.Methods
}

// core is the agent's dialect-neutral part, instantiated with the 0.2.5
// wire structs.
type core = agentcore.Core[message, artifact, pushConfig]

// timestampPrecision is the resolution of formatTimestamp.
const timestampPrecision = time.Microsecond

// New returns an Agent configured by opts.
func New(opts Options) *Agent {
	if opts.Name == "" {
		opts.Name = DefaultName
	}
	a := &Agent{core: agentcore.New[message, artifact, pushConfig](opts, wire{}, timestampPrecision)}
	a.methods = &agentcore.Methods{
		Unary: map[string]agentcore.Unary{
			"message/send":                        a.messageSend,
			"tasks/get":                           a.tasksGet,
			"tasks/cancel":                        a.tasksCancel,
			"tasks/pushNotificationConfig/set":    a.pushConfigSet,
			"tasks/pushNotificationConfig/get":    a.pushConfigGet,
			"tasks/pushNotificationConfig/list":   a.pushConfigList,
			"tasks/pushNotificationConfig/delete": a.pushConfigDelete,
		},
		Streaming: map[string]agentcore.Streaming{
			"message/stream":    a.messageStream,
			"tasks/resubscribe": a.tasksResubscribe,
		},
		EncodeError: encodeError,
	}
	return a
}

// ServeHTTP serves JSON-RPC on POST / and the agent cards on GET.
func (a *Agent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case rpcPath:
		if r.Method != http.MethodPost {
			agentcore.MethodNotAllowed(w, http.MethodPost)
			return
		}
		a.core.ServeRPC(w, r, a.methods)
	case cardPath:
		a.core.ServeCard(w, r, func(url string) any { return a.card(url, false) })
	case extendedCardPath:
		a.core.ServeCard(w, r, func(url string) any { return a.card(url, true) })
	default:
		http.NotFound(w, r)
	}
}

// Close stops every running task script, ends open streams and blocking
// sends, and waits for the scripts to return. Later JSON-RPC calls get 503.
// Close is idempotent.
func (a *Agent) Close() { a.core.Close() }
