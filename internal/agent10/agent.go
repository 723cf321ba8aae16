package agent10

import (
	"net/http"
	"time"

	"github.com/a2agate/gateway/internal/agentcore"
)

// Routes served by an Agent.
const (
	rpcPath  = "/"
	cardPath = "/.well-known/agent-card.json"
)

// DefaultName is the agent card's name when Options.Name is empty.
const DefaultName = "Helpdesk Agent"

// Options configures an Agent. The zero value is usable.
type Options = agentcore.Options

// Agent is an A2A 1.0 agent. It is an http.Handler; see the package
// documentation for its routes and behaviour.
type Agent struct {
	core    *core
	methods *agentcore.Methods
}

// core is the agent's dialect-neutral part, instantiated with the 1.0 wire
// structs.
type core = agentcore.Core[message, artifact, pushConfig]

// timestampPrecision is the resolution of formatTimestamp, so that a
// timestamp read back from the wire (statusTimestampAfter, a page token)
// compares equal to the one stored.
const timestampPrecision = time.Millisecond

// New returns an Agent configured by opts.
func New(opts Options) *Agent {
	if opts.Name == "" {
		opts.Name = DefaultName
	}
	a := &Agent{core: agentcore.New[message, artifact, pushConfig](opts, wire{}, timestampPrecision)}
	a.methods = &agentcore.Methods{
		Unary: map[string]agentcore.Unary{
			"SendMessage":                      a.sendMessage,
			"GetTask":                          a.getTask,
			"ListTasks":                        a.listTasks,
			"CancelTask":                       a.cancelTask,
			"CreateTaskPushNotificationConfig": a.createPushConfig,
			"GetTaskPushNotificationConfig":    a.getPushConfig,
			"ListTaskPushNotificationConfigs":  a.listPushConfigs,
			"DeleteTaskPushNotificationConfig": a.deletePushConfig,
			"GetExtendedAgentCard":             a.getExtendedAgentCard,
		},
		Streaming: map[string]agentcore.Streaming{
			"SendStreamingMessage": a.sendStreamingMessage,
			"SubscribeToTask":      a.subscribeToTask,
		},
		// Like the Python 1.0 server, the version is checked once the
		// method is known: an unknown method is -32601 whatever the header
		// says.
		Admit:       checkVersion,
		EncodeError: encodeError,
	}
	return a
}

// ServeHTTP serves JSON-RPC on POST / and the public agent card on GET.
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
	default:
		http.NotFound(w, r)
	}
}

// Close stops every running task script, ends open streams and blocking
// sends, and waits for the scripts to return. Later JSON-RPC calls get 503.
// Close is idempotent.
func (a *Agent) Close() { a.core.Close() }
