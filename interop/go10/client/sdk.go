package main

import (
	"context"
	"fmt"
	"iter"
	"net/http"
	"strings"

	"github.com/a2agate/gateway/interop/harness"
	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
)

// env is what the scenarios share: how to reach the agent and what kind
// of backend stands behind it.
type env struct {
	harness.Setup
	binding a2a.TransportProtocol // the transport the client prefers
	dialer  *harness.Dialer[*a2a.AgentCard, *a2aclient.Client]
}

// client returns the SDK client, resolving the card on first use only.
func (e *env) client(ctx context.Context, c checker) *a2aclient.Client {
	return e.dialer.Shared(ctx, c).Client
}

// endpoint is the interface a2aclient's factory picks from the card: the
// first one of protocol major version 1 in the preferred binding
// (a2aclient/factory.go selectTransport sorts by version, then by
// Config.PreferredTransports).
func (e *env) endpoint(ctx context.Context, c checker) *a2a.AgentInterface {
	card := e.dialer.Shared(ctx, c).Card
	for _, iface := range card.SupportedInterfaces {
		if iface.ProtocolBinding == e.binding && strings.HasPrefix(string(iface.ProtocolVersion), "1.") {
			return iface
		}
	}
	c.Fatalf("card has no %s 1.x interface: %+v", e.binding, card.SupportedInterfaces)
	return nil
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

// rpcCodes maps the SDK's sentinel errors back to JSON-RPC codes: a2a-go
// v2 keeps no code on the error (internal/jsonrpc FromJSONRPCError maps
// each known code to a sentinel wrapped in *a2a.Error, unknown codes to
// ErrInternalError).
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
var rpcCodes = harness.ErrorCodes{
	{a2a.ErrParseError, -32700},
	{a2a.ErrInvalidRequest, -32600},
	{a2a.ErrMethodNotFound, -32601},
	{a2a.ErrInvalidParams, -32602},
	{a2a.ErrInternalError, -32603},
	{a2a.ErrServerError, -32000},
	{a2a.ErrTaskNotFound, -32001},
	{a2a.ErrTaskNotCancelable, -32002},
	{a2a.ErrPushNotificationNotSupported, -32003},
	{a2a.ErrUnsupportedOperation, -32004},
	{a2a.ErrUnsupportedContentType, -32005},
	{a2a.ErrInvalidAgentResponse, -32006},
	{a2a.ErrExtendedCardNotConfigured, -32007},
	{a2a.ErrExtensionSupportRequired, -32008},
	{a2a.ErrVersionNotSupported, -32009},
}

// expectCode ends the scenario unless err is a JSON-RPC error with one of
// the codes.
func expectCode(c checker, err error, what string, codes ...int) {
	harness.ExpectCode(c, rpcCodes.Of, err, what, codes...)
}

func textParts(text string) []*a2a.Part {
	return []*a2a.Part{a2a.NewTextPart(text)}
}

func firstText(parts []*a2a.Part) string {
	for _, p := range parts {
		if t, ok := p.Content.(a2a.Text); ok {
			return string(t)
		}
	}
	return ""
}

func statusText(s a2a.TaskStatus) string {
	if s.Message == nil {
		return ""
	}
	return firstText(s.Message.Parts)
}

func artifactTexts(task *a2a.Task) []string {
	var out []string
	for _, a := range task.Artifacts {
		for _, p := range a.Parts {
			if t, ok := p.Content.(a2a.Text); ok {
				out = append(out, string(t))
			}
		}
	}
	return out
}

type sendOptions struct {
	taskID        a2a.TaskID
	contextID     string
	blocking      *bool
	historyLength *int
}

func userMessage(parts []*a2a.Part, o sendOptions) *a2a.SendMessageRequest {
	msg := a2a.NewMessage(a2a.MessageRoleUser, parts...)
	msg.TaskID = o.taskID
	msg.ContextID = o.contextID
	req := &a2a.SendMessageRequest{Message: msg}
	if o.blocking != nil || o.historyLength != nil {
		req.Config = &a2a.SendMessageConfig{ReturnImmediately: o.blocking != nil && !*o.blocking, HistoryLength: o.historyLength}
	}
	return req
}

// mustTask ends the scenario unless result is a task in the wanted state
// ("" accepts any state).
func mustTask(c checker, result a2a.SendMessageResult, state a2a.TaskState, what string) *a2a.Task {
	task, ok := result.(*a2a.Task)
	if !ok || task == nil {
		c.Fatalf("%s: expected a task, got %T %+v", what, result, result)
	}
	c.Check(task.ID != "", "%s: empty task id", what)
	c.Check(task.ContextID != "", "%s: empty contextId", what)
	if state != "" {
		c.Check(task.Status.State == state, "%s: state %q (status text %q), want %q", what, task.Status.State, statusText(task.Status), state)
	}
	return task
}

// collect drains a stream; the error is the first one the stream yielded.
func collect(seq iter.Seq2[a2a.Event, error]) ([]a2a.Event, error) {
	var events []a2a.Event
	for event, err := range seq {
		if err != nil {
			return events, err
		}
		events = append(events, event)
	}
	return events, nil
}

// eventKinds renders a stream for comparison: task, message,
// status:<state>, artifact-update.
func eventKinds(events []a2a.Event) []string {
	out := make([]string, len(events))
	for i, e := range events {
		switch e := e.(type) {
		case *a2a.Task:
			out[i] = "task"
		case *a2a.Message:
			out[i] = "message"
		case *a2a.TaskStatusUpdateEvent:
			out[i] = "status:" + string(e.Status.State)
		case *a2a.TaskArtifactUpdateEvent:
			out[i] = "artifact-update"
		default:
			out[i] = fmt.Sprintf("%T", e)
		}
	}
	return out
}

// assertCycle checks one stream cycle: the sequence of kinds and one task
// for all events (1.0 has no "final" flag: the stream's end is the end).
func assertCycle(c checker, events []a2a.Event, want []string, taskID a2a.TaskID) {
	got := eventKinds(events)
	c.Check(fmt.Sprint(got) == fmt.Sprint(want), "stream event sequence: got %v, want %v", got, want)
	if taskID == "" {
		taskID = events[0].(*a2a.Task).ID
	}
	for _, e := range events {
		Equal(c, e.TaskInfo().TaskID, taskID, fmt.Sprintf("%T bound to task", e))
	}
}

// rawStreamRPC posts a streaming call by hand (Accept: text/event-stream)
// and decodes a plain JSON answer; it returns the body and Content-Type.
func (e *env) rawStreamRPC(ctx context.Context, c checker, body string) (map[string]any, string) {
	return e.postRaw(ctx, c, body, "text/event-stream")
}

// rawRPC posts body verbatim to the endpoint from the card, as a 1.0
// caller ("A2A-Version: 1.0"): the requests no SDK can produce (unknown
// method, malformed JSON).
func (e *env) rawRPC(ctx context.Context, c checker, body string) map[string]any {
	out, _ := e.postRaw(ctx, c, body, "")
	return out
}

// postRaw posts body verbatim as a 1.0 caller, with the Accept header
// accept unless it is "", and decodes a JSON answer; it returns the body
// and Content-Type.
func (e *env) postRaw(ctx context.Context, c checker, body, accept string) (map[string]any, string) {
	header := http.Header{}
	header.Set(a2a.SvcParamVersion, "1.0")
	if accept != "" {
		header.Set("Accept", accept)
	}
	return harness.PostRaw(ctx, c, e.HTTPClient, e.endpoint(ctx, c).URL, body, header)
}
