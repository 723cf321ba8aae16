package proxy

import (
	"net/http"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/normalize"
)

// The emulations of what a backend's dialect lacks, so that a caller gets
// what its own dialect promises whatever the backend speaks:
//
//   - firstPushConfig (0.x caller, 1.0 backend): a 0.2.5-style push config
//     get that names only the task answers the task's first config.
//   - subscribeSnapshot (1.0 caller, 0.x backend): a 1.0 subscription opens
//     with the task, which a 0.x resubscribe need not send (Python 0.3 does
//     not; the JS 0.2.5 and 0.3 servers do, and that repeat is dropped, or
//     sent as the status update it brings: relay.step in stream.go).
//   - the final-flag hold (0.x caller, 1.0 backend): 1.0 has no final flag,
//     so a status update in an interrupted state is held until the next
//     event or the stream's end says whether it was the last (holdsForFinal,
//     release and graceOver below; relay.step in stream.go holds the event).
//   - the contextId fill-in (any pair): a send that continues a known task
//     without naming its context gets the task's context, as the message
//     rules require (the send path of route in route.go, beside the owner
//     check that guards it).
//   - ListTasks (1.0 caller, any backend): the listing is served from the
//     gateway's task index, each task read from its backend (listtasks.go).
//   - history (any pair): a caller that names no historyLength gets all of
//     the history in either dialect, so a 0.x backend, which may read a
//     missing one as none (the JS 0.2.5 server does), is asked for
//     normalize.AllHistory on every get and send, the gateway's own reads
//     included; and a task's history is cut to what the caller's
//     historyLength asked, whatever the backend did with it (trimmedHistory
//     in agent.go, called from unary and for the task opening a stream, and
//     normalize.TrimHistory in currentTask).
//   - calls about a task in a final state (any pair): each caller gets its
//     own spec's answer whichever SDK built the backend (the README's
//     table): a message continuing it (finalMessageRefusal), a
//     subscription (finalSubscribeRefusal for 1.0, finalSubscription for
//     0.x) and a 0.x caller's cancel through a 1.0 backend (notCancelable).
//     The gateway answers itself when the index holds the task final
//     (finalStateAnswer), and else reads the task when the backend refused
//     (refusedByFinal, refusedStream in stream.go) or, for that cancel,
//     before asking it (finishedBeforeCancel).
//
// Every byte of A2A they write comes from package normalize.

// firstPushConfig answers a 0.2.5-style push config get that names only the
// task ("the server returns one of the configs"): 1.0 requires a config id,
// so the gateway lists the task's configs and answers the first.
func (a *Agent) firstPushConfig(w http.ResponseWriter, r *http.Request, c *call) {
	params, err := normalize.TaskParams(dialect.ListPushConfigs, c.backend.dialect, c.info.Tenant, c.info.TaskID, -1)
	if err != nil {
		a.fail(w, c, normalize.AsError(err, dialect.ErrInternal))
		return
	}
	method, _ := dialect.MethodName(c.backend.dialect, dialect.ListPushConfigs)
	list, e := a.unary(r.Context(), r, c, dialect.ListPushConfigs, method, params)
	if e != nil {
		a.fail(w, c, e)
		return
	}
	first, ok := normalize.FirstPushConfig(c.env.Dialect, list)
	if !ok {
		a.fail(w, c, normalize.Errorf(dialect.ErrTaskNotFound, "task %s has no push notification config", c.info.TaskID))
		return
	}
	out := normalize.AppendResultResponse(nil, c.env.ID, first)
	c.bytes += len(out)
	writeJSON(w, http.StatusOK, out)
}

// subscribeSnapshot fetches the task a 1.0 caller subscribes to from a 0.x
// backend, whose resubscribe need not start with the task: a 1.0 stream
// must (1.0 §3.1.6), and a finished task cannot be subscribed to.
func (a *Agent) subscribeSnapshot(r *http.Request, c *call) (_ []byte, final bool, _ *normalize.Error) {
	params, err := normalize.TaskParams(dialect.GetTask, c.backend.dialect, c.info.Tenant, c.info.TaskID, -1)
	if err != nil {
		return nil, false, normalize.AsError(err, dialect.ErrInternal)
	}
	method, _ := dialect.MethodName(c.backend.dialect, dialect.GetTask)
	task, e := a.unary(r.Context(), r, c, dialect.GetTask, method, params)
	if e != nil {
		return nil, false, e
	}
	// unary has checked the task's shape.
	if state := normalize.InspectTask(task).State; dialect.TerminalState(state) {
		if c.callerDialect() == dialect.V03 {
			// A 0.3 REST or gRPC caller: the task alone is the stream
			// (finalSubscription).
			return normalize.TaskEvent(task), true, nil
		}
		return nil, false, normalize.Errorf(dialect.ErrUnsupportedOperation, "task %s is already in a final state (%s): there is nothing to subscribe to", c.info.TaskID, state)
	}
	return normalize.TaskEvent(task), false, nil
}

// graceOver sends the held event when the backend kept the stream open
// after it: not final.
func (rl *relay) graceOver() {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	if !rl.finished {
		rl.release(false)
		rl.s.releaseScratch()
	}
}

// release sends the held event, if any, with the given final flag.
func (rl *relay) release(final bool) bool {
	if rl.held == nil {
		return true
	}
	rl.grace.Stop()
	held := rl.held
	rl.held, rl.grace = nil, nil
	a, s := rl.a, rl.s
	sc := s.scratch()
	out, err := normalize.AppendEvent(sc.result[:0], s.c.backend.dialect, s.c.env.Dialect, held, final)
	if err != nil { // it translated once already, when it arrived
		a.metrics.translationError("event", dialect.ErrInvalidAgentResponse)
		a.streamFail(s, normalize.AsError(err, dialect.ErrInvalidAgentResponse))
		return false
	}
	keep(&sc.result, out, held)
	rl.passHeld()
	return s.event(out) == nil
}

// holdsForFinal reports whether an event must wait before it is sent. A 0.x
// caller needs "final" on every status update, and final is true on
// input-required and auth-required only when the backend ends the stream
// after that event — which a 1.0 backend says only by closing it. Such an
// event is held until the backend's next move: the close (final: true), a
// further event, or interruptGrace passing (final: false). Nothing else is
// ever held.
func (a *Agent) holdsForFinal(c *call, info normalize.EventInfo) bool {
	return c.env.Dialect == dialect.V03 && info.Kind == normalize.KindStatusUpdate &&
		!info.HasFinal && dialect.InterruptedState(info.State)
}

// finalTask reads the task the call names from its backend, in the
// caller's dialect with all of its history, and returns it when it is in a
// final state: nil when it is not, or cannot be read (the backend's own
// answer then stands).
func (a *Agent) finalTask(r *http.Request, c *call) ([]byte, string) {
	params, err := normalize.TaskParams(dialect.GetTask, c.backend.dialect, c.info.Tenant, c.info.TaskID, -1)
	if err != nil {
		return nil, ""
	}
	method, _ := dialect.MethodName(c.backend.dialect, dialect.GetTask)
	task, e := a.unary(r.Context(), r, c, dialect.GetTask, method, params)
	if e != nil {
		return nil, ""
	}
	state := normalize.InspectTask(task).State
	if !dialect.TerminalState(state) {
		return nil, ""
	}
	return task, state
}

// indexedFinal reports whether the task index holds the call's task in a
// final state, which no later event can change.
func (c *call) indexedFinal() bool { return dialect.TerminalState(c.taskState) }

// finalMessageRefusal answers a message that continues a task in a final
// state as the caller's own spec does, whatever the backend's SDK answers
// (a2a-go v2 -32602, JS 1.x -32004, JS 0.x -32600, Python 0.3 -32602): 1.0
// asks for UnsupportedOperationError (§3.1.1); the 0.x texts name no code,
// and a 0.x caller gets what the JS 0.2.5 and 0.3 reference servers answer,
// InvalidRequest; so does a caller of the 0.3 REST or gRPC binding (gRPC
// INVALID_ARGUMENT, as a2a-go v0.3's server answers), whose call reaches
// the core as 1.0.
func finalMessageRefusal(c *call, state string) *normalize.Error {
	if c.callerDialect() == dialect.V10 {
		return normalize.Errorf(dialect.ErrUnsupportedOperation, "task %s is in a final state (%s) and accepts no further message: send the message as a new task", c.info.TaskID, state)
	}
	return normalize.Errorf(dialect.ErrInvalidRequest, "task %s is in a final state (%s) and cannot be modified: send the message as a new task", c.info.TaskID, state)
}

// finalSubscribeRefusal is a 1.0 caller's answer to a subscription to a
// task in a final state: UnsupportedOperationError (1.0 SubscribeToTask),
// where a2a-go v2 answers -32001 "no active execution".
func finalSubscribeRefusal(c *call, state string) *normalize.Error {
	return normalize.Errorf(dialect.ErrUnsupportedOperation, "task %s is already in a final state (%s): there is nothing to subscribe to", c.info.TaskID, state)
}

// notCancelable is the answer to a cancel of a task in a final state in
// both specs (TaskNotCancelableError), which the JS 1.x and a2a-go v2
// servers answer with the task instead: a 0.x caller of such a backend gets
// the error. Between peers of one dialect the backend's answer stands.
func notCancelable(c *call, state string) *normalize.Error {
	return normalize.Errorf(dialect.ErrTaskNotCancelable, "task %s is already in a final state (%s) and cannot be canceled", c.info.TaskID, state)
}

// crossCancel reports whether a cancel needs the notCancelable emulation:
// a 0.x caller (of the 0.3 REST or gRPC binding too), a 1.0 backend.
func crossCancel(c *call) bool {
	return c.env.Op == dialect.CancelTask && c.callerDialect() == dialect.V03 && c.backend.dialect == dialect.V10
}

// finalStateAnswer is the caller's own spec's answer to a call about a
// task the index already holds in a final state, given before the backend
// is asked; nil when the backend is to be asked.
func (a *Agent) finalStateAnswer(c *call) *normalize.Error {
	if !c.indexedFinal() {
		return nil
	}
	switch op := c.env.Op; {
	case op == dialect.SendMessage || op == dialect.SendStreamingMessage:
		return finalMessageRefusal(c, c.taskState)
	case op == dialect.SubscribeToTask && c.callerDialect() == dialect.V10:
		return finalSubscribeRefusal(c, c.taskState)
	case crossCancel(c):
		return notCancelable(c, c.taskState)
	}
	return nil
}

// finishedBeforeCancel reads the task a 0.x caller cancels through a 1.0
// backend first, when the index does not know it final: a JS 1.x or
// a2a-go v2 server answers a cancel of a canceled task with the task, as
// it answers the cancel that canceled it.
func (a *Agent) finishedBeforeCancel(r *http.Request, c *call) *normalize.Error {
	if !crossCancel(c) || c.indexedFinal() {
		return nil
	}
	if task, state := a.finalTask(r, c); task != nil {
		return notCancelable(c, state)
	}
	return nil
}

// refusedByFinal replaces a backend's refusal of a message to a task, or
// of a 1.0 subscription, with the caller's spec's answer when the task
// turns out to be in a final state; nil when the backend's answer stands.
func (a *Agent) refusedByFinal(r *http.Request, c *call) *normalize.Error {
	op := c.env.Op
	send := (op == dialect.SendMessage || op == dialect.SendStreamingMessage) && c.info.TaskID != ""
	if !send && !(op == dialect.SubscribeToTask && c.callerDialect() == dialect.V10) {
		return nil
	}
	task, state := a.finalTask(r, c)
	switch {
	case task == nil:
		return nil
	case send:
		return finalMessageRefusal(c, state)
	}
	return finalSubscribeRefusal(c, state)
}

// finalSubscription answers a 0.x caller's resubscribe to a task in a
// final state as the 0.3 spec says (TaskSubscription: "the stream will
// return the completed task (like GetTask) and close"), where a 1.0
// backend refuses it; a caller of the 0.3 REST or gRPC binding, whose call
// reaches the core as 1.0, is a 0.x caller too. It reports false when the
// task is not final.
func (a *Agent) finalSubscription(r *http.Request, s *sse) bool {
	c := s.c
	if c.env.Op != dialect.SubscribeToTask || c.callerDialect() != dialect.V03 {
		return false
	}
	task, _ := a.finalTask(r, c)
	if task == nil {
		return false
	}
	_ = s.event(finalTaskEvent(c, task))
	return true
}

// finalTaskEvent is the stream event of task, read in the call's dialect:
// a 1.0 stream's events are StreamResponses.
func finalTaskEvent(c *call, task []byte) []byte {
	if c.env.Dialect == dialect.V10 {
		return normalize.TaskEvent(task)
	}
	return task
}
