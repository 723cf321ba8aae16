package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/a2agate/gateway/interop/harness"
	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/uuid"
)

// registerOwn adds the 1.0 client's own scenarios, each in its place among
// the shared ones (names match clients/scenarios.mjs one to one).
func registerOwn(r *harness.Runner, suite *harness.Suite, e *env) {
	send := func(ctx context.Context, c harness.Checker, req harness.SendRequest) (harness.Result, error) {
		return e.Client(ctx, c).Send(ctx, req)
	}
	finished := func(ctx context.Context, c harness.Checker) *harness.Task {
		return harness.SendTask(ctx, c, e.Client(ctx, c), harness.SendRequest{Parts: harness.TextParts("finish first")}, harness.StateCompleted, "send")
	}

	// 1.0 data parts hold any JSON value; see the scenario of the same name
	// in clients/scenarios.mjs for what a gateway does toward 0.x.
	r.AddAfter("data-and-file-parts", "data-non-object", func(ctx context.Context, c harness.Checker) {
		data := func(v any) harness.Part { return harness.Part{Kind: harness.PartData, Data: v} }
		suite.CheckEchoed(ctx, c, []harness.Part{
			{Kind: harness.PartText, Text: "echo values"},
			data([]any{float64(1), "two", map[string]any{"three": float64(3)}}),
			data("plain string"),
			data(float64(42)),
			data(true),
		}, "done: echo values")
	})

	// 1.0 (a2a.proto SubscribeToTask): UnsupportedOperationError for a task
	// already in a terminal state. a2a-go v2 servers answer -32001 ("no
	// active execution", internal/taskexec local_manager.go Resubscribe),
	// accepted in direct runs only; the JS 1.x server's -32004 comes as a
	// JSON body this client cannot read (nativeDeviations).
	r.AddAfter("cancel-terminal", "subscribe-final", func(ctx context.Context, c harness.Checker) {
		task := finished(ctx, c)
		events, err := harness.Collect(e.Client(ctx, c).Subscribe(ctx, task.ID))
		switch {
		case suite.Deviates("subscribe-final") && e.Backend == "js-1.0":
			expectLostStreamError(ctx, c, e, events, err, "SubscribeToTask", fmt.Sprintf(`{"id":%q}`, task.ID), harness.CodeUnsupportedOperation)
		case suite.Deviates("subscribe-final"):
			suite.ExpectCode(c, err, fmt.Sprintf("subscribe to a completed task (events: %v)", harness.EventKinds(events)), harness.CodeTaskNotFound)
		default:
			suite.ExpectCode(c, err, fmt.Sprintf("subscribe to a completed task (events: %v)", harness.EventKinds(events)), harness.CodeUnsupportedOperation)
		}
	})

	// A message continuing a task in a terminal state: UnsupportedOperation
	// for a 1.0 caller (what the JS 1.x server answers). a2a-go v2 servers
	// answer -32602 (a2asrv/agentexec.go loadExecutionContext), accepted
	// in direct runs only.
	r.AddAfter("subscribe-final", "continue-final", func(ctx context.Context, c harness.Checker) {
		task := finished(ctx, c)
		_, err := send(ctx, c, harness.SendRequest{Parts: harness.TextParts("one more thing"), TaskID: task.ID, ContextID: task.ContextID})
		if suite.Deviates("continue-final") {
			suite.ExpectCode(c, err, "message to a completed task", harness.CodeInvalidParams)
			return
		}
		suite.ExpectCode(c, err, "message to a completed task", harness.CodeUnsupportedOperation)
	})

	r.AddAfter("push-config", "list-tasks", func(ctx context.Context, c harness.Checker) {
		contextID := uuid.NewString()
		var ids []string
		for _, text := range []string{"list one", "list two"} {
			task := harness.SendTask(ctx, c, e.Client(ctx, c), harness.SendRequest{Parts: harness.TextParts(text), ContextID: contextID}, harness.StateCompleted, "send")
			harness.Equal(c, task.ContextID, contextID, "contextId")
			ids = append(ids, task.ID)
		}
		client := e.Dialer.Shared(ctx, c).Client
		page, err := client.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: contextID, PageSize: 10})
		c.NoErr(err, "list")
		var listed []string
		for _, t := range page.Tasks {
			listed = append(listed, string(t.ID))
			harness.Equal(c, t.Status.State, a2a.TaskStateCompleted, "listed state")
		}
		slices.Sort(ids)
		slices.Sort(listed)
		harness.Equal(c, fmt.Sprint(listed), fmt.Sprint(ids), "tasks of the context")
		harness.Equal(c, page.TotalSize, 2, "totalSize")
		harness.Equal(c, page.NextPageToken, "", "nextPageToken on the last page")
		first, err := client.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: contextID, PageSize: 1})
		c.NoErr(err, "list pageSize=1")
		harness.Equal(c, len(first.Tasks), 1, "pageSize=1")
		c.Check(first.NextPageToken != "", "nextPageToken when more tasks remain")
	})
}

// nativeDeviations mirrors NATIVE_DEVIATIONS in clients/scenarios.mjs:
// what the native SDK servers answer against their own spec, accepted
// (and asserted exactly) only in direct runs, never through a gateway.
//
// The streaming errors: the JS 1.x server answers an error of a streaming
// call with a plain JSON-RPC body (Content-Type: application/json, HTTP
// 200) where a2a-go v2 servers send an SSE "data:" error frame; a2a-go v2's
// client (a2aclient/jsonrpc.go sendStreamingRequest, parseSSEStream) reads
// only "data:" lines of any 200 answer and so sees an empty, successful
// stream. Direct runs assert both halves (expectLostStreamError); through
// the gateway every caller must get the SSE error frame (issue 23 item 3).
var nativeDeviations = harness.Deviations{
	"history-length-send":           {"js-0.2.5", "js-0.3", "go-2.3.1"},
	"error-malformed-json":          {"js-0.2.5"},
	"error-subscribe-unknown":       {"js-1.0"},
	"error-stream-continue-unknown": {"js-1.0"},
	"subscribe-final":               {"js-1.0", "go-2.3.1"},
	"continue-final":                {"go-2.3.1"},
}

// expectLostStreamError asserts the direct-run deviation described above:
// the SDK's stream was empty and error-free, and the same call made by
// hand got a plain JSON body carrying the code (TaskNotFound by default).
func expectLostStreamError(ctx context.Context, c harness.Checker, e *env, events []harness.Event, err error, method, params string, code ...int) {
	want := harness.CodeTaskNotFound
	if len(code) > 0 {
		want = code[0]
	}
	c.Check(err == nil && len(events) == 0, "expected the SDK to see an empty stream (JSON error body), got events %v, error %v", harness.EventKinds(events), err)
	resp, contentType := e.rawStreamRPC(ctx, c, fmt.Sprintf(`{"jsonrpc":"2.0","id":"s1","method":%q,"params":%s}`, method, params))
	c.Check(strings.HasPrefix(contentType, "application/json"), "Content-Type %q, expected the plain JSON body", contentType)
	harness.Equal(c, harness.ErrorCode(resp), want, fmt.Sprintf("error in %v", resp))
}

// lostStreamError is the Suite's hook for the shared scenarios' streaming
// calls on an unknown task: send is the streaming send, nil for a
// subscribe.
func (e *env) lostStreamError(ctx context.Context, c harness.Checker, events []harness.Event, err error, taskID string, send *harness.SendRequest) {
	if send == nil {
		expectLostStreamError(ctx, c, e, events, err, "SubscribeToTask", fmt.Sprintf(`{"id":%q}`, taskID))
		return
	}
	params := fmt.Sprintf(`{"message":{"messageId":%q,"taskId":%q,"role":"ROLE_USER","parts":[{"text":%q}]}}`, uuid.NewString(), taskID, harness.FirstText(send.Parts))
	expectLostStreamError(ctx, c, e, events, err, "SendStreamingMessage", params)
}
