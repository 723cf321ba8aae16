package agentcore

import (
	"context"
	"slices"
	"sync"
	"time"
)

// maxTasks bounds the number of tasks kept in memory. Past it, creating a
// task forgets the oldest one in a terminal state, so a long-running demo
// does not grow without limit.
const maxTasks = 10000

// Status is a task's status: its state, the agent's message about it and
// when it was set.
type Status[M any] struct {
	State   State
	Message *M
	Time    time.Time
}

// Task is a snapshot of one task, which the dialect renders.
type Task[M, A any] struct {
	ID        string
	ContextID string
	Status    Status[M]
	History   []M
	Artifacts []A
}

// Event is one stream event of a task: exactly one of Status and Artifact
// is set. An artifact event always carries the whole artifact (its last
// chunk).
type Event[M, A any] struct {
	TaskID    string
	ContextID string
	Status    *Status[M]
	Artifact  *A
}

// Push is a stored push notification config and its id.
type Push[C any] struct {
	ID     string
	Config C
}

// Record is one task and everything the agent keeps about it. Its fields
// are guarded by the store's mutex.
type Record[M, A, C any] struct {
	task Task[M, A]
	// updates is every event published since the task was created, so that
	// each stream replays exactly what it has not seen yet.
	updates []update[M, A]
	// changed is closed and replaced whenever updates grows.
	changed chan struct{}
	// stop cancels the script advancing the task; nil when none runs.
	stop context.CancelFunc
	push []Push[C]
	// notifying is set once the task's webhook sender runs (webhook.go).
	notifying bool
}

type update[M, A any] struct {
	event Event[M, A]
	// last marks the event after which a stream cycle ends.
	last bool
}

type store[M, A, C any] struct {
	mu        sync.Mutex
	tasks     map[string]*Record[M, A, C]
	order     []string // task ids, oldest first
	maxTasks  int
	now       func() time.Time
	precision time.Duration
}

func newStore[M, A, C any](now func() time.Time, precision time.Duration) *store[M, A, C] {
	return &store[M, A, C]{tasks: make(map[string]*Record[M, A, C]), maxTasks: maxTasks, now: now, precision: precision}
}

// stamp is the time of a status change at the precision the wire writes.
func (s *store[M, A, C]) stamp() time.Time { return s.now().UTC().Truncate(s.precision) }

// create stores a new submitted task id of contextID whose history is
// first.
func (s *store[M, A, C]) create(id, contextID string, first M) (*Record[M, A, C], Task[M, A]) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.evictLocked()
	rec := &Record[M, A, C]{
		task: Task[M, A]{
			ID:        id,
			ContextID: contextID,
			Status:    Status[M]{State: StateSubmitted, Time: s.stamp()},
			History:   []M{first},
		},
		changed: make(chan struct{}),
	}
	s.tasks[id] = rec
	s.order = append(s.order, id)
	return rec, snapshotLocked(rec)
}

// evictLocked forgets the oldest terminal task when the store is full.
func (s *store[M, A, C]) evictLocked() {
	if len(s.tasks) < s.maxTasks {
		return
	}
	for i, id := range s.order {
		if s.tasks[id].task.Status.State.Terminal() {
			delete(s.tasks, id)
			s.order = slices.Delete(s.order, i, i+1)
			return
		}
	}
}

// resume appends the follow-up message that msg builds, given the task's
// contextId, to task taskID and moves it from input-required to working.
// It returns the snapshot taken after that transition and the cursor of
// the first event the snapshot does not show.
func (s *store[M, A, C]) resume(d Dialect[M, A], states map[State]string, taskID, contextID string, msg func(contextID string) M) (*Record[M, A, C], Task[M, A], int, *Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.tasks[taskID]
	if !ok {
		return nil, Task[M, A]{}, 0, ErrTaskNotFound(taskID)
	}
	t := &rec.task
	if contextID != "" && contextID != t.ContextID {
		return nil, Task[M, A]{}, 0, NewError(CodeInvalidParams,
			"Invalid parameters: message.contextId does not match the task's contextId",
			map[string]string{"taskId": t.ID, "contextId": t.ContextID})
	}
	if state := t.Status.State; state != StateInputRequired {
		return nil, Task[M, A]{}, 0, notAccepting(d, states, t.ID, state)
	}
	t.History = append(t.History, msg(t.ContextID))
	s.setStatusLocked(rec, StateWorking, nil)
	return rec, snapshotLocked(rec), len(rec.updates), nil
}

// notAccepting is d's error for a message to taskID, in state (named as
// states names it), which waits for none.
func notAccepting[M, A any](d Dialect[M, A], states map[State]string, taskID string, state State) *Error {
	why := "is still running"
	if state.Terminal() {
		why = "is in terminal state " + states[state]
	}
	return d.NotAccepting("task "+taskID+" "+why+" and accepts no message",
		map[string]string{"taskId": taskID, "state": states[state]})
}

func (s *store[M, A, C]) lookup(id string) (*Record[M, A, C], bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.tasks[id]
	return rec, ok
}

// setStop records the cancel function of the script now advancing rec.
func (s *store[M, A, C]) setStop(rec *Record[M, A, C], stop context.CancelFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec.stop = stop
}

// setStatus moves rec to state and publishes the status update. It reports
// false, changing nothing, once the task is terminal: a script racing a
// cancel must not overwrite it.
func (s *store[M, A, C]) setStatus(rec *Record[M, A, C], state State, msg *M) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rec.task.Status.State.Terminal() {
		return false
	}
	s.setStatusLocked(rec, state, msg)
	return true
}

func (s *store[M, A, C]) setStatusLocked(rec *Record[M, A, C], state State, msg *M) {
	t := &rec.task
	t.Status = Status[M]{State: state, Message: msg, Time: s.stamp()}
	if msg != nil {
		t.History = append(t.History, *msg)
	}
	status := t.Status
	rec.publish(update[M, A]{
		event: Event[M, A]{TaskID: t.ID, ContextID: t.ContextID, Status: &status},
		last:  state.Settled(),
	})
}

// addArtifact attaches art to rec and publishes it, unless the task is
// terminal.
func (s *store[M, A, C]) addArtifact(rec *Record[M, A, C], art A) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := &rec.task
	if t.Status.State.Terminal() {
		return false
	}
	t.Artifacts = append(t.Artifacts, art)
	rec.publish(update[M, A]{event: Event[M, A]{TaskID: t.ID, ContextID: t.ContextID, Artifact: &art}})
	return true
}

// cancel moves a task that is not terminal to canceled and stops its script.
func (s *store[M, A, C]) cancel(states map[State]string, id string) (Task[M, A], *Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.tasks[id]
	if !ok {
		return Task[M, A]{}, ErrTaskNotFound(id)
	}
	if state := rec.task.Status.State; state.Terminal() {
		return Task[M, A]{}, NewError(CodeTaskNotCancelable, "Task cannot be canceled",
			map[string]string{"taskId": id, "state": states[state]})
	}
	s.setStatusLocked(rec, StateCanceled, nil)
	if rec.stop != nil {
		rec.stop()
	}
	return snapshotLocked(rec), nil
}

func (s *store[M, A, C]) snapshot(rec *Record[M, A, C]) Task[M, A] {
	s.mu.Lock()
	defer s.mu.Unlock()
	return snapshotLocked(rec)
}

func snapshotLocked[M, A, C any](rec *Record[M, A, C]) Task[M, A] {
	t := rec.task
	t.History = slices.Clone(rec.task.History)
	t.Artifacts = slices.Clone(rec.task.Artifacts)
	return t
}

// watch returns a snapshot of task id and the cursor of the first event the
// snapshot does not show.
func (s *store[M, A, C]) watch(id string) (*Record[M, A, C], Task[M, A], int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.tasks[id]
	if !ok {
		return nil, Task[M, A]{}, 0, false
	}
	return rec, snapshotLocked(rec), len(rec.updates), true
}

// list snapshots every task keep accepts.
func (s *store[M, A, C]) list(keep func(*Task[M, A]) bool) []Task[M, A] {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Task[M, A]
	for _, rec := range s.tasks {
		if keep(&rec.task) {
			out = append(out, snapshotLocked(rec))
		}
	}
	return out
}

// awaitSettled blocks until rec is terminal or interrupted, ctx is done or
// done is closed.
func (s *store[M, A, C]) awaitSettled(ctx context.Context, done <-chan struct{}, rec *Record[M, A, C]) {
	for {
		s.mu.Lock()
		state, changed := rec.task.Status.State, rec.changed
		s.mu.Unlock()
		if state.Settled() {
			return
		}
		if !awaitChange(ctx, done, changed) {
			return
		}
	}
}

// follow passes rec's events from cursor on to emit, in order, until the one
// that ends the stream cycle, an emit error, ctx or done.
func (s *store[M, A, C]) follow(ctx context.Context, done <-chan struct{}, rec *Record[M, A, C], cursor int, emit func(Event[M, A]) error) {
	for {
		s.mu.Lock()
		pending, changed := slices.Clone(rec.updates[cursor:]), rec.changed
		s.mu.Unlock()
		for _, u := range pending {
			if emit(u.event) != nil || u.last {
				return
			}
		}
		cursor += len(pending)
		if !awaitChange(ctx, done, changed) {
			return
		}
	}
}

func (r *Record[M, A, C]) publish(u update[M, A]) {
	r.updates = append(r.updates, u)
	close(r.changed)
	r.changed = make(chan struct{})
}

// awaitChange blocks until changed is closed and reports true, or until ctx
// or done ends the wait and reports false.
func awaitChange(ctx context.Context, done, changed <-chan struct{}) bool {
	select {
	case <-changed:
		return true
	case <-ctx.Done():
		return false
	case <-done:
		return false
	}
}
