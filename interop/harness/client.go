package harness

import (
	"context"
	"iter"
	"slices"
)

// Client is what the shared scenarios ask of an SDK client, in neutral
// shapes; each client module adapts its SDK's client to it.
type Client interface {
	Send(ctx context.Context, req SendRequest) (Result, error)
	Stream(ctx context.Context, req SendRequest) iter.Seq2[Event, error]
	Subscribe(ctx context.Context, taskID string) iter.Seq2[Event, error]
	// GetTask leaves historyLength unset when it is nil.
	GetTask(ctx context.Context, taskID string, historyLength *int) (*Task, error)
	Cancel(ctx context.Context, taskID string) (*Task, error)
	SetPushConfig(ctx context.Context, config PushConfig) (*PushConfig, error)
	GetPushConfig(ctx context.Context, taskID, configID string) (*PushConfig, error)
	ListPushConfigs(ctx context.Context, taskID string) ([]*PushConfig, error)
	DeletePushConfig(ctx context.Context, taskID, configID string) error
}

// Module is what the shared scenarios ask of a client module.
type Module interface {
	// Client returns the connection the scenarios share (Env.Client).
	Client(ctx context.Context, c Checker) Client
	// Discover dials anew, as an application does, checks what of the
	// card is its SDK's (the endpoint it picks for the preferred binding,
	// the protocol version) and returns the card and the new client;
	// SentOver checks the URLs that client's first send requested
	// against the preferred binding.
	Discover(ctx context.Context, c Checker) (AgentCard, Client)
	SentOver(c Checker, sent []string)
	// CodeOf reads the JSON-RPC code off an error the SDK returned.
	CodeOf(err error) (int, bool)
	// RawRPC posts body verbatim to the JSON-RPC endpoint of the card.
	RawRPC(ctx context.Context, c Checker, body string) map[string]any
}

// Dialect is what the shared scenarios need to know of the client's A2A
// dialect: a few checks are one dialect's (the 0.3 final flag, 1.0's
// history without limit), and the hand-made posts name its JSON-RPC
// methods.
type Dialect struct {
	Version                   string
	SendMethod, UnknownMethod string
}

var (
	Dialect03 = Dialect{Version: "0.3", SendMethod: "message/send", UnknownMethod: "tasks/doesNotExist"}
	Dialect10 = Dialect{Version: "1.0", SendMethod: "SendMessage", UnknownMethod: "DoesNotExist"}
)

// Suite is a client module's run of the shared scenarios.
type Suite struct {
	Module
	Setup
	Dialect
	// Deviations are the native servers' answers against their own spec
	// that the client's scenarios accept in direct runs.
	Deviations Deviations
	// LostStreamError asserts the deviation of a streaming call whose
	// error the SDK cannot read (see go10's nativeDeviations): send is
	// the streaming send, nil for a subscribe to taskID. Nil when no
	// backend of the client's dialect deviates so.
	LostStreamError func(ctx context.Context, c Checker, events []Event, err error, taskID string, send *SendRequest)
}

// Deviates reports whether a direct run meets one of the Deviations.
func (s *Suite) Deviates(scenario string) bool {
	return s.Deviations.Apply(s.Direct, s.Backend, scenario)
}

// ExpectCode ends the scenario unless err carries one of codes.
func (s *Suite) ExpectCode(c Checker, err error, what string, codes ...int) {
	ExpectCode(c, s.CodeOf, err, what, codes...)
}

func (s *Suite) is10() bool { return s.Version == "1.0" }

// Deviations mirrors NATIVE_DEVIATIONS in clients/scenarios.mjs: for a
// scenario, the native SDK servers (backend labels) whose answer departs
// from their own spec, accepted (and asserted exactly) only in direct runs,
// never through a gateway.
type Deviations map[string][]string

// Apply reports whether the scenario meets one of those answers: a direct
// run against a listed backend.
func (d Deviations) Apply(direct bool, backend, scenario string) bool {
	return direct && slices.Contains(d[scenario], backend)
}
