package harness

import (
	"context"
	"fmt"
	"iter"
	"reflect"
	"slices"
	"strings"
	"time"
)

// MustTask ends the scenario unless res is a task in the wanted state
// ("" accepts any state).
func MustTask(c Checker, res Result, state, what string) *Task {
	if res.Task == nil {
		c.Fatalf("%s: expected a task, got %T %+v", what, res.SDK, res.SDK)
	}
	return CheckTask(c, res.Task, state, what)
}

// SendTask sends req with client and ends the scenario unless the send
// succeeds with a task in state (see MustTask); what names the send.
func SendTask(ctx context.Context, c Checker, client Client, req SendRequest, state, what string) *Task {
	res, err := client.Send(ctx, req)
	c.NoErr(err, what)
	return MustTask(c, res, state, what)
}

// CheckTask ends the scenario unless task has its ids and the wanted state
// ("" accepts any state).
func CheckTask(c Checker, task *Task, state, what string) *Task {
	c.Check(task != nil, "%s: no task", what)
	c.Check(task.ID != "", "%s: empty task id", what)
	c.Check(task.ContextID != "", "%s: empty contextId", what)
	if state != "" {
		c.Check(task.Status.State == state, "%s: state %q (status text %q), want %q", what, task.Status.State, StatusText(task.Status), state)
	}
	return task
}

// AssertDone checks the one artifact the scripted backend answers input
// with.
func AssertDone(c Checker, task *Task, input string) {
	Equal(c, len(task.Artifacts), 1, "artifacts")
	Equal(c, task.Artifacts[0].Name, ArtifactName, "artifact name")
	c.Check(task.Artifacts[0].ID != "", "empty artifactId")
	var texts []string
	for _, a := range task.Artifacts {
		for _, p := range a.Parts {
			if p.Kind == PartText {
				texts = append(texts, p.Text)
			}
		}
	}
	Equal(c, fmt.Sprint(texts), fmt.Sprint([]string{TextDone(input)}), "artifact text")
}

// historyString renders a task's history as role:first text. The 1.0
// client's checks rendered every role but the user's as agent (its other
// checks compare the role itself), and still do.
func (s *Suite) historyString(task *Task) string {
	out := make([]string, len(task.History))
	for i, m := range task.History {
		role := m.Role
		if s.is10() && role != RoleUser {
			role = RoleAgent
		}
		out[i] = role + ":" + FirstText(m.Parts)
	}
	return fmt.Sprint(out)
}

// Collect drains a stream; the error is the first one the stream yielded.
func Collect(seq iter.Seq2[Event, error]) ([]Event, error) {
	var events []Event
	for event, err := range seq {
		if err != nil {
			return events, err
		}
		events = append(events, event)
	}
	return events, nil
}

// EventKinds renders a stream for comparison.
func EventKinds(events []Event) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = e.Kind
	}
	return out
}

// assertCycle checks one stream cycle: the sequence of kinds, one task for
// all events and, in 0.3, "final" set on exactly the last status update
// (1.0 has no final flag: the stream's end is the end).
func (s *Suite) assertCycle(c Checker, events []Event, want []string, taskID string) {
	got := EventKinds(events)
	c.Check(fmt.Sprint(got) == fmt.Sprint(want), "stream event sequence: got %v, want %v", got, want)
	if taskID == "" {
		taskID = events[0].Task.ID
	}
	var statuses []Event
	for _, e := range events {
		Equal(c, e.TaskID, taskID, fmt.Sprintf("%T bound to task", e.SDK))
		if strings.HasPrefix(e.Kind, "status:") {
			statuses = append(statuses, e)
		}
	}
	if s.is10() {
		return
	}
	for i, e := range statuses {
		Equal(c, e.Final, i == len(statuses)-1, fmt.Sprintf("status-update %s: final flag (the stream closes after the last one)", e.Status.State))
	}
}

// CheckEchoed sends parts to the echo agent and checks that the completed
// task's one artifact holds the text done, then every part after the first,
// and that the stored user message holds all of parts.
func (s *Suite) CheckEchoed(ctx context.Context, c Checker, parts []Part, done string) {
	client := s.Client(ctx, c)
	task := SendTask(ctx, c, client, SendRequest{Parts: parts}, StateCompleted, "send")
	Equal(c, len(task.Artifacts), 1, "artifacts")
	want := append([]Part{{Kind: PartText, Text: done}}, parts[1:]...)
	c.Check(reflect.DeepEqual(task.Artifacts[0].Parts, want), "artifact parts: got %+v, want %+v", task.Artifacts[0].Parts, want)
	fetched, err := client.GetTask(ctx, task.ID, Ptr(10))
	c.NoErr(err, "get")
	c.Check(len(fetched.History) > 0 && reflect.DeepEqual(fetched.History[0].Parts, parts), "stored user parts: got %+v", fetched.History)
}

// startWaiting starts a task that stays working until it is canceled.
func (s *Suite) startWaiting(ctx context.Context, c Checker, text string) *Task {
	task := SendTask(ctx, c, s.Client(ctx, c), SendRequest{Parts: TextParts(text), Blocking: Ptr(false)}, "", "non-blocking send")
	c.Check(slices.Contains([]string{StateSubmitted, StateWorking}, task.Status.State), "state before cancel: %s", task.Status.State)
	return task
}

// pollTask gets the task until it reaches state; the scenario's context
// bounds the wait.
func (s *Suite) pollTask(ctx context.Context, c Checker, id, state string) *Task {
	var task *Task
	Poll(ctx, c, func() (bool, string) {
		var err error
		task, err = s.Client(ctx, c).GetTask(ctx, id, nil)
		c.NoErr(err, "poll")
		return task.Status.State == state, fmt.Sprintf("task %s still %s", id, task.Status.State)
	})
	return task
}

// Poll calls step until it reports done, every 50ms; the scenario's context
// bounds the wait, and a scenario that runs out of it fails saying what
// step last reported.
func Poll(ctx context.Context, c Checker, step func() (done bool, last string)) {
	for {
		done, last := step()
		if done {
			return
		}
		select {
		case <-ctx.Done():
			c.Fatalf("%s: %v", last, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}
