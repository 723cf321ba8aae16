package agentcore

import (
	"context"
	"strings"
)

// Accepted is what taking a message in produced: a direct Reply, or a task
// (Rec) and the cursor of the first event its Snapshot does not show.
type Accepted[M, A, C any] struct {
	Reply    *M
	Rec      *Record[M, A, C]
	Snapshot Task[M, A]
	Cursor   int
}

// Accept acts on a validated user message: it answers a question, resumes
// the task the message names, or creates a task and starts its script.
// push, when set, is stored for the task before its script starts.
func (c *Core[M, A, C]) Accept(msg M, push *C) (Accepted[M, A, C], *Error) {
	d := c.dialect
	msgTaskID, msgContextID := d.IDs(&msg)
	taskID, contextID := *msgTaskID, *msgContextID
	if rerr := c.finalTaskMessage(taskID); rerr != nil {
		return Accepted[M, A, C]{}, rerr
	}
	if taskID != "" {
		rec, snap, cursor, rerr := c.store.resume(d, c.states, taskID, contextID, func(contextID string) M {
			*msgContextID = contextID
			return msg
		})
		if rerr != nil {
			return Accepted[M, A, C]{}, rerr
		}
		if push != nil {
			c.StorePush(rec, *push)
		}
		c.spawn(rec, func(ctx context.Context) { c.finish(ctx, rec, msg) })
		return Accepted[M, A, C]{Rec: rec, Snapshot: snap, Cursor: cursor}, nil
	}

	if contextID == "" {
		contextID = NewID()
	}
	b := classify(d.FirstText(msg))
	if b == answer {
		reply := d.AgentMessage("You asked: "+strings.TrimSpace(d.FirstText(msg)), "", contextID)
		return Accepted[M, A, C]{Reply: &reply}, nil
	}
	taskID = NewID()
	*msgTaskID, *msgContextID = taskID, contextID
	rec, snap := c.store.create(taskID, contextID, msg)
	if push != nil {
		c.StorePush(rec, *push)
	}
	c.spawn(rec, func(ctx context.Context) { c.runNew(ctx, rec, b, msg) })
	return Accepted[M, A, C]{Rec: rec, Snapshot: snap}, nil
}

// AwaitSettled blocks until rec is terminal or interrupted, ctx is done or
// the agent closes, and returns its snapshot then.
func (c *Core[M, A, C]) AwaitSettled(ctx context.Context, rec *Record[M, A, C]) Task[M, A] {
	c.store.awaitSettled(ctx, c.done, rec)
	return c.store.snapshot(rec)
}

// Lookup returns task id, or -32001 when there is none.
func (c *Core[M, A, C]) Lookup(id string) (Task[M, A], *Error) {
	rec, ok := c.store.lookup(id)
	if !ok {
		return Task[M, A]{}, ErrTaskNotFound(id)
	}
	return c.store.snapshot(rec), nil
}

// Cancel moves task id to canceled and stops its script; a terminal task
// is -32002.
func (c *Core[M, A, C]) Cancel(id string) (Task[M, A], *Error) {
	t, rerr := c.store.cancel(c.states, id)
	if rerr != nil && rerr.Code == CodeTaskNotCancelable && c.Opts.Like == GoV2 {
		t, _ = c.Lookup(id)
		return t, nil
	}
	return t, rerr
}

// finalTaskMessage is the error with which the SDK server Opts.Like names
// refuses a message to taskID when that task is in a final state; nil when
// it is not, or the agent gives its own answer (Dialect.NotAccepting).
func (c *Core[M, A, C]) finalTaskMessage(taskID string) *Error {
	if taskID == "" || c.Opts.Like == OwnAnswers {
		return nil
	}
	t, rerr := c.Lookup(taskID)
	if rerr != nil || !t.Status.State.Terminal() {
		return nil
	}
	state := c.states[t.Status.State]
	detail := map[string]string{"taskId": taskID, "state": state}
	if c.Opts.Like == JS025 {
		return NewError(CodeInvalidRequest, "Task "+taskID+" is in a terminal state ("+state+") and cannot be modified.", detail)
	}
	return NewError(CodeInvalidParams, "invalid params: task in a terminal state cannot be modified", detail)
}

// List snapshots every task keep accepts, in no particular order.
func (c *Core[M, A, C]) List(keep func(*Task[M, A]) bool) []Task[M, A] {
	return c.store.list(keep)
}

// Subscribe returns a stream carrying first, then, unless rec is nil, rec's
// events from cursor on, each rendered by render, until the stream cycle
// ends.
func (c *Core[M, A, C]) Subscribe(first any, rec *Record[M, A, C], cursor int, render func(Event[M, A]) any) Subscription {
	sub := Subscription{First: first}
	if rec != nil {
		sub.follow = func(ctx context.Context, emit func(any) error) {
			c.store.follow(ctx, c.done, rec, cursor, func(e Event[M, A]) error { return emit(render(e)) })
		}
	}
	return sub
}

// Resubscribe returns a stream of task id: first, given a snapshot of the
// task, then the task's events from that snapshot on until the stream
// cycle ends. A task that is terminal or interrupted gets first alone. An
// error from first refuses the stream; an unknown task is -32001.
func (c *Core[M, A, C]) Resubscribe(id string, first func(Task[M, A]) (any, *Error), render func(Event[M, A]) any) (Subscription, *Error) {
	rec, snap, cursor, ok := c.store.watch(id)
	if !ok {
		return Subscription{}, ErrTaskNotFound(id)
	}
	head, rerr := first(snap)
	if rerr != nil {
		return Subscription{}, rerr
	}
	if snap.Status.State.Settled() {
		rec = nil
	}
	return c.Subscribe(head, rec, cursor, render), nil
}
