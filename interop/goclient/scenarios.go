package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"iter"
	"net/url"
	"reflect"
	"slices"
	"strings"

	"github.com/a2agate/gateway/interop/harness"
	"github.com/a2aproject/a2a-go/a2a"
	"github.com/google/uuid"
)

// registerScenarios mirrors interop/clients/scenarios.mjs for a2a-go, so
// every client runs the same checks; names match one to one.
func registerScenarios(r *runner, e *env) {
	r.Add("discovery", func(ctx context.Context, c checker) {
		conn, err := e.dialer.Dial(ctx)
		c.NoErr(err, "discovery")
		card := conn.Card
		c.Check(strings.HasPrefix(card.Name, "interop-agent"), "card name %q is not the backend agent's", card.Name)
		want, _ := url.Parse(e.BaseURL)
		got, err := url.Parse(card.URL)
		c.NoErr(err, "card url")
		// Equal up to a trailing slash, as in clients/scenarios.mjs.
		Equal(c, strings.TrimSuffix(got.String(), "/"), strings.TrimSuffix(want.String(), "/"), "JSON-RPC endpoint the client resolved from the card")
		Equal(c, card.PreferredTransport, a2a.TransportProtocolJSONRPC, "preferredTransport")
		c.Check(strings.HasPrefix(card.ProtocolVersion, "0."), "protocolVersion %q for a 0.3 client", card.ProtocolVersion)
		c.Check(card.Capabilities.Streaming, "capabilities.streaming")
		c.Check(card.Capabilities.PushNotifications, "capabilities.pushNotifications")
		if e.binding == a2a.TransportProtocolGRPC {
			var grpcURLs []string
			for _, iface := range card.AdditionalInterfaces {
				if iface.Transport == a2a.TransportProtocolGRPC {
					grpcURLs = append(grpcURLs, iface.URL)
				}
			}
			// a2a-go dials the interface's URL as a gRPC target: host:port.
			Equal(c, fmt.Sprint(grpcURLs), fmt.Sprint([]string{want.Host}), "GRPC additionalInterfaces")
		}
		e.Recorder.Reset()
		res, err := conn.Client.SendMessage(ctx, userMessage(textParts("ping?"), sendOptions{}))
		c.NoErr(err, "round trip through the resolved endpoint")
		_, isMessage := res.(*a2a.Message)
		c.Check(isMessage, "ping? should be answered by a message, got %T", res)
		// The call went over the preferred binding: JSON-RPC posts to the
		// card's url, gRPC makes no HTTP/1.1 request.
		sent := e.Recorder.Requested()
		if e.binding == a2a.TransportProtocolGRPC {
			c.Check(len(sent) == 0, "gRPC send made HTTP requests %v", sent)
		} else {
			c.Check(len(sent) == 1, "JSON-RPC send requested %v", sent)
		}
	})

	r.Add("blocking-send", func(ctx context.Context, c checker) {
		client := e.client(ctx, c)
		input := "hello " + uuid.NewString()[:8]
		res, err := client.SendMessage(ctx, userMessage(textParts(input), sendOptions{blocking: harness.Ptr(true)}))
		c.NoErr(err, "send")
		task := mustTask(c, res, a2a.TaskStateCompleted, "send")
		assertDone(c, task, input)
		fetched, err := client.GetTask(ctx, &a2a.TaskQueryParams{ID: task.ID, HistoryLength: harness.Ptr(10)})
		c.NoErr(err, "get")
		mustTask(c, fetched, a2a.TaskStateCompleted, "get after send")
		Equal(c, fetched.ID, task.ID, "task id")
		Equal(c, fetched.ContextID, task.ContextID, "contextId")
		assertDone(c, fetched, input)
		c.Check(len(fetched.History) > 0, "empty history")
		Equal(c, fetched.History[0].Role, a2a.MessageRoleUser, "first history role")
		Equal(c, firstText(fetched.History[0].Parts), input, "user message text in history")
	})

	r.Add("direct-message", func(ctx context.Context, c checker) {
		question := "what is " + uuid.NewString()[:6] + "?"
		contextID := uuid.NewString()
		res, err := e.client(ctx, c).SendMessage(ctx, userMessage(textParts(question), sendOptions{contextID: contextID}))
		c.NoErr(err, "send")
		msg, ok := res.(*a2a.Message)
		c.Check(ok, "expected a direct message, got %T %+v", res, res)
		Equal(c, msg.Role, a2a.MessageRoleAgent, "role")
		Equal(c, firstText(msg.Parts), harness.TextAnswer(question), "answer")
		Equal(c, msg.ContextID, contextID, "reply keeps the caller contextId")
		c.Check(msg.ID != "", "empty messageId")
	})

	r.Add("data-and-file-parts", func(ctx context.Context, c checker) {
		client := e.client(ctx, c)
		parts := a2a.ContentParts{
			a2a.TextPart{Text: "echo parts"},
			a2a.DataPart{Data: map[string]any{"city": "Paris", "count": float64(3), "tags": []any{"a", "b"}, "nested": map[string]any{"ok": true, "nothing": nil}}},
			a2a.FilePart{File: a2a.FileBytes{Bytes: base64.StdEncoding.EncodeToString([]byte("hello bytes éè")), FileMeta: a2a.FileMeta{MimeType: "text/plain", Name: "hello.txt"}}},
			a2a.FilePart{File: a2a.FileURI{URI: "https://example.com/files/report.pdf", FileMeta: a2a.FileMeta{MimeType: "application/pdf", Name: "report.pdf"}}},
		}
		res, err := client.SendMessage(ctx, userMessage(parts, sendOptions{}))
		c.NoErr(err, "send")
		task := mustTask(c, res, a2a.TaskStateCompleted, "send")
		Equal(c, len(task.Artifacts), 1, "artifacts")
		want := append(a2a.ContentParts{a2a.TextPart{Text: "done: echo parts"}}, parts[1:]...)
		c.Check(reflect.DeepEqual(task.Artifacts[0].Parts, want), "artifact parts: got %#v, want %#v", task.Artifacts[0].Parts, want)
		fetched, err := client.GetTask(ctx, &a2a.TaskQueryParams{ID: task.ID, HistoryLength: harness.Ptr(10)})
		c.NoErr(err, "get")
		c.Check(len(fetched.History) > 0 && reflect.DeepEqual(fetched.History[0].Parts, parts), "stored user parts: got %#v", fetched.History)
	})

	r.Add("failing-task", func(ctx context.Context, c checker) {
		client := e.client(ctx, c)
		res, err := client.SendMessage(ctx, userMessage(textParts("fail please"), sendOptions{}))
		c.NoErr(err, "send")
		task := mustTask(c, res, a2a.TaskStateFailed, "send")
		Equal(c, statusText(task.Status), harness.TextFailed("fail please"), "failure status message")
		Equal(c, len(task.Artifacts), 0, "artifacts of a failed task")
		fetched, err := client.GetTask(ctx, &a2a.TaskQueryParams{ID: task.ID})
		c.NoErr(err, "get")
		mustTask(c, fetched, a2a.TaskStateFailed, "get")
	})

	r.Add("non-blocking-poll", func(ctx context.Context, c checker) {
		client := e.client(ctx, c)
		input := "slow job"
		res, err := client.SendMessage(ctx, userMessage(textParts(input), sendOptions{blocking: harness.Ptr(false)}))
		c.NoErr(err, "send")
		first := mustTask(c, res, "", "non-blocking send")
		c.Check(first.Status.State == a2a.TaskStateSubmitted || first.Status.State == a2a.TaskStateWorking,
			"non-blocking send returned state %s, expected submitted or working", first.Status.State)
		done := pollTask(ctx, c, e, first.ID, a2a.TaskStateCompleted)
		Equal(c, done.ContextID, first.ContextID, "contextId")
		assertDone(c, done, input)
	})

	r.Add("history-length", func(ctx context.Context, c checker) {
		client := e.client(ctx, c)
		input := "history check"
		res, err := client.SendMessage(ctx, userMessage(textParts(input), sendOptions{}))
		c.NoErr(err, "send")
		task := mustTask(c, res, a2a.TaskStateCompleted, "send")
		full, err := client.GetTask(ctx, &a2a.TaskQueryParams{ID: task.ID, HistoryLength: harness.Ptr(10)})
		c.NoErr(err, "get 10")
		Equal(c, historyString(full), fmt.Sprint([]string{"user:" + input, "agent:" + harness.TextWorking(input)}), "full history")
		one, err := client.GetTask(ctx, &a2a.TaskQueryParams{ID: task.ID, HistoryLength: harness.Ptr(1)})
		c.NoErr(err, "get 1")
		Equal(c, historyString(one), fmt.Sprint([]string{"agent:" + harness.TextWorking(input)}), "historyLength=1 keeps the latest message")
		two, err := client.GetTask(ctx, &a2a.TaskQueryParams{ID: task.ID, HistoryLength: harness.Ptr(2)})
		c.NoErr(err, "get 2")
		Equal(c, len(two.History), 2, "historyLength=2")
	})

	// See the comment on this scenario in clients/scenarios.mjs: the 0.x JS
	// servers and a2a-go v2.3.1 ignore configuration.historyLength on send.
	r.Add("history-length-send", func(ctx context.Context, c checker) {
		input := "history on send"
		// blocking is explicit: the 0.3 proto's SendMessageConfiguration
		// has a plain bool blocking, so over gRPC a configuration without
		// it asks for a non-blocking send (JSON-RPC leaves it unset).
		res, err := e.client(ctx, c).SendMessage(ctx, userMessage(textParts(input), sendOptions{historyLength: harness.Ptr(1), blocking: harness.Ptr(true)}))
		c.NoErr(err, "send")
		task := mustTask(c, res, a2a.TaskStateCompleted, "send")
		want := []string{"agent:" + harness.TextWorking(input)}
		if e.deviates("history-length-send") {
			want = []string{"user:" + input, "agent:" + harness.TextWorking(input)}
		}
		Equal(c, historyString(task), fmt.Sprint(want), "send with historyLength=1")
	})

	r.Add("stream-task", func(ctx context.Context, c checker) {
		client := e.client(ctx, c)
		input := "stream me"
		events, err := collect(client.SendStreamingMessage(ctx, userMessage(textParts(input), sendOptions{})))
		c.NoErr(err, "stream")
		assertCycle(c, events, []string{"task", "status:working", "artifact-update", "status:completed"}, "")
		first := events[0].(*a2a.Task)
		Equal(c, first.Status.State, a2a.TaskStateSubmitted, "first event state")
		Equal(c, statusText(events[1].(*a2a.TaskStatusUpdateEvent).Status), harness.TextWorking(input), "working text")
		Equal(c, firstText(events[2].(*a2a.TaskArtifactUpdateEvent).Artifact.Parts), harness.TextDone(input), "artifact text")
		fetched, err := client.GetTask(ctx, &a2a.TaskQueryParams{ID: first.ID})
		c.NoErr(err, "get")
		mustTask(c, fetched, a2a.TaskStateCompleted, "get after stream")
	})

	r.Add("stream-message", func(ctx context.Context, c checker) {
		question := "streamed question?"
		events, err := collect(e.client(ctx, c).SendStreamingMessage(ctx, userMessage(textParts(question), sendOptions{})))
		c.NoErr(err, "stream")
		Equal(c, fmt.Sprint(eventKinds(events)), fmt.Sprint([]string{"message"}), "a direct answer streams exactly one message")
		msg := events[0].(*a2a.Message)
		Equal(c, firstText(msg.Parts), harness.TextAnswer(question), "answer")
		Equal(c, msg.Role, a2a.MessageRoleAgent, "role")
	})

	r.Add("input-required-blocking", func(ctx context.Context, c checker) {
		client := e.client(ctx, c)
		res, err := client.SendMessage(ctx, userMessage(textParts("input needed"), sendOptions{}))
		c.NoErr(err, "send")
		first := mustTask(c, res, a2a.TaskStateInputRequired, "first turn")
		Equal(c, statusText(first.Status), harness.TextInputNeeded, "input-required message")
		more := "the missing detail"
		res, err = client.SendMessage(ctx, userMessage(textParts(more), sendOptions{taskID: first.ID, contextID: first.ContextID}))
		c.NoErr(err, "continuation")
		done := mustTask(c, res, a2a.TaskStateCompleted, "continuation")
		Equal(c, done.ID, first.ID, "continuation task id")
		assertDone(c, done, more)
		fetched, err := client.GetTask(ctx, &a2a.TaskQueryParams{ID: first.ID, HistoryLength: harness.Ptr(10)})
		c.NoErr(err, "get")
		var userTurns []string
		for _, m := range fetched.History {
			if m.Role == a2a.MessageRoleUser {
				userTurns = append(userTurns, firstText(m.Parts))
			}
		}
		Equal(c, fmt.Sprint(userTurns), fmt.Sprint([]string{"input needed", more}), "user turns in history")
	})

	r.Add("input-required-stream", func(ctx context.Context, c checker) {
		client := e.client(ctx, c)
		firstCycle, err := collect(client.SendStreamingMessage(ctx, userMessage(textParts("input via stream"), sendOptions{})))
		c.NoErr(err, "first stream")
		assertCycle(c, firstCycle, []string{"task", "status:input-required"}, "")
		Equal(c, statusText(firstCycle[1].(*a2a.TaskStatusUpdateEvent).Status), harness.TextInputNeeded, "input-required message")
		task := firstCycle[0].(*a2a.Task)
		more := "streamed detail"
		second, err := collect(client.SendStreamingMessage(ctx, userMessage(textParts(more), sendOptions{taskID: task.ID, contextID: task.ContextID})))
		c.NoErr(err, "continuation stream")
		assertCycle(c, second, []string{"task", "status:working", "artifact-update", "status:completed"}, task.ID)
		Equal(c, firstText(second[2].(*a2a.TaskArtifactUpdateEvent).Artifact.Parts), harness.TextDone(more), "artifact text")
	})

	r.Add("cancel-task", func(ctx context.Context, c checker) {
		client := e.client(ctx, c)
		running := startWaiting(ctx, c, e, "wait for cancel")
		canceled, err := client.CancelTask(ctx, &a2a.TaskIDParams{ID: running.ID})
		c.NoErr(err, "cancel")
		mustTask(c, canceled, a2a.TaskStateCanceled, "cancel result")
		Equal(c, canceled.ID, running.ID, "canceled task id")
		fetched, err := client.GetTask(ctx, &a2a.TaskQueryParams{ID: running.ID})
		c.NoErr(err, "get")
		mustTask(c, fetched, a2a.TaskStateCanceled, "get after cancel")
		Equal(c, statusText(fetched.Status), harness.TextCanceled, "cancel status message")
		_, err = client.CancelTask(ctx, &a2a.TaskIDParams{ID: running.ID})
		// 1.x JS servers answer a repeated cancel with the canceled task
		// (see clients/scenarios.mjs); 0.x ones must refuse it.
		if e.BackendDialect != "1.0" || err != nil {
			expectCode(c, err, "second cancel", harness.CodeTaskNotCancelable)
		}
	})

	r.Add("cancel-terminal", func(ctx context.Context, c checker) {
		client := e.client(ctx, c)
		res, err := client.SendMessage(ctx, userMessage(textParts("finish first"), sendOptions{}))
		c.NoErr(err, "send")
		task := mustTask(c, res, a2a.TaskStateCompleted, "send")
		_, err = client.CancelTask(ctx, &a2a.TaskIDParams{ID: task.ID})
		expectCode(c, err, "cancel of a completed task", harness.CodeTaskNotCancelable)
	})

	r.Add("resubscribe", func(ctx context.Context, c checker) {
		client := e.client(ctx, c)
		running := startWaiting(ctx, c, e, "wait on resubscribe")
		next, stop := iter.Pull2(client.ResubscribeToTask(ctx, &a2a.TaskIDParams{ID: running.ID}))
		defer stop()
		first, err, ok := next()
		c.Check(ok, "resubscribe stream ended before its first event")
		c.NoErr(err, "resubscribe")
		snapshot, isTask := first.(*a2a.Task)
		c.Check(isTask, "first resubscribe event is %T, want a task", first)
		Equal(c, snapshot.ID, running.ID, "resubscribed task id")
		c.Check(snapshot.Status.State == a2a.TaskStateSubmitted || snapshot.Status.State == a2a.TaskStateWorking, "resubscribed state %s", snapshot.Status.State)
		canceled, err := client.CancelTask(ctx, &a2a.TaskIDParams{ID: running.ID})
		c.NoErr(err, "cancel")
		mustTask(c, canceled, a2a.TaskStateCanceled, "cancel result")
		var rest []a2a.Event
		for {
			event, err, ok := next()
			if !ok {
				break
			}
			c.NoErr(err, "resubscribe stream")
			rest = append(rest, event)
		}
		c.Check(len(rest) > 0, "no event after the cancel")
		last, ok := rest[len(rest)-1].(*a2a.TaskStatusUpdateEvent)
		c.Check(ok, "last resubscribe event is %T", rest[len(rest)-1])
		Equal(c, last.Status.State, a2a.TaskStateCanceled, "last state")
		Equal(c, last.TaskID, running.ID, "last event task id")
		Equal(c, statusText(last.Status), harness.TextCanceled, "cancel message")
		c.Check(last.Final, "canceled update must be final")
	})

	r.Add("push-config", func(ctx context.Context, c checker) {
		client := e.client(ctx, c)
		res, err := client.SendMessage(ctx, userMessage(textParts("push config holder"), sendOptions{}))
		c.NoErr(err, "send")
		task := mustTask(c, res, a2a.TaskStateCompleted, "send")
		want := a2a.TaskPushConfig{TaskID: task.ID, Config: a2a.PushConfig{
			ID: "cfg-1", URL: "https://hooks.example.com/a2a", Token: "secret-token",
			Auth: &a2a.PushAuthInfo{Schemes: []string{"Bearer"}},
		}}
		set, err := client.SetTaskPushConfig(ctx, &want)
		c.NoErr(err, "set")
		c.Check(reflect.DeepEqual(*set, want), "set result: got %+v, want %+v", set, want)
		got, err := client.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigParams{TaskID: task.ID, ConfigID: "cfg-1"})
		c.NoErr(err, "get")
		c.Check(reflect.DeepEqual(*got, want), "get result: got %+v, want %+v", got, want)
		if e.Direct && e.BackendDialect == "0.2.5" {
			// The 0.2.5 JS server implements neither list nor delete (see
			// the push-config scenario in clients/scenarios.mjs); through the
			// gateway, which answers them from its own store, both work.
			_, err = client.ListTaskPushConfig(ctx, &a2a.ListTaskPushConfigParams{TaskID: task.ID})
			expectCode(c, err, "list on a 0.2.5 backend", harness.CodeMethodNotFound, harness.CodeUnsupportedOperation)
			err = client.DeleteTaskPushConfig(ctx, &a2a.DeleteTaskPushConfigParams{TaskID: task.ID, ConfigID: "cfg-1"})
			expectCode(c, err, "delete on a 0.2.5 backend", harness.CodeMethodNotFound, harness.CodeUnsupportedOperation)
			return
		}
		listed, err := client.ListTaskPushConfig(ctx, &a2a.ListTaskPushConfigParams{TaskID: task.ID})
		c.NoErr(err, "list")
		c.Check(len(listed) == 1 && reflect.DeepEqual(*listed[0], want), "list result: %+v", listed)
		c.NoErr(client.DeleteTaskPushConfig(ctx, &a2a.DeleteTaskPushConfigParams{TaskID: task.ID, ConfigID: "cfg-1"}), "delete")
		listed, err = client.ListTaskPushConfig(ctx, &a2a.ListTaskPushConfigParams{TaskID: task.ID})
		c.NoErr(err, "list after delete")
		Equal(c, len(listed), 0, "configs after delete")
	})

	unknownID := func() a2a.TaskID { return a2a.TaskID("no-such-task-" + uuid.NewString()) }

	r.Add("error-get-unknown", func(ctx context.Context, c checker) {
		_, err := e.client(ctx, c).GetTask(ctx, &a2a.TaskQueryParams{ID: unknownID()})
		expectCode(c, err, "get", harness.CodeTaskNotFound)
	})

	r.Add("error-cancel-unknown", func(ctx context.Context, c checker) {
		_, err := e.client(ctx, c).CancelTask(ctx, &a2a.TaskIDParams{ID: unknownID()})
		expectCode(c, err, "cancel", harness.CodeTaskNotFound)
	})

	r.Add("error-subscribe-unknown", func(ctx context.Context, c checker) {
		events, err := collect(e.client(ctx, c).ResubscribeToTask(ctx, &a2a.TaskIDParams{ID: unknownID()}))
		expectCode(c, err, fmt.Sprintf("resubscribe (events before the error: %v)", eventKinds(events)), harness.CodeTaskNotFound)
	})

	r.Add("error-continue-unknown", func(ctx context.Context, c checker) {
		_, err := e.client(ctx, c).SendMessage(ctx, userMessage(textParts("continue nothing"), sendOptions{taskID: unknownID()}))
		expectCode(c, err, "send", harness.CodeTaskNotFound)
	})

	r.Add("error-stream-continue-unknown", func(ctx context.Context, c checker) {
		events, err := collect(e.client(ctx, c).SendStreamingMessage(ctx, userMessage(textParts("continue nothing"), sendOptions{taskID: unknownID()})))
		expectCode(c, err, fmt.Sprintf("stream (events before the error: %v)", eventKinds(events)), harness.CodeTaskNotFound)
	})

	r.Add("error-unknown-method", func(ctx context.Context, c checker) {
		id := "req-" + uuid.NewString()
		resp := e.rawRPC(ctx, c, fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"method":"tasks/doesNotExist","params":{}}`, id))
		Equal(c, resp["jsonrpc"], any("2.0"), "jsonrpc")
		Equal(c, harness.ErrorCode(resp), harness.CodeMethodNotFound, fmt.Sprintf("error in %v", resp))
		Equal(c, resp["id"], any(id), "response id echoes the request id")
	})

	r.Add("error-malformed-json", func(ctx context.Context, c checker) {
		resp := e.rawRPC(ctx, c, `{"jsonrpc": "2.0", "id": 7, "method": "message/send", "params": {`)
		Equal(c, resp["jsonrpc"], any("2.0"), "jsonrpc")
		Equal(c, harness.ErrorCode(resp), harness.CodeParseError, fmt.Sprintf("error in %v", resp))
		value, present := resp["id"]
		c.Check(present && value == nil, "a parse error answers with id null, got %v", resp)
	})
}

func assertDone(c checker, task *a2a.Task, input string) {
	Equal(c, len(task.Artifacts), 1, "artifacts")
	Equal(c, task.Artifacts[0].Name, "result", "artifact name")
	c.Check(task.Artifacts[0].ID != "", "empty artifactId")
	Equal(c, fmt.Sprint(artifactTexts(task)), fmt.Sprint([]string{harness.TextDone(input)}), "artifact text")
}

func historyString(task *a2a.Task) string {
	out := make([]string, len(task.History))
	for i, m := range task.History {
		out[i] = string(m.Role) + ":" + firstText(m.Parts)
	}
	return fmt.Sprint(out)
}

// startWaiting starts a task that stays working until it is canceled.
func startWaiting(ctx context.Context, c checker, e *env, text string) *a2a.Task {
	res, err := e.client(ctx, c).SendMessage(ctx, userMessage(textParts(text), sendOptions{blocking: harness.Ptr(false)}))
	c.NoErr(err, "non-blocking send")
	task := mustTask(c, res, "", "non-blocking send")
	c.Check(slices.Contains([]a2a.TaskState{a2a.TaskStateSubmitted, a2a.TaskStateWorking}, task.Status.State), "state before cancel: %s", task.Status.State)
	return task
}

// pollTask gets the task until it reaches state; the scenario's context
// bounds the wait.
func pollTask(ctx context.Context, c checker, e *env, id a2a.TaskID, state a2a.TaskState) *a2a.Task {
	var task *a2a.Task
	harness.Poll(ctx, c, func() (bool, string) {
		var err error
		task, err = e.client(ctx, c).GetTask(ctx, &a2a.TaskQueryParams{ID: id})
		c.NoErr(err, "poll")
		return task.Status.State == state, fmt.Sprintf("task %s still %s", id, task.Status.State)
	})
	return task
}

// nativeDeviations mirrors NATIVE_DEVIATIONS in clients/scenarios.mjs:
// what the native SDK servers answer against their own spec, accepted
// (and asserted exactly) only in direct runs, never through a gateway.
var nativeDeviations = harness.Deviations{
	"history-length-send":  {"js-0.2.5", "js-0.3", "go-2.3.1"},
	"error-malformed-json": {"js-0.2.5"},
}

func (e *env) deviates(scenario string) bool {
	return nativeDeviations.Apply(e.Direct, e.Backend, scenario)
}
