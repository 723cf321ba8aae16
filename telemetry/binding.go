package telemetry

import "context"

// BindingJSONRPC is the binding of a call that arrived as JSON-RPC over
// HTTP, the gateway's own endpoint.
const BindingJSONRPC = "jsonrpc"

type bindingKey struct{}

// WithBinding returns ctx marked as a call that arrived over binding (e.g.
// "http_json", "grpc"): a front end that turns another A2A binding into a
// JSON-RPC call served in-process sets it, so the call's span says how the
// caller spoke.
func WithBinding(ctx context.Context, binding string) context.Context {
	return context.WithValue(ctx, bindingKey{}, binding)
}

// Binding is the binding WithBinding put in ctx, else BindingJSONRPC.
func Binding(ctx context.Context) string {
	if b, ok := ctx.Value(bindingKey{}).(string); ok && b != "" {
		return b
	}
	return BindingJSONRPC
}
