package main

import (
	"context"
	"fmt"
	"iter"

	"github.com/a2agate/gateway/interop/harness"
	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
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

// rpcCodes maps the SDK's sentinel errors back to JSON-RPC codes. The SDK
// keeps no code on the error (a2a-go internal/jsonrpc ToA2AError maps each
// code to a sentinel, and unknown codes to ErrInternalError).
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
	{a2a.ErrAuthenticatedExtendedCardNotConfigured, -32007},
}

func codeOf(err error) (int, bool) {
	if code, ok := rpcCodes.Of(err); ok {
		return code, true
	}
	return grpcCodeOf(err)
}

// grpcErrors is the A2A error table of the gRPC binding (a2a.proto and
// the spec's error mapping): the ErrorInfo reason names the error, the
// status code is the one the spec maps it to.
var grpcErrors = map[string]struct {
	code   int
	status codes.Code
}{
	"TASK_NOT_FOUND":                  {-32001, codes.NotFound},
	"TASK_NOT_CANCELABLE":             {-32002, codes.FailedPrecondition},
	"PUSH_NOTIFICATION_NOT_SUPPORTED": {-32003, codes.Unimplemented},
	"UNSUPPORTED_OPERATION":           {-32004, codes.Unimplemented},
	"CONTENT_TYPE_NOT_SUPPORTED":      {-32005, codes.InvalidArgument},
	"INVALID_AGENT_RESPONSE":          {-32006, codes.Internal},
	"INVALID_PARAMS":                  {-32602, codes.InvalidArgument},
	"METHOD_NOT_FOUND":                {-32601, codes.Unimplemented},
	"INTERNAL_ERROR":                  {-32603, codes.Internal},
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
		e, known := grpcErrors[info.GetReason()]
		if !known || e.status != st.Code() {
			return 0, false
		}
		return e.code, true
	}
	return 0, false
}

// expectCode ends the scenario unless err is a JSON-RPC error with one of
// the codes.
func expectCode(c checker, err error, what string, codes ...int) {
	harness.ExpectCode(c, codeOf, err, what, codes...)
}

func textParts(text string) a2a.ContentParts {
	return a2a.ContentParts{a2a.TextPart{Text: text}}
}

func firstText(parts a2a.ContentParts) string {
	for _, p := range parts {
		if t, ok := p.(a2a.TextPart); ok {
			return t.Text
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
			if t, ok := p.(a2a.TextPart); ok {
				out = append(out, t.Text)
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

func userMessage(parts a2a.ContentParts, o sendOptions) *a2a.MessageSendParams {
	msg := a2a.NewMessage(a2a.MessageRoleUser, parts...)
	msg.TaskID = o.taskID
	msg.ContextID = o.contextID
	params := &a2a.MessageSendParams{Message: msg}
	if o.blocking != nil || o.historyLength != nil {
		params.Config = &a2a.MessageSendConfig{Blocking: o.blocking, HistoryLength: o.historyLength}
	}
	return params
}

// mustTask ends the scenario unless result is a task in the wanted state
// ("" accepts any state).
func mustTask(c checker, result a2a.SendMessageResult, state a2a.TaskState, what string) *a2a.Task {
	task, ok := result.(*a2a.Task)
	if !ok {
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

// assertCycle checks one stream cycle: the sequence of kinds, one task for
// all events, and "final" set on exactly the last status update.
func assertCycle(c checker, events []a2a.Event, want []string, taskID a2a.TaskID) {
	got := eventKinds(events)
	c.Check(fmt.Sprint(got) == fmt.Sprint(want), "stream event sequence: got %v, want %v", got, want)
	if taskID == "" {
		taskID = events[0].(*a2a.Task).ID
	}
	var statuses []*a2a.TaskStatusUpdateEvent
	for _, e := range events {
		Equal(c, e.TaskInfo().TaskID, taskID, fmt.Sprintf("%T bound to task", e))
		if s, ok := e.(*a2a.TaskStatusUpdateEvent); ok {
			statuses = append(statuses, s)
		}
	}
	for i, s := range statuses {
		Equal(c, s.Final, i == len(statuses)-1, fmt.Sprintf("status-update %s: final flag (the stream closes after the last one)", s.Status.State))
	}
}

// skipReason says why a scenario cannot run over the chosen transport.
func (e *env) skipReason(scenario string) string {
	return harness.JSONRPCOnly(string(e.binding), scenario)
}

// rawRPC posts body verbatim to the endpoint from the card: the requests
// no SDK can produce (unknown method, malformed JSON).
func (e *env) rawRPC(ctx context.Context, c checker, body string) map[string]any {
	out, _ := harness.PostRaw(ctx, c, e.HTTPClient, e.dialer.Shared(ctx, c).Card.URL, body, nil)
	return out
}
