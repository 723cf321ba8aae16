package main

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/a2agate/gateway/interop/harness"
	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// env is one run's connection and the transport the client prefers.
type env struct {
	*harness.Env[*a2a.AgentCard, *a2aclient.Client]
	binding a2a.TransportProtocol
}

// Discover checks the 0.3 card: its url is the endpoint, with JSON-RPC
// preferred, and a gRPC client finds the gRPC interface among the
// additional ones.
func (e *env) Discover(ctx context.Context, c harness.Checker) (harness.AgentCard, harness.Client) {
	conn, err := e.Dialer.Dial(ctx)
	c.NoErr(err, "discovery")
	card := conn.Card
	want, _ := url.Parse(e.BaseURL)
	got, err := url.Parse(card.URL)
	c.NoErr(err, "card url")
	// Equal up to a trailing slash, as in clients/scenarios.mjs.
	harness.Equal(c, strings.TrimSuffix(got.String(), "/"), strings.TrimSuffix(want.String(), "/"), "JSON-RPC endpoint the client resolved from the card")
	harness.Equal(c, card.PreferredTransport, a2a.TransportProtocolJSONRPC, "preferredTransport")
	c.Check(strings.HasPrefix(card.ProtocolVersion, "0."), "protocolVersion %q for a 0.3 client", card.ProtocolVersion)
	if e.binding == a2a.TransportProtocolGRPC {
		var grpcURLs []string
		for _, iface := range card.AdditionalInterfaces {
			if iface.Transport == a2a.TransportProtocolGRPC {
				grpcURLs = append(grpcURLs, iface.URL)
			}
		}
		// a2a-go dials the interface's URL as a gRPC target: host:port.
		harness.Equal(c, fmt.Sprint(grpcURLs), fmt.Sprint([]string{want.Host}), "GRPC additionalInterfaces")
	}
	return harness.AgentCard{Name: card.Name, Streaming: card.Capabilities.Streaming, PushNotifications: card.Capabilities.PushNotifications}, adapter{conn.Client}
}

// SentOver: JSON-RPC posts to the card's url, gRPC makes no HTTP/1.1
// request.
func (e *env) SentOver(c harness.Checker, sent []string) {
	if e.binding == a2a.TransportProtocolGRPC {
		c.Check(len(sent) == 0, "gRPC send made HTTP requests %v", sent)
	} else {
		c.Check(len(sent) == 1, "JSON-RPC send requested %v", sent)
	}
}

// nativeDeviations mirrors NATIVE_DEVIATIONS in clients/scenarios.mjs:
// what the native SDK servers answer against their own spec, accepted
// (and asserted exactly) only in direct runs, never through a gateway.
var nativeDeviations = harness.Deviations{
	"history-length-send":  {"js-0.2.5", "js-0.3", "go-2.3.1"},
	"error-malformed-json": {"js-0.2.5"},
}

// rpcCodes maps the SDK's sentinel errors back to the JSON-RPC codes the
// scenarios expect (any other error fails them alike). The SDK keeps no
// code on the error (a2a-go internal/jsonrpc ToA2AError maps each code to
// a sentinel, and unknown codes to ErrInternalError).
//
// Strictness of a2a-go v0.3.3 that a gateway must satisfy, all from the
// module source (github.com/a2aproject/a2a-go@v0.3.3):
//   - internal/jsonrpc/jsonrpc.go line 50 decodes error.data into a
//     map[string]any, so an error whose data is an array (the 1.0
//     ErrorInfo list) or a string makes the whole response undecodable,
//     although the 0.x schemas allow any JSON value there;
//   - a2aclient/jsonrpc.go line 45 decodes the response id as a string;
//   - internal/sse/sse.go lines 33 and 85 only see "data: " lines (with the
//     space), one line per event;
//   - a2aclient/factory.go line 76 takes the card's preferredTransport
//     verbatim, so a 0.3 card without it (the spec default is JSONRPC)
//     yields no usable transport.
var rpcCodes = harness.ErrorCodes{
	{a2a.ErrMethodNotFound, harness.CodeMethodNotFound},
	{a2a.ErrInvalidParams, harness.CodeInvalidParams},
	{a2a.ErrTaskNotFound, harness.CodeTaskNotFound},
	{a2a.ErrTaskNotCancelable, harness.CodeTaskNotCancelable},
	{a2a.ErrUnsupportedOperation, harness.CodeUnsupportedOperation},
}

// CodeOf reads a JSON-RPC error's sentinel, or a gRPC status.
func (e *env) CodeOf(err error) (int, bool) {
	if code, ok := rpcCodes.Of(err); ok {
		return code, true
	}
	return grpcCodeOf(err)
}

// grpcStatus is the A2A error table of the gRPC binding (a2a.proto and
// the spec's error mapping): the ErrorInfo reason names the error
// (harness.ReasonCodes), the status code is the one the spec maps it to.
var grpcStatus = map[string]codes.Code{
	"TASK_NOT_FOUND":                  codes.NotFound,
	"TASK_NOT_CANCELABLE":             codes.FailedPrecondition,
	"PUSH_NOTIFICATION_NOT_SUPPORTED": codes.Unimplemented,
	"UNSUPPORTED_OPERATION":           codes.Unimplemented,
	"CONTENT_TYPE_NOT_SUPPORTED":      codes.InvalidArgument,
	"INVALID_AGENT_RESPONSE":          codes.Internal,
	"INVALID_PARAMS":                  codes.InvalidArgument,
	"METHOD_NOT_FOUND":                codes.Unimplemented,
	"INTERNAL_ERROR":                  codes.Internal,
}

// grpcCodeOf reads an A2A error off a gRPC status: a2a-go v0.3.3's gRPC
// transport hands the status over as it came (a2aclient/grpc.go maps no
// error), so an application reads its google.rpc.ErrorInfo detail. The
// status code must be the spec's for that error, as a caller that reads
// only codes relies on it.
func grpcCodeOf(err error) (int, bool) {
	st, ok := status.FromError(err)
	if !ok || st.Code() == codes.OK {
		return 0, false
	}
	for _, d := range st.Details() {
		info, ok := d.(*errdetails.ErrorInfo)
		if !ok {
			continue
		}
		want, known := grpcStatus[info.GetReason()]
		if !known || want != st.Code() {
			return 0, false
		}
		return harness.ReasonCodes[info.GetReason()], true
	}
	return 0, false
}

// skipReason says why a scenario cannot run over the chosen transport.
func (e *env) skipReason(scenario string) string {
	return harness.JSONRPCOnly(string(e.binding), scenario)
}

// RawRPC posts body verbatim to the endpoint from the card: the requests
// no SDK can produce (unknown method, malformed JSON).
func (e *env) RawRPC(ctx context.Context, c harness.Checker, body string) map[string]any {
	out, _ := harness.PostRaw(ctx, c, e.HTTPClient, e.Card(ctx, c).URL, body, nil)
	return out
}
