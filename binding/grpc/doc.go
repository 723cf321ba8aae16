// Package grpcbind serves the A2A gRPC binding, 1.0 (service
// lf.a2a.v1.A2AService of a2a.proto v1.0.1) and 0.3 (a2a.v1.A2AService), in
// front of the gateway's JSON-RPC core.
//
// It is a thin front end: each RPC's request message becomes the canonical
// 1.0 JSON-RPC request of the same method (its ProtoJSON is the JSON-RPC
// params), the core serves that in-process like any JSON-RPC call (auth,
// ownership, translation to the backend's dialect, metrics), and its answer
// is decoded back into the RPC's response message: the result, a gRPC status
// with a google.rpc.ErrorInfo detail, or, for the streaming RPCs, one
// StreamResponse sent for each event as the core writes it.
//
// A call the front end refuses itself, before the core (a request message
// that is no valid protobuf, say), has its caller checked first, when
// Options.Authenticate is set: a caller the core would refuse gets that
// refusal, not an error about its message.
//
// The request context is the RPC's: a deadline the caller sets bounds the
// backend call, and a caller that goes away cancels it.
//
// The protobuf types are those the official Go SDK (a2a-go/v2) generates
// from the same a2a.proto, so no code generation happens here.
package grpcbind
