package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/a2agate/gateway/interop/harness"
	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
)

// env is one run's connection and the transport the client prefers.
type env struct {
	*harness.Env[*a2a.AgentCard, *a2aclient.Client]
	binding a2a.TransportProtocol
}

// endpoint is the interface a2aclient's factory picks from the card: the
// first one of protocol major version 1 in the preferred binding
// (a2aclient/factory.go selectTransport sorts by version, then by
// Config.PreferredTransports).
func (e *env) endpoint(ctx context.Context, c harness.Checker) *a2a.AgentInterface {
	card := e.Card(ctx, c)
	for _, iface := range card.SupportedInterfaces {
		if iface.ProtocolBinding == e.binding && strings.HasPrefix(string(iface.ProtocolVersion), "1.") {
			return iface
		}
	}
	c.Fatalf("card has no %s 1.x interface: %+v", e.binding, card.SupportedInterfaces)
	return nil
}

// Discover checks the 1.0 card: the interface the SDK picks for the
// preferred binding is the endpoint (a gRPC one the gateway's host:port,
// a gRPC target), of protocol version 1.
func (e *env) Discover(ctx context.Context, c harness.Checker) (harness.AgentCard, harness.Client) {
	conn, err := e.Dialer.Dial(ctx)
	c.NoErr(err, "discovery")
	iface := e.endpoint(ctx, c)
	want := e.endpointURL(c)
	// Equal up to a trailing slash, as in clients/scenarios.mjs.
	harness.Equal(c, strings.TrimSuffix(iface.URL, "/"), want, fmt.Sprintf("%s endpoint the client resolved from the card", e.binding))
	c.Check(strings.HasPrefix(string(iface.ProtocolVersion), "1."), "protocolVersion %q for a 1.0 client", iface.ProtocolVersion)
	caps := conn.Card.Capabilities
	return harness.AgentCard{Name: conn.Card.Name, Streaming: caps.Streaming, PushNotifications: caps.PushNotifications}, adapter{conn.Client}
}

// endpointURL is where the client must send: the base URL without its
// trailing slash, for gRPC its host:port.
func (e *env) endpointURL(c harness.Checker) string {
	if e.binding != a2a.TransportProtocolGRPC {
		return strings.TrimSuffix(e.BaseURL, "/")
	}
	base, err := url.Parse(e.BaseURL)
	c.NoErr(err, "base url")
	return base.Host
}

// SentOver: JSON-RPC posts to the endpoint, REST to its message:send
// route, gRPC not over HTTP/1.1.
func (e *env) SentOver(c harness.Checker, sent []string) {
	want := e.endpointURL(c)
	switch e.binding {
	case a2a.TransportProtocolJSONRPC:
		c.Check(len(sent) == 1 && strings.TrimSuffix(sent[0], "/") == want, "JSON-RPC send requested %v", sent)
	case a2a.TransportProtocolHTTPJSON:
		c.Check(len(sent) == 1 && sent[0] == want+"/message:send", "REST send requested %v, want %s/message:send", sent, want)
	case a2a.TransportProtocolGRPC:
		c.Check(len(sent) == 0, "gRPC send made HTTP requests %v", sent)
	}
}

// skipReason says why a scenario cannot run over the chosen transport.
func (e *env) skipReason(scenario string) string {
	if reason := harness.JSONRPCOnly(string(e.binding), scenario); reason != "" {
		return reason
	}
	// The proto's Part.data is a google.protobuf.Value, but a2a-go v2.3.1's
	// gRPC client converts a data part to a Struct only and refuses any
	// other value before a request is sent (a2apb/v1/pbconv/to_proto.go
	// toProtoDataPart: "DataPart value must be a map").
	if e.binding == a2a.TransportProtocolGRPC && scenario == "data-non-object" {
		return "skipped over GRPC: a2a-go v2.3.1's gRPC client cannot send a non-object data part (pbconv toProtoDataPart)"
	}
	return ""
}

// CodeOf reads the code off the error's reason: a2a-go v2 keeps no code
// on the error (internal/jsonrpc FromJSONRPCError maps each known code to
// a sentinel wrapped in *a2a.Error, unknown codes to ErrInternalError),
// and a2a.ErrorReason names the sentinel's reason ("INTERNAL_ERROR" for
// any error that wraps none, which is no A2A error here).
//
// Strictness of a2a-go v2.3.1 that a gateway must satisfy, from the module
// source (github.com/a2aproject/a2a-go/v2@v2.3.1):
//   - a2aclient/jsonrpc.go sendStreamingRequest takes any HTTP 200 as a
//     stream and parseSSEStream reads only "data:" lines, so a streaming
//     call answered with a plain JSON error body is an empty, successful
//     stream;
//   - internal/jsonrpc Error.Data is a list of typed details
//     (google.rpc style), so an error whose data is an object fails to
//     decode.
func (e *env) CodeOf(err error) (int, bool) {
	reason := a2a.ErrorReason(err)
	if reason == "INTERNAL_ERROR" && !errors.Is(err, a2a.ErrInternalError) {
		return 0, false
	}
	code, ok := harness.ReasonCodes[reason]
	return code, ok
}

// rawStreamRPC posts a streaming call by hand (Accept: text/event-stream)
// and decodes a plain JSON answer; it returns the body and Content-Type.
func (e *env) rawStreamRPC(ctx context.Context, c harness.Checker, body string) (map[string]any, string) {
	return e.postRaw(ctx, c, body, "text/event-stream")
}

// RawRPC posts body verbatim to the endpoint from the card, as a 1.0
// caller ("A2A-Version: 1.0"): the requests no SDK can produce (unknown
// method, malformed JSON).
func (e *env) RawRPC(ctx context.Context, c harness.Checker, body string) map[string]any {
	out, _ := e.postRaw(ctx, c, body, "")
	return out
}

// postRaw posts body verbatim as a 1.0 caller, with the Accept header
// accept unless it is "", and decodes a JSON answer; it returns the body
// and Content-Type.
func (e *env) postRaw(ctx context.Context, c harness.Checker, body, accept string) (map[string]any, string) {
	header := http.Header{}
	header.Set(a2a.SvcParamVersion, "1.0")
	if accept != "" {
		header.Set("Accept", accept)
	}
	return harness.PostRaw(ctx, c, e.HTTPClient, e.endpoint(ctx, c).URL, body, header)
}
