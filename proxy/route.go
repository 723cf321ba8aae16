package proxy

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/a2agate/gateway/agentcard"
	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/normalize"
	"github.com/a2agate/gateway/store"
)

// errTaskNotFound is the answer for a task the caller may not see. It names
// no id, so a task of another principal and a task that does not exist get
// byte-for-byte the same answer: existence never leaks.
func errTaskNotFound() *normalize.Error {
	return normalize.Errorf(dialect.ErrTaskNotFound, "Task not found")
}

// indexUnavailable is the answer when the task index cannot be reached: the
// gateway fails closed rather than serve task calls unchecked.
func (a *Agent) indexUnavailable(operation string, err error) *normalize.Error {
	a.metrics.storeError(operation)
	return &normalize.Error{Kind: dialect.ErrInternal, Message: "the gateway's task index cannot be reached, so it cannot check who owns tasks: task calls are refused until it is back", Err: err}
}

// indexRefusal is the answer to a send the index cannot take: a caller whose
// share is full of unfinished tasks, a full index, or an index out of reach.
func (a *Agent) indexRefusal(operation string, err error) *normalize.Error {
	var limit *store.LimitError
	switch {
	case errors.As(err, &limit) && errors.Is(err, store.ErrOwnerQuota):
		return &normalize.Error{Kind: dialect.ErrInternal, Err: err, Message: fmt.Sprintf(
			"this caller already has %d unfinished tasks remembered by the gateway for this agent (%s): wait for some to finish or expire, or cancel some",
			limit.Limit, limit.Setting)}
	case errors.As(err, &limit):
		return &normalize.Error{Kind: dialect.ErrInternal, Err: err, Message: fmt.Sprintf(
			"the gateway's task index holds %d unfinished tasks, its bound (%s): new tasks are refused until some finish or expire",
			limit.Limit, limit.Setting)}
	}
	return a.indexUnavailable(operation, err)
}

// uncheckedAnswer replaces a backend's "task not found" for a call served
// unchecked (tasks.allow_unknown) with the gateway's own, which names no id:
// a backend's answer may carry the id, and another caller's task must get
// byte for byte the answer a missing one gets. It returns nil for any other
// error.
func uncheckedAnswer(c *call, ae *normalize.AgentError) *normalize.Error {
	if !c.unchecked || ae.Code != dialect.ErrTaskNotFound.Error().Code {
		return nil
	}
	return errTaskNotFound()
}

// route validates the call, checks the caller may address what it names,
// picks the backend and returns the params in that backend's dialect.
func (a *Agent) route(r *http.Request, c *call) ([]byte, *normalize.Error) {
	env := &c.env
	target := a.backend
	// With skill routes the backend, and so the target dialect, is known
	// only once the params were read.
	to := target.dialect
	if len(a.routes) > 0 {
		to = env.Dialect
	}
	buf := borrowBuffer(len(env.Params) + 256)
	params, info, err := normalize.AppendParams((*buf)[:0], env, to)
	if keep(buf, params, env.Params); len(params) > 0 && len(env.Params) > 0 && &params[0] == &env.Params[0] {
		// Nothing to translate: the buffer goes back at once, not at the
		// call's end, which for a stream is when it closes.
		returnBuffer(buf)
	} else {
		c.lent = append(c.lent, buf)
	}
	if err != nil {
		e := normalize.AsError(err, dialect.ErrInvalidParams)
		a.metrics.translationError("request", e.Kind)
		return nil, e
	}
	c.info = info
	ctx := r.Context()
	send := env.Op == dialect.SendMessage || env.Op == dialect.SendStreamingMessage
	var known *store.Task
	var rt *sendRetry
	if send {
		if len(r.Header[HeaderIdempotencyKey]) > 1 {
			// Two keys name two sends: taking one would drop the other.
			return nil, normalize.Errorf(dialect.ErrInvalidRequest, "the %s header is given more than once: a send has one key", HeaderIdempotencyKey)
		}
		rt = a.newSendRetry(r, c, params, to)
	}
	switch {
	case info.TaskID != "":
		t, e := a.ownedTask(ctx, c, rt)
		if e != nil {
			return nil, e
		}
		if t != nil {
			known = t
			c.taskState = t.State
			c.indexedState, c.indexedAt = t.State, t.Updated
			// The index is the truth for whose a task is, and so for its
			// context: an answer giving the task another one is withheld
			// (record), as a context shown is one the caller may continue.
			c.contextID = t.ContextID
			if b := a.byName[t.Backend]; b != nil {
				target = b
			}
		}
	case send:
		// Fail closed before the backend acts: a send the index could not
		// record would run a task its caller can never reach. The check also
		// reads the context's owner, in the same round trip.
		ictx, span := a.startIndexSpan(ctx, c, indexAdmit, "")
		owner, err := a.admitSend(ictx, c, rt)
		endIndexSpan(span, err)
		switch {
		case errors.Is(err, store.ErrNotFound):
		case err != nil:
			return nil, a.indexRefusal("read", err)
		case owner != c.owner:
			return nil, normalize.Errorf(dialect.ErrInvalidParams, "invalid params: params.message.contextId belongs to another caller: start a new context or continue one of yours")
		}
		b, e := a.skillBackend(c)
		if e != nil {
			return nil, e
		}
		target = b
	}
	if send && len(info.ReferenceTaskIDs) > 0 {
		if e := a.ownedReferences(ctx, c); e != nil {
			return nil, e
		}
	}
	c.backend = target
	if target.dialect != to {
		if params, _, err = normalize.AppendParams(nil, env, target.dialect); err != nil {
			return nil, normalize.AsError(err, dialect.ErrInvalidParams)
		}
	}
	if send && known != nil && known.ContextID != "" {
		switch {
		case info.ContextID == "":
			// The message rules of the spec, enforced whatever the backend does.
			params, err = normalize.SetContextID(params, known.ContextID)
			if err != nil {
				return nil, normalize.AsError(err, dialect.ErrInternal)
			}
		case info.ContextID != known.ContextID:
			return nil, normalize.Errorf(dialect.ErrInvalidParams, "invalid params: params.message.contextId %q is not the context of task %s", info.ContextID, info.TaskID)
		}
	}
	return params, nil
}

// ownedTask returns the indexed task the call addresses, or the error the
// caller gets. It returns nil, nil for a task the gateway never saw when the
// agent allows those, unchecked. A send with a key claims it in the same
// read (rt; nil for other calls).
func (a *Agent) ownedTask(ctx context.Context, c *call, rt *sendRetry) (*store.Task, *normalize.Error) {
	ictx, span := a.startIndexSpan(ctx, c, indexGet, c.spanTaskID())
	t, err := a.getTask(ictx, c, rt)
	endIndexSpan(span, err)
	switch v, e := a.ownership(ctx, c, c.info.TaskID, c.spanTaskID(), t, err); {
	case e != nil:
		return nil, e
	case v == notTheCallers:
		return nil, errTaskNotFound()
	case v == unrecorded:
		c.unchecked = true
		return nil, nil
	}
	return &t, nil
}

// ownershipVerdict is what the index says of a task a call names.
type ownershipVerdict int

const (
	callersOwn    ownershipVerdict = iota
	notTheCallers                  // another caller's, or unknown where unknown ids are refused
	unrecorded                     // no agent of this gateway recorded it, and the agent allows those
)

// ownership judges the index's answer (t, err) for the task id a call
// names; spanID is the id as its spans carry it (a copy: the id may be a
// view into the request's body).
func (a *Agent) ownership(ctx context.Context, c *call, id, spanID string, t store.Task, err error) (ownershipVerdict, *normalize.Error) {
	switch {
	case errors.Is(err, store.ErrNotFound):
		if !a.cfg.Tasks.AllowUnknown {
			return notTheCallers, nil
		}
		// Only an id no agent of this gateway recorded is served unchecked:
		// agents may share a backend, and a task made through one is still
		// its owner's through another.
		ictx, span := a.startIndexSpan(ctx, c, indexKnown, spanID)
		known, err := a.tasks.Known(ictx, id)
		endIndexSpan(span, err)
		switch {
		case err != nil:
			return 0, a.indexUnavailable("read", err)
		case known:
			return notTheCallers, nil
		}
		return unrecorded, nil
	case err != nil:
		return 0, a.indexUnavailable("read", err)
	case t.Owner != c.owner:
		return notTheCallers, nil
	}
	return callersOwn, nil
}

// maxReferenceTaskIDs bounds the tasks one message may reference: each is
// an index read before the send is forwarded.
const maxReferenceTaskIDs = 64

// ownedReferences refuses a send whose message references a task that is
// not the caller's: an agent may read a referenced task as the message's
// context and answer from it, which would hand another caller's task to
// this one. A task that does not exist gets the same answer, so that the
// two cannot be told apart; with tasks.allow_unknown, one no agent of this
// gateway recorded is passed on unchecked, as a taskId is.
func (a *Agent) ownedReferences(ctx context.Context, c *call) *normalize.Error {
	refs := c.info.ReferenceTaskIDs
	if len(refs) > maxReferenceTaskIDs {
		return normalize.Errorf(dialect.ErrInvalidParams, "invalid params: params.message.referenceTaskIds holds %d task ids, more than the %d the gateway checks for one message: reference fewer", len(refs), maxReferenceTaskIDs)
	}
	for i, id := range refs {
		// The id is a view into the request's body, whose buffer the next
		// request reuses; a span outlives the call.
		spanID := ""
		if a.recording(ctx) {
			spanID = strings.Clone(id)
		}
		ictx, span := a.startIndexSpan(ctx, c, indexGet, spanID)
		t, err := a.tasks.Get(ictx, a.cfg.Name, id)
		endIndexSpan(span, err)
		switch v, e := a.ownership(ctx, c, id, spanID, t, err); {
		case e != nil:
			return e
		case v == notTheCallers:
			return normalize.Errorf(dialect.ErrTaskNotFound, "Task not found: params.message.referenceTaskIds[%d] names no task of yours", i)
		}
	}
	return nil
}

// skillBackend picks the backend for new work by the skill the message
// names. An agent with one skill needs no name.
func (a *Agent) skillBackend(c *call) (*backend, *normalize.Error) {
	skills := a.cards.skillIDs()
	if len(skills) <= 1 && len(a.routes) == 0 {
		return a.backend, nil
	}
	id := c.info.SkillID
	if id == "" {
		id = a.cfg.Skills.Default
	}
	if id == "" {
		return nil, normalize.Errorf(dialect.ErrInvalidParams, "invalid params: this agent has several skills: name one in message.metadata.skillId (one of: %s)", strings.Join(skills, ", "))
	}
	if b := a.routes[id]; b != nil {
		return b, nil
	}
	for _, s := range skills {
		if s == id {
			return a.backend, nil
		}
	}
	return nil, normalize.Errorf(dialect.ErrInvalidParams, "invalid params: skill %q is not one of this agent's skills: %s", id, strings.Join(skills, ", "))
}

// record notes a task the caller created or touched in the task index.
// The backend has acted by now, so a failing write does not fail the call:
// the caller gets its task, and the write is logged, counted and retried in
// the background. A send was admitted before it was forwarded, so this is
// the rare index that failed in between.
func (a *Agent) record(ctx context.Context, c *call, info normalize.EventInfo) *normalize.Error {
	if c.pushPending != nil && info.TaskID != "" {
		if e := a.bindPending(ctx, c, info.TaskID); e != nil {
			return e
		}
	}
	if c.unchecked {
		return nil
	}
	if info.TaskID == "" {
		// Messages create no task, but one in another caller's context
		// would hand the caller that context's id.
		return a.inOwnContext(ctx, c, info.ContextID)
	}
	switch first := cmp.Or(c.taskID, c.namedTask); {
	case first != "" && info.TaskID != first:
		// A stream is about one task: a second one would be recorded as
		// the caller's, or shown to the caller if another's (or, before
		// either was recorded, shown as though one task).
		return backendFault(backendInvalidReply, "backend %q answered about a second task after task %q, which the gateway withholds: one call's answer is about one task",
			c.backend.name, truncateHeader(first))
	case info.ContextID != "" && c.contextID != "" && info.ContextID != c.contextID:
		// Named for what it is when the context is another caller's, and
		// never named: it may be.
		if owner, err := a.tasks.ContextOwner(ctx, a.cfg.Name, info.ContextID); err == nil && owner != c.owner {
			return a.withheldInAnothersContext(c)
		}
		return backendFault(backendInvalidReply, "backend %q answered about task %q with another contextId than the task has (in the gateway's index, or as the backend gave it before), which the gateway withholds: a task's context never changes",
			c.backend.name, truncateHeader(info.TaskID))
	}
	if info.State == "" {
		// An artifact update, or a message naming a task, says nothing of
		// state to record, but may name another caller's task.
		if e := a.inOwnContext(ctx, c, info.ContextID); e != nil {
			return e
		}
		if info.TaskID == c.taskID || info.TaskID == c.info.TaskID {
			return nil // recorded or checked already
		}
		switch err := a.notAnothers(ctx, c.owner, info.TaskID); {
		case errors.Is(err, errNotTheOwnersTask):
			return a.withheldAsAnothers(c)
		case err != nil:
			return a.indexUnavailable("read", err)
		}
		if c.namedTask == "" {
			c.namedTask = strings.Clone(info.TaskID)
		}
		return nil
	}
	// The ids are views into the backend's reply; an index or a call that
	// kept them would keep every reply alive with them. One copy holds
	// both: they are kept together.
	var ids strings.Builder // a copy even when one id is empty, as + is not
	ids.Grow(len(info.TaskID) + len(info.ContextID))
	ids.WriteString(info.TaskID)
	ids.WriteString(info.ContextID)
	t := store.Task{
		ID: ids.String()[:len(info.TaskID)], ContextID: ids.String()[len(info.TaskID):], Owner: c.owner, Agent: a.cfg.Name,
		Backend: c.backend.name, State: info.State, Updated: c.statusTime(info, time.Now()),
	}
	c.taskID, c.contextID = t.ID, t.ContextID
	c.indexedState, c.indexedAt = t.State, t.Updated
	ictx, span := a.startIndexSpan(ctx, c, indexPut, t.ID)
	err := a.putTask(ictx, c, t)
	endIndexSpan(span, err)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, store.ErrOwnerConflict):
		return a.withheldAsAnothers(c)
	case errors.Is(err, store.ErrContextConflict):
		return a.withheldInAnothersContext(c)
	}
	a.metrics.storeError("write")
	select {
	case recordRetrySlots <- struct{}{}:
		a.log.Error("recording a task in the index failed after the backend acted; the caller gets its task and the write is retried",
			"op", c.env.Op.String(), "task_id", t.ID, "error", err)
		go func() {
			defer func() { <-recordRetrySlots }()
			a.retryRecord(t)
		}()
	default:
		a.log.Error("recording a task in the index failed after the backend acted, and too many writes are being retried already: "+
			"the caller gets its task, which the gateway will not know", "op", c.env.Op.String(), "task_id", t.ID, "error", err)
	}
	return nil
}

// statusTime is the Updated to record for the task info reports, which the
// index lists by (newest first, statusTimestampAfter) and which decides
// whether it takes the state (an older one keeps the stored state). It is
// the backend's status timestamp, held to what the gateway can vouch for.
// One ahead of the gateway's clock would pin the task at the head of the
// list, so it counts as none. Without one (optional in 0.x), an unchanged
// state keeps the stored time, so reading a task does not move it in the
// list, and a changed one is now. It is no older than the status the index
// holds, or a changed state would be dropped, nor for a task new to the
// index than the call that made it, so a clock far behind hides nothing.
func (c *call) statusTime(info normalize.EventInfo, now time.Time) time.Time {
	at := info.Timestamp
	if at.After(now) {
		at = time.Time{}
	}
	if at.IsZero() && info.State != c.indexedState {
		at = now
	}
	if c.indexedState == "" {
		return later(at, c.start)
	}
	return later(at, c.indexedAt)
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// recordRetrySlots bounds the task writes retried at once, across agents:
// a stream's every state change while the index is down would otherwise
// start one more.
var recordRetrySlots = make(chan struct{}, 1024)

// recordRetryDelays are the waits before each background retry of a failed
// task write: about 6 s in all, past a Redis failover or reconnect.
var recordRetryDelays = []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, 1600 * time.Millisecond, 3200 * time.Millisecond}

// recordRetryTimeout bounds each retried write.
const recordRetryTimeout = 2 * time.Second

// retryRecord writes t again until it is recorded or the retries run out.
// A retry that lands after a newer write keeps the newer state (Put's rule
// for out-of-order updates).
func (a *Agent) retryRecord(t store.Task) {
	var err error
	for i, d := range recordRetryDelays {
		time.Sleep(d) // a backoff between writes, nothing waits on it
		ctx, cancel := context.WithTimeout(context.Background(), recordRetryTimeout)
		err = a.tasks.Put(ctx, t)
		cancel()
		switch {
		case err == nil:
			a.log.Info("a task write retried in the background succeeded", "task_id", t.ID, "attempt", i+2)
			return
		case errors.Is(err, store.ErrOwnerConflict):
			a.log.Warn("a task write retried in the background found the id held by another caller", "task_id", t.ID)
			return
		case errors.Is(err, store.ErrContextConflict):
			a.log.Warn("a task write retried in the background found its context held by another caller", "task_id", t.ID)
			return
		}
		a.metrics.storeError("write")
	}
	a.log.Error("a task write was given up after its retries: its owner cannot reach it through the gateway", "task_id", t.ID,
		"attempts", len(recordRetryDelays)+1, "error", err)
}

// skillIDs lists the ids of the skills on the published card.
func (c *cards) skillIDs() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.skills
}

func skillIDsOf(canon []byte) []string {
	var ids []string
	for _, s := range agentcard.Skills(canon) {
		if s.ID != "" {
			ids = append(ids, s.ID)
		}
	}
	return ids
}

// withheldAsAnothers logs and answers a backend answer withheld because it
// names a task the index holds for another caller.
func (a *Agent) withheldAsAnothers(c *call) *normalize.Error {
	a.log.Warn("the backend answered with a task id the index holds for another caller; answer withheld", "op", c.env.Op.String())
	a.metrics.backendError(a.cfg.Name, backendInvalidReply)
	return errTaskNotFound()
}

// inOwnContext checks the context of a message the backend answered
// (with no task): the caller's own, one nobody holds, or else the answer
// is withheld as the answer of a task there is. The send's own context was
// checked when it was admitted, and the call's task's when it was recorded.
// Without auth every caller is the same owner, so no context is
// another's: the index is not read.
func (a *Agent) inOwnContext(ctx context.Context, c *call, contextID string) *normalize.Error {
	if a.verifier == nil || contextID == "" || contextID == c.info.ContextID || contextID == c.contextID {
		return nil
	}
	switch owner, err := a.tasks.ContextOwner(ctx, a.cfg.Name, contextID); {
	case errors.Is(err, store.ErrNotFound):
		return nil
	case err != nil:
		return a.indexUnavailable("read", err)
	case owner != c.owner:
		a.log.Warn("the backend answered the caller with a message in a context the index holds for another caller; answer withheld",
			"op", c.env.Op.String(), "backend", c.backend.name)
		return backendFault(backendInvalidReply, "backend %q answered with a message in a context that belongs to another caller, so the gateway withholds it: "+
			"this is a fault of the backend, for its operator to look into; a send naming no contextId starts a new context", c.backend.name)
	}
	return nil
}

// withheldInAnothersContext logs and answers a backend answer withheld
// because it puts the caller's task in a context the index holds for
// another caller: relayed, it would hand the caller that context's id, and
// recorded, give the context a second owner. The answer names neither the
// context nor its owner, and is counted as a bad reply of the backend.
func (a *Agent) withheldInAnothersContext(c *call) *normalize.Error {
	a.log.Warn("the backend put the caller's task in a context the index holds for another caller; answer withheld",
		"op", c.env.Op.String(), "backend", c.backend.name)
	return backendFault(backendInvalidReply, "backend %q put this task in a context that belongs to another caller, so the gateway withholds its answer and keeps no record of the task: "+
		"this is a fault of the backend, for its operator to look into; a send naming no contextId starts a new context", c.backend.name)
}

// errNotTheOwnersTask is notAnothers' refusal.
var errNotTheOwnersTask = errors.New("the index holds the task for another caller")

// notAnothers returns errNotTheOwnersTask when the index holds taskID for
// another caller than owner, and the index's error (not counted) when it
// cannot be read. A task it does not hold is not yet recorded, not
// another's.
func (a *Agent) notAnothers(ctx context.Context, owner, taskID string) error {
	t, err := a.tasks.Get(ctx, a.cfg.Name, taskID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil
	case err != nil:
		return err
	case t.Owner != owner:
		return errNotTheOwnersTask
	}
	return nil
}
