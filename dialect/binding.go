package dialect

import "context"

// Binding is the protocol binding a call reached the gateway through: the
// same operation arrives as JSON-RPC, HTTP+JSON or gRPC, and every binding
// ends in the JSON-RPC core. The zero value is JSONRPC.
type Binding uint8

const (
	JSONRPC Binding = iota
	HTTPJSON
	GRPC
)

// Bindings are every binding, in the order cards list them: JSON-RPC first,
// which each SDK's default client then picks, as it would in front of a
// native JSON-RPC agent.
var Bindings = []Binding{JSONRPC, HTTPJSON, GRPC}

// String is the binding's metric label and config spelling.
func (b Binding) String() string {
	switch b {
	case HTTPJSON:
		return "http_json"
	case GRPC:
		return "grpc"
	}
	return "jsonrpc"
}

// CardName is the binding's name on an agent card: protocolBinding in 1.0,
// transport in 0.3.
func (b Binding) CardName() string {
	switch b {
	case HTTPJSON:
		return "HTTP+JSON"
	case GRPC:
		return "GRPC"
	}
	return "JSONRPC"
}

// ParseBinding reads a binding's config spelling (see String).
func ParseBinding(s string) (Binding, bool) {
	for _, b := range Bindings {
		if b.String() == s {
			return b, true
		}
	}
	return 0, false
}

// The context keys are unexported types: only the front ends, which build
// the request the core serves, can set them; no header or body can.
type (
	bindingKey       struct{}
	callerDialectKey struct{}
)

// WithBinding marks ctx as a call that arrived through b. A front end sets
// it on the request it hands the core.
func WithBinding(ctx context.Context, b Binding) context.Context {
	return context.WithValue(ctx, bindingKey{}, b)
}

// BindingOf returns the binding WithBinding set on ctx, else JSONRPC.
func BindingOf(ctx context.Context) Binding {
	b, _ := ctx.Value(bindingKey{}).(Binding)
	return b
}

// WithCallerDialect records the dialect the caller spoke when a front end
// hands the core a call in another one (a 0.3 REST or gRPC call reaches it
// as 1.0 JSON-RPC), so metrics and logs name the caller's.
func WithCallerDialect(ctx context.Context, d ID) context.Context {
	return context.WithValue(ctx, callerDialectKey{}, d)
}

// CallerDialectOf returns the dialect WithCallerDialect set on ctx, or 0
// when none was set.
func CallerDialectOf(ctx context.Context) ID {
	d, _ := ctx.Value(callerDialectKey{}).(ID)
	return d
}
