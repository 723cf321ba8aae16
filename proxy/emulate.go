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
//     with the task, which a 0.x resubscribe need not send.
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
//   - history trimming (any pair): a task's history is cut to what the
//     caller's historyLength asked, whatever the backend did with it
//     (normalize.TrimHistory, called from unary and currentTask).
//
// Every byte of A2A they write comes from package normalize.

// firstPushConfig answers a 0.2.5-style push config get that names only the
// task ("the server returns one of the configs"): 1.0 requires a config id,
// so the gateway lists the task's configs and answers the first.
func (a *Agent) firstPushConfig(w http.ResponseWriter, r *http.Request, c *call) {
	params, err := normalize.TaskParams(dialect.ListPushConfigs, c.backend.dialect, c.info.TaskID, -1)
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
func (a *Agent) subscribeSnapshot(r *http.Request, c *call) ([]byte, *normalize.Error) {
	params, err := normalize.TaskParams(dialect.GetTask, c.backend.dialect, c.info.TaskID, -1)
	if err != nil {
		return nil, normalize.AsError(err, dialect.ErrInternal)
	}
	method, _ := dialect.MethodName(c.backend.dialect, dialect.GetTask)
	task, e := a.unary(r.Context(), r, c, dialect.GetTask, method, params)
	if e != nil {
		return nil, e
	}
	// unary has checked the task's shape.
	if state := normalize.InspectTask(task).State; dialect.TerminalState(state) {
		return nil, normalize.Errorf(dialect.ErrUnsupportedOperation, "task %s is already in a final state (%s): there is nothing to subscribe to", c.info.TaskID, state)
	}
	return normalize.TaskEvent(task), nil
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
