package harness

import (
	"context"
	"fmt"
	"iter"
	"reflect"
	"strings"

	"github.com/google/uuid"
)

// Register adds the scenarios both Go SDK clients run; they mirror
// interop/clients/scenarios.mjs, names one to one. A client module adds
// its SDK's own scenarios among them with Runner.AddAfter.
func (s *Suite) Register(r *Runner) {
	send := func(ctx context.Context, c Checker, req SendRequest) (Result, error) {
		return s.Client(ctx, c).Send(ctx, req)
	}

	r.Add("discovery", func(ctx context.Context, c Checker) {
		card, client := s.Discover(ctx, c)
		c.Check(strings.HasPrefix(card.Name, "interop-agent"), "card name %q is not the backend agent's", card.Name)
		c.Check(card.Streaming, "capabilities.streaming")
		c.Check(card.PushNotifications, "capabilities.pushNotifications")
		s.Recorder.Reset()
		res, err := client.Send(ctx, SendRequest{Parts: TextParts("ping?")})
		c.NoErr(err, "round trip through the resolved endpoint")
		c.Check(res.Message != nil, "ping? should be answered by a message, got %T", res.SDK)
		// The call went over the preferred binding.
		s.SentOver(c, s.Recorder.Requested())
	})

	r.Add("blocking-send", func(ctx context.Context, c Checker) {
		input := "hello " + uuid.NewString()[:8]
		task := SendTask(ctx, c, s.Client(ctx, c), SendRequest{Parts: TextParts(input), Blocking: Ptr(true)}, StateCompleted, "send")
		AssertDone(c, task, input)
		fetched, err := s.Client(ctx, c).GetTask(ctx, task.ID, Ptr(10))
		c.NoErr(err, "get")
		CheckTask(c, fetched, StateCompleted, "get after send")
		Equal(c, fetched.ID, task.ID, "task id")
		Equal(c, fetched.ContextID, task.ContextID, "contextId")
		AssertDone(c, fetched, input)
		c.Check(len(fetched.History) > 0, "empty history")
		Equal(c, fetched.History[0].Role, RoleUser, "first history role")
		Equal(c, FirstText(fetched.History[0].Parts), input, "user message text in history")
	})

	r.Add("direct-message", func(ctx context.Context, c Checker) {
		question := "what is " + uuid.NewString()[:6] + "?"
		contextID := uuid.NewString()
		res, err := send(ctx, c, SendRequest{Parts: TextParts(question), ContextID: contextID})
		c.NoErr(err, "send")
		msg := res.Message
		c.Check(msg != nil, "expected a direct message, got %T %+v", res.SDK, res.SDK)
		Equal(c, msg.Role, RoleAgent, "role")
		Equal(c, FirstText(msg.Parts), TextAnswer(question), "answer")
		Equal(c, msg.ContextID, contextID, "reply keeps the caller contextId")
		c.Check(msg.ID != "", "empty messageId")
	})

	r.Add("data-and-file-parts", func(ctx context.Context, c Checker) {
		s.CheckEchoed(ctx, c, []Part{
			{Kind: PartText, Text: "echo parts"},
			{Kind: PartData, Data: map[string]any{"city": "Paris", "count": float64(3), "tags": []any{"a", "b"}, "nested": map[string]any{"ok": true, "nothing": nil}}},
			{Kind: PartRaw, Raw: []byte("hello bytes éè"), MediaType: "text/plain", Filename: "hello.txt"},
			{Kind: PartURL, URL: "https://example.com/files/report.pdf", MediaType: "application/pdf", Filename: "report.pdf"},
		}, "done: echo parts")
	})

	r.Add("failing-task", func(ctx context.Context, c Checker) {
		task := SendTask(ctx, c, s.Client(ctx, c), SendRequest{Parts: TextParts("fail please")}, StateFailed, "send")
		Equal(c, StatusText(task.Status), TextFailed("fail please"), "failure status message")
		Equal(c, len(task.Artifacts), 0, "artifacts of a failed task")
		fetched, err := s.Client(ctx, c).GetTask(ctx, task.ID, nil)
		c.NoErr(err, "get")
		CheckTask(c, fetched, StateFailed, "get")
	})

	r.Add("non-blocking-poll", func(ctx context.Context, c Checker) {
		input := "slow job"
		first := SendTask(ctx, c, s.Client(ctx, c), SendRequest{Parts: TextParts(input), Blocking: Ptr(false)}, "", "non-blocking send")
		c.Check(first.Status.State == StateSubmitted || first.Status.State == StateWorking,
			"non-blocking send returned state %s, expected submitted or working", first.Status.State)
		done := s.pollTask(ctx, c, first.ID, StateCompleted)
		Equal(c, done.ContextID, first.ContextID, "contextId")
		AssertDone(c, done, input)
	})

	r.Add("history-length", func(ctx context.Context, c Checker) {
		client := s.Client(ctx, c)
		input := "history check"
		task := SendTask(ctx, c, client, SendRequest{Parts: TextParts(input)}, StateCompleted, "send")
		want := fmt.Sprint([]string{"user:" + input, "agent:" + TextWorking(input)})
		full, err := client.GetTask(ctx, task.ID, Ptr(10))
		c.NoErr(err, "get 10")
		Equal(c, s.historyString(full), want, "full history")
		one, err := client.GetTask(ctx, task.ID, Ptr(1))
		c.NoErr(err, "get 1")
		Equal(c, s.historyString(one), fmt.Sprint([]string{"agent:" + TextWorking(input)}), "historyLength=1 keeps the latest message")
		two, err := client.GetTask(ctx, task.ID, Ptr(2))
		c.NoErr(err, "get 2")
		Equal(c, len(two.History), 2, "historyLength=2")
		if s.is10() {
			// In 1.0 an unset historyLength means no limit (issue 23 item 1).
			unset, err := client.GetTask(ctx, task.ID, nil)
			c.NoErr(err, "get without historyLength")
			Equal(c, s.historyString(unset), want, "history without historyLength (1.0: no limit)")
		}
	})

	// See the comment on this scenario in clients/scenarios.mjs: the 0.x JS
	// servers and a2a-go v2.3.1 ignore configuration.historyLength on send.
	r.Add("history-length-send", func(ctx context.Context, c Checker) {
		input := "history on send"
		// blocking is explicit: the 0.3 proto's SendMessageConfiguration
		// has a plain bool blocking, so over gRPC a configuration without
		// it asks for a non-blocking send (JSON-RPC leaves it unset).
		task := SendTask(ctx, c, s.Client(ctx, c), SendRequest{Parts: TextParts(input), HistoryLength: Ptr(1), Blocking: Ptr(true)}, StateCompleted, "send")
		want := []string{"agent:" + TextWorking(input)}
		if s.Deviates("history-length-send") {
			want = []string{"user:" + input, "agent:" + TextWorking(input)}
		}
		Equal(c, s.historyString(task), fmt.Sprint(want), "send with historyLength=1")
	})

	r.Add("stream-task", func(ctx context.Context, c Checker) {
		client := s.Client(ctx, c)
		input := "stream me"
		events, err := Collect(client.Stream(ctx, SendRequest{Parts: TextParts(input)}))
		c.NoErr(err, "stream")
		s.assertCycle(c, events, []string{EventTask, "status:" + StateWorking, EventArtifact, "status:" + StateCompleted}, "")
		first := events[0].Task
		Equal(c, first.Status.State, StateSubmitted, "first event state")
		Equal(c, StatusText(events[1].Status), TextWorking(input), "working text")
		Equal(c, FirstText(events[2].Artifact.Parts), TextDone(input), "artifact text")
		fetched, err := client.GetTask(ctx, first.ID, nil)
		c.NoErr(err, "get")
		CheckTask(c, fetched, StateCompleted, "get after stream")
	})

	r.Add("stream-message", func(ctx context.Context, c Checker) {
		question := "streamed question?"
		events, err := Collect(s.Client(ctx, c).Stream(ctx, SendRequest{Parts: TextParts(question)}))
		c.NoErr(err, "stream")
		Equal(c, fmt.Sprint(EventKinds(events)), fmt.Sprint([]string{EventMessage}), "a direct answer streams exactly one message")
		msg := events[0].Message
		Equal(c, FirstText(msg.Parts), TextAnswer(question), "answer")
		Equal(c, msg.Role, RoleAgent, "role")
	})

	r.Add("input-required-blocking", func(ctx context.Context, c Checker) {
		client := s.Client(ctx, c)
		first := SendTask(ctx, c, client, SendRequest{Parts: TextParts("input needed")}, StateInputRequired, "first turn")
		Equal(c, StatusText(first.Status), TextInputNeeded, "input-required message")
		more := "the missing detail"
		done := SendTask(ctx, c, client, SendRequest{Parts: TextParts(more), TaskID: first.ID, ContextID: first.ContextID}, StateCompleted, "continuation")
		Equal(c, done.ID, first.ID, "continuation task id")
		AssertDone(c, done, more)
		fetched, err := client.GetTask(ctx, first.ID, Ptr(10))
		c.NoErr(err, "get")
		var userTurns []string
		for _, m := range fetched.History {
			if m.Role == RoleUser {
				userTurns = append(userTurns, FirstText(m.Parts))
			}
		}
		Equal(c, fmt.Sprint(userTurns), fmt.Sprint([]string{"input needed", more}), "user turns in history")
	})

	r.Add("input-required-stream", func(ctx context.Context, c Checker) {
		client := s.Client(ctx, c)
		firstCycle, err := Collect(client.Stream(ctx, SendRequest{Parts: TextParts("input via stream")}))
		c.NoErr(err, "first stream")
		s.assertCycle(c, firstCycle, []string{EventTask, "status:" + StateInputRequired}, "")
		Equal(c, StatusText(firstCycle[1].Status), TextInputNeeded, "input-required message")
		task := firstCycle[0].Task
		more := "streamed detail"
		second, err := Collect(client.Stream(ctx, SendRequest{Parts: TextParts(more), TaskID: task.ID, ContextID: task.ContextID}))
		c.NoErr(err, "continuation stream")
		s.assertCycle(c, second, []string{EventTask, "status:" + StateWorking, EventArtifact, "status:" + StateCompleted}, task.ID)
		Equal(c, FirstText(second[2].Artifact.Parts), TextDone(more), "artifact text")
		if s.is10() {
			fetched, err := client.GetTask(ctx, task.ID, nil)
			c.NoErr(err, "get")
			CheckTask(c, fetched, StateCompleted, "get after the continuation")
		}
	})

	r.Add("cancel-task", func(ctx context.Context, c Checker) {
		client := s.Client(ctx, c)
		running := s.startWaiting(ctx, c, "wait for cancel")
		canceled, err := client.Cancel(ctx, running.ID)
		c.NoErr(err, "cancel")
		CheckTask(c, canceled, StateCanceled, "cancel result")
		Equal(c, canceled.ID, running.ID, "canceled task id")
		fetched, err := client.GetTask(ctx, running.ID, nil)
		c.NoErr(err, "get")
		CheckTask(c, fetched, StateCanceled, "get after cancel")
		Equal(c, StatusText(fetched.Status), TextCanceled, "cancel status message")
		// A repeated cancel is refused with TaskNotCancelable, except that
		// the 1.x servers (JS 1.x, a2a-go v2) answer it with the canceled
		// task itself (see clients/scenarios.mjs), which a 1.0 client
		// checks.
		again, err := client.Cancel(ctx, running.ID)
		if err != nil || s.BackendDialect != "1.0" {
			s.ExpectCode(c, err, "second cancel", CodeTaskNotCancelable)
			return
		}
		if s.is10() {
			CheckTask(c, again, StateCanceled, "second cancel")
		}
	})

	r.Add("cancel-terminal", func(ctx context.Context, c Checker) {
		client := s.Client(ctx, c)
		task := SendTask(ctx, c, client, SendRequest{Parts: TextParts("finish first")}, StateCompleted, "send")
		_, err := client.Cancel(ctx, task.ID)
		s.ExpectCode(c, err, "cancel of a completed task", CodeTaskNotCancelable)
	})

	r.Add("resubscribe", func(ctx context.Context, c Checker) {
		client := s.Client(ctx, c)
		running := s.startWaiting(ctx, c, "wait on resubscribe")
		next, stop := iter.Pull2(client.Subscribe(ctx, running.ID))
		defer stop()
		first, err, ok := next()
		c.Check(ok, "subscribe stream ended before its first event")
		c.NoErr(err, "subscribe")
		snapshot := first.Task
		c.Check(snapshot != nil, "first subscribe event is %T, want a task", first.SDK)
		Equal(c, snapshot.ID, running.ID, "subscribed task id")
		if s.is10() {
			Equal(c, snapshot.ContextID, running.ContextID, "subscribed task contextId")
		}
		c.Check(snapshot.Status.State == StateSubmitted || snapshot.Status.State == StateWorking, "subscribed state %s", snapshot.Status.State)
		canceled, err := client.Cancel(ctx, running.ID)
		c.NoErr(err, "cancel")
		CheckTask(c, canceled, StateCanceled, "cancel result")
		var rest []Event
		for {
			event, err, ok := next()
			if !ok {
				break
			}
			c.NoErr(err, "subscribe stream")
			rest = append(rest, event)
		}
		c.Check(len(rest) > 0, "no event after the cancel")
		if s.is10() {
			// 1.0: exactly one task snapshot, first (issue 23 item 2).
			for _, event := range rest {
				c.Check(event.Kind != EventTask, "a second task snapshot after the first: %v", EventKinds(rest))
				Equal(c, event.TaskID, running.ID, "event for another task")
			}
		}
		last := rest[len(rest)-1]
		c.Check(strings.HasPrefix(last.Kind, "status:"), "last subscribe event is %T", last.SDK)
		Equal(c, last.Status.State, StateCanceled, "last state")
		Equal(c, last.TaskID, running.ID, "last event task id")
		Equal(c, StatusText(last.Status), TextCanceled, "cancel message")
		if !s.is10() {
			c.Check(last.Final, "canceled update must be final")
		}
	})

	r.Add("push-config", func(ctx context.Context, c Checker) {
		client := s.Client(ctx, c)
		task := SendTask(ctx, c, client, SendRequest{Parts: TextParts("push config holder")}, StateCompleted, "send")
		want := PushConfig{
			TaskID: task.ID, ID: "cfg-1", URL: "https://hooks.example.com/a2a", Token: "secret-token",
			Auth: &PushAuth{Schemes: []string{"Bearer"}},
		}
		set, err := client.SetPushConfig(ctx, want)
		c.NoErr(err, "set")
		c.Check(reflect.DeepEqual(*set, want), "set result: got %+v, want %+v", set, want)
		got, err := client.GetPushConfig(ctx, task.ID, "cfg-1")
		c.NoErr(err, "get")
		c.Check(reflect.DeepEqual(*got, want), "get result: got %+v, want %+v", got, want)
		if s.Direct && s.BackendDialect == "0.2.5" {
			// The 0.2.5 JS server implements neither list nor delete (see
			// the push-config scenario in clients/scenarios.mjs); through the
			// gateway, which answers them from its own store, both work.
			_, err = client.ListPushConfigs(ctx, task.ID)
			s.ExpectCode(c, err, "list on a 0.2.5 backend", CodeMethodNotFound, CodeUnsupportedOperation)
			err = client.DeletePushConfig(ctx, task.ID, "cfg-1")
			s.ExpectCode(c, err, "delete on a 0.2.5 backend", CodeMethodNotFound, CodeUnsupportedOperation)
			return
		}
		listed, err := client.ListPushConfigs(ctx, task.ID)
		c.NoErr(err, "list")
		c.Check(len(listed) == 1 && reflect.DeepEqual(*listed[0], want), "list result: %+v", listed)
		c.NoErr(client.DeletePushConfig(ctx, task.ID, "cfg-1"), "delete")
		listed, err = client.ListPushConfigs(ctx, task.ID)
		c.NoErr(err, "list after delete")
		Equal(c, len(listed), 0, "configs after delete")
	})

	s.registerErrors(r)
}

// UnknownTaskID is a task id no backend knows.
func UnknownTaskID() string { return "no-such-task-" + uuid.NewString() }

func (s *Suite) registerErrors(r *Runner) {
	r.Add("error-get-unknown", func(ctx context.Context, c Checker) {
		_, err := s.Client(ctx, c).GetTask(ctx, UnknownTaskID(), nil)
		s.ExpectCode(c, err, "get", CodeTaskNotFound)
	})

	r.Add("error-cancel-unknown", func(ctx context.Context, c Checker) {
		_, err := s.Client(ctx, c).Cancel(ctx, UnknownTaskID())
		s.ExpectCode(c, err, "cancel", CodeTaskNotFound)
	})

	r.Add("error-subscribe-unknown", func(ctx context.Context, c Checker) {
		id := UnknownTaskID()
		events, err := Collect(s.Client(ctx, c).Subscribe(ctx, id))
		if s.Deviates("error-subscribe-unknown") {
			s.LostStreamError(ctx, c, events, err, id, nil)
			return
		}
		s.ExpectCode(c, err, fmt.Sprintf("subscribe (events before the error: %v)", EventKinds(events)), CodeTaskNotFound)
	})

	r.Add("error-continue-unknown", func(ctx context.Context, c Checker) {
		_, err := s.Client(ctx, c).Send(ctx, SendRequest{Parts: TextParts("continue nothing"), TaskID: UnknownTaskID()})
		s.ExpectCode(c, err, "send", CodeTaskNotFound)
	})

	r.Add("error-stream-continue-unknown", func(ctx context.Context, c Checker) {
		req := SendRequest{Parts: TextParts("continue nothing"), TaskID: UnknownTaskID()}
		events, err := Collect(s.Client(ctx, c).Stream(ctx, req))
		if s.Deviates("error-stream-continue-unknown") {
			s.LostStreamError(ctx, c, events, err, req.TaskID, &req)
			return
		}
		s.ExpectCode(c, err, fmt.Sprintf("stream (events before the error: %v)", EventKinds(events)), CodeTaskNotFound)
	})

	r.Add("error-unknown-method", func(ctx context.Context, c Checker) {
		id := "req-" + uuid.NewString()
		resp := s.RawRPC(ctx, c, fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"method":%q,"params":{}}`, id, s.UnknownMethod))
		Equal(c, resp["jsonrpc"], any("2.0"), "jsonrpc")
		Equal(c, ErrorCode(resp), CodeMethodNotFound, fmt.Sprintf("error in %v", resp))
		Equal(c, resp["id"], any(id), "response id echoes the request id")
	})

	r.Add("error-malformed-json", func(ctx context.Context, c Checker) {
		resp := s.RawRPC(ctx, c, fmt.Sprintf(`{"jsonrpc": "2.0", "id": 7, "method": %q, "params": {`, s.SendMethod))
		Equal(c, resp["jsonrpc"], any("2.0"), "jsonrpc")
		Equal(c, ErrorCode(resp), CodeParseError, fmt.Sprintf("error in %v", resp))
		value, present := resp["id"]
		c.Check(present && value == nil, "a parse error answers with id null, got %v", resp)
	})
}
