package legacyagent

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

// record is one task and everything the agent keeps about it.
type record struct {
	task task
	// updates is every event published since the task was created, so that
	// each stream replays exactly what it has not seen yet.
	updates []update
	// changed is closed and replaced whenever updates grows.
	changed chan struct{}
	// stop cancels the script advancing the task; nil when none runs.
	stop context.CancelFunc
	push []pushConfig
	// notifying is set once the task's webhook sender runs (webhook.go).
	notifying bool
}

// update is one stream event of a task.
type update struct {
	event any
	// last marks the event after which a stream cycle ends.
	last bool
}

// store holds the tasks. Every record field is guarded by mu.
type store struct {
	mu       sync.Mutex
	tasks    map[string]*record
	order    []string // task ids, oldest first
	maxTasks int
	now      func() time.Time
}

func newStore(now func() time.Time) *store {
	return &store{tasks: make(map[string]*record), maxTasks: maxTasks, now: now}
}

// create stores a new submitted task whose history is msg. It returns the
// record and a snapshot; a stream following it starts at cursor 0.
func (s *store) create(msg message) (*record, task) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.evictLocked()

	msg.TaskID = newID()
	if msg.ContextID == "" {
		msg.ContextID = newID()
	}
	rec := &record{
		task: task{
			Kind:      kindTask,
			ID:        msg.TaskID,
			ContextID: msg.ContextID,
			Status:    taskStatus{State: stateSubmitted, Timestamp: formatTimestamp(s.now())},
			History:   []message{msg},
		},
		changed: make(chan struct{}),
	}
	s.tasks[rec.task.ID] = rec
	s.order = append(s.order, rec.task.ID)
	return rec, s.snapshotLocked(rec, 0)
}

// evictLocked forgets the oldest terminal task when the store is full.
func (s *store) evictLocked() {
	if len(s.tasks) < s.maxTasks {
		return
	}
	for i, id := range s.order {
		if isTerminal(s.tasks[id].task.Status.State) {
			delete(s.tasks, id)
			s.order = slices.Delete(s.order, i, i+1)
			return
		}
	}
}

// resume appends a follow-up msg to the task it names and moves the task
// from input-required to working. It returns the snapshot taken after that
// transition and the cursor of the first event the snapshot does not show.
func (s *store) resume(msg message) (*record, task, int, *rpcError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.tasks[msg.TaskID]
	if !ok {
		return nil, task{}, 0, errTaskNotFound(msg.TaskID)
	}
	t := &rec.task
	if msg.ContextID != "" && msg.ContextID != t.ContextID {
		return nil, task{}, 0, &rpcError{
			Code:    codeInvalidParams,
			Message: "Invalid parameters: message.contextId does not match the task's contextId",
			Data:    map[string]string{"taskId": t.ID, "contextId": t.ContextID},
		}
	}
	if state := t.Status.State; state != stateInputRequired {
		why := "is still running"
		if isTerminal(state) {
			why = "is in terminal state " + state
		}
		return nil, task{}, 0, &rpcError{
			Code:    codeInvalidParams,
			Message: "Invalid parameters: task " + t.ID + " " + why + " and accepts no message",
			Data:    map[string]string{"taskId": t.ID, "state": state},
		}
	}
	msg.ContextID = t.ContextID
	t.History = append(t.History, msg)
	s.setStatusLocked(rec, stateWorking, nil)
	return rec, s.snapshotLocked(rec, 0), len(rec.updates), nil
}

func (s *store) lookup(id string) (*record, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.tasks[id]
	return rec, ok
}

// setStop records the cancel function of the script now advancing rec.
func (s *store) setStop(rec *record, stop context.CancelFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec.stop = stop
}

// setStatus moves rec to state and publishes the status update. It reports
// false, changing nothing, once the task is terminal: a script racing a
// cancel must not overwrite it.
func (s *store) setStatus(rec *record, state string, msg *message) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if isTerminal(rec.task.Status.State) {
		return false
	}
	s.setStatusLocked(rec, state, msg)
	return true
}

func (s *store) setStatusLocked(rec *record, state string, msg *message) {
	t := &rec.task
	t.Status = taskStatus{State: state, Message: msg, Timestamp: formatTimestamp(s.now())}
	if msg != nil {
		t.History = append(t.History, *msg)
	}
	rec.publish(update{
		event: statusUpdateEvent{
			Kind:      kindStatusUpdate,
			TaskID:    t.ID,
			ContextID: t.ContextID,
			Status:    t.Status,
			Final:     settled(state),
		},
		last: settled(state),
	})
}

// addArtifact attaches art to rec and publishes it, unless the task is
// terminal.
func (s *store) addArtifact(rec *record, art artifact) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := &rec.task
	if isTerminal(t.Status.State) {
		return false
	}
	t.Artifacts = append(t.Artifacts, art)
	rec.publish(update{event: artifactUpdateEvent{
		Kind:      kindArtifactUpdate,
		TaskID:    t.ID,
		ContextID: t.ContextID,
		Artifact:  art,
		LastChunk: true,
	}})
	return true
}

// cancel moves a task that is not terminal to canceled and stops its script.
func (s *store) cancel(id string) (task, *rpcError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.tasks[id]
	if !ok {
		return task{}, errTaskNotFound(id)
	}
	if state := rec.task.Status.State; isTerminal(state) {
		return task{}, &rpcError{
			Code:    codeTaskNotCancelable,
			Message: "Task cannot be canceled",
			Data:    map[string]string{"taskId": id, "state": state},
		}
	}
	s.setStatusLocked(rec, stateCanceled, nil)
	if rec.stop != nil {
		rec.stop()
	}
	return s.snapshotLocked(rec, 0), nil
}

// snapshot copies rec's task keeping the last historyLength messages, or
// all of them when historyLength is not positive (0.2.5 semantics).
func (s *store) snapshot(rec *record, historyLength int) task {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snapshotLocked(rec, historyLength)
}

func (s *store) snapshotLocked(rec *record, historyLength int) task {
	t := rec.task
	t.History = lastMessages(rec.task.History, historyLength)
	t.Artifacts = slices.Clone(rec.task.Artifacts)
	return t
}

func lastMessages(history []message, n int) []message {
	if n > 0 && n < len(history) {
		history = history[len(history)-n:]
	}
	return slices.Clone(history)
}

// watch returns a snapshot of task id and the cursor of the first event the
// snapshot does not show.
func (s *store) watch(id string) (*record, task, int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.tasks[id]
	if !ok {
		return nil, task{}, 0, false
	}
	return rec, s.snapshotLocked(rec, 0), len(rec.updates), true
}

// awaitSettled blocks until rec is terminal or interrupted, ctx is done or
// done is closed.
func (s *store) awaitSettled(ctx context.Context, done <-chan struct{}, rec *record) {
	for {
		s.mu.Lock()
		state, changed := rec.task.Status.State, rec.changed
		s.mu.Unlock()
		if settled(state) {
			return
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return
		case <-done:
			return
		}
	}
}

// follow passes rec's events from cursor on to emit, in order, until the one
// that ends the stream cycle, an emit error, ctx or done.
func (s *store) follow(ctx context.Context, done <-chan struct{}, rec *record, cursor int, emit func(any) error) {
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
		select {
		case <-changed:
		case <-ctx.Done():
			return
		case <-done:
			return
		}
	}
}

func (r *record) publish(u update) {
	r.updates = append(r.updates, u)
	close(r.changed)
	r.changed = make(chan struct{})
}
