package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Task is one task as the index knows it.
type Task struct {
	// ID is the task id as the backend assigned it.
	ID string
	// ContextID is the A2A context the task belongs to ("" when unknown).
	ContextID string
	// Owner is the principal key of the caller that created the task, an
	// opaque string such as "issuer|subject"; "" when authentication is off.
	Owner string
	// Agent is the published agent name. Task ids are unique per agent.
	Agent string
	// Backend is the name of the backend serving the task (one agent may route
	// skills to several backends).
	Backend string
	// State is the last known state in 1.0 spelling, e.g. "TASK_STATE_WORKING".
	State string
	// Updated is the status timestamp, kept in UTC with microsecond precision.
	Updated time.Time
}

// Store is the task index. Implementations are safe for concurrent use.
type Store interface {
	// Put creates or updates a task. A new task past its owner's share
	// (MaxTasksPerOwner, per agent) evicts the owner's least recently put
	// final task, or fails with ErrOwnerQuota if it has none; a new task in
	// a full index evicts the least recently put final task of anyone, or
	// fails with ErrIndexFull. A task that is not final is never evicted. An existing task's Owner, Agent and
	// Backend never change: Put with a different owner for an existing id
	// returns ErrOwnerConflict and changes nothing. A Put naming a context
	// that holds another owner's live tasks returns ErrContextConflict and
	// changes nothing, so that a context has one owner. A different Backend is
	// ignored. The first non-empty ContextID is kept. An update whose Updated
	// is older than the stored one keeps the stored State and Updated (status
	// events can arrive out of order) but still renews the task's lifetime;
	// a stored final State is kept whatever the update says (a finished
	// task is not restarted, and one a backend claimed unfinished again
	// would never be evicted from its owner's share). A zero Updated means
	// now. Put renews the task's time to live.
	Put(ctx context.Context, t Task) error
	// Get returns the task id of agent, or ErrNotFound.
	Get(ctx context.Context, agent, id string) (Task, error)
	// Known reports whether any agent holds a live task with this id, so
	// that an id the gateway recorded is never served unchecked.
	Known(ctx context.Context, id string) (bool, error)
	// Admit reports, before a send is forwarded, whether the index can
	// record the task it may create: ErrOwnerQuota when a.Owner's share of
	// a.Agent is full of tasks that are not final, ErrIndexFull when the
	// whole index is, an error wrapping ErrUnavailable when the index
	// cannot be reached. On success it returns the owner of a.ContextID as
	// ContextOwner does, with ErrNotFound for a context nobody holds.
	Admit(ctx context.Context, a Admission) (contextOwner string, err error)
	// ContextOwner returns the owner of the first task seen in contextID of
	// agent, or ErrNotFound if no live task was ever seen there. A context is
	// remembered as long as any task in it is.
	ContextOwner(ctx context.Context, agent, contextID string) (string, error)
	// List returns one page of q.Owner's tasks in q.Agent, newest Updated
	// first, ties by ID in byte order.
	List(ctx context.Context, q Query) (Page, error)
	// Len returns the number of live tasks, for the task-index-size metric.
	Len(ctx context.Context) (int, error)
	// Ping reports whether the store can serve requests, for readiness.
	Ping(ctx context.Context) error
	// Close releases the store's resources. Calls after Close fail with an
	// error wrapping ErrUnavailable.
	Close() error
	// Retries keeps the sends that retries are matched against.
	Retries
}

// Admission names the task a send may create.
type Admission struct {
	Agent, Owner string
	// ContextID is the context the message continues; "" for a new one.
	ContextID string
}

// MaxPageSize is the largest page List returns.
const MaxPageSize = 100

// Query selects the tasks List returns. Agent and Owner are exact matches
// (Owner "" matches the tasks recorded with authentication off); the other
// filters apply when set.
type Query struct {
	Agent, Owner string
	// ContextID keeps only the tasks of this context when non-empty.
	ContextID string
	// State keeps only the tasks in this state (1.0 spelling) when non-empty.
	State string
	// OrUnfinished widens State to the tasks last seen in a state that is
	// not final: their backend may have moved them to State since, which
	// the caller, reading each, finds out. A task in a final state never
	// leaves it, so those in another final state stay out.
	OrUnfinished bool
	// UpdatedAfter keeps only the tasks with Updated >= UpdatedAfter when
	// non-zero.
	UpdatedAfter time.Time
	// PageSize is the page length, 1..MaxPageSize; the caller validates it.
	PageSize int
	// PageToken continues a walk: it is the NextPageToken of the previous page
	// of a query with the same filters ("" for the first page).
	PageToken string
}

// Page is one page of List.
type Page struct {
	Tasks []Task
	// NextPageToken continues the walk; "" on the last page.
	NextPageToken string
	// TotalSize counts all tasks matching the query's filters, across pages.
	TotalSize int
}

var (
	// ErrNotFound reports that no live task or context matches.
	ErrNotFound = errors.New("task not found")
	// ErrOwnerConflict reports a Put for an existing task by another owner.
	ErrOwnerConflict = errors.New("task owned by another principal")
	// ErrContextConflict reports a Put of a task in a context another
	// owner holds.
	ErrContextConflict = errors.New("context owned by another principal")
	// ErrOwnerQuota refuses a new task to an owner whose share of the index
	// holds only tasks that are not final.
	ErrOwnerQuota = errors.New("the owner's share of the task index is full of unfinished tasks")
	// ErrIndexFull refuses a new task to a full index that holds no final
	// task to evict.
	ErrIndexFull = errors.New("the task index is full of unfinished tasks")
	// ErrListTooBroad refuses a list whose state filter would check more
	// tasks than an owner's share (the tasks of authentication off, which
	// have none, in Redis): a filter by context, or an UpdatedAfter,
	// narrows it.
	ErrListTooBroad = errors.New("the list's state filter spans more tasks than the index checks in one call")
	// ErrBadPageToken reports a page token that cannot be decoded or was
	// issued for a query with other filters.
	ErrBadPageToken = errors.New("invalid page token")
	// ErrRelayBound refuses to bind a pending relay (one given in a send)
	// to a task when it is bound to another already: a delivery and the
	// send's answer each bind it, to the task they name, and only the first
	// may.
	ErrRelayBound = errors.New("the push relay is bound to another task")
	// ErrUnavailable wraps every failure of the backing service (Redis down,
	// timeouts, a closed store), so callers can fail closed with errors.Is.
	ErrUnavailable = errors.New("task store unavailable")
)

// LimitError is ErrOwnerQuota or ErrIndexFull with the bound that was
// reached, for an error message that names what to change or wait for.
type LimitError struct {
	Err error // ErrOwnerQuota, ErrIndexFull or ErrListTooBroad
	// Limit is the bound reached; Setting its config field, such as
	// "store.memory.max_tasks_per_owner".
	Limit   int
	Setting string
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%v (%s: %d)", e.Err, e.Setting, e.Limit)
}

func (e *LimitError) Unwrap() error { return e.Err }

// unavailable wraps cause so that errors.Is matches both ErrUnavailable and
// the cause (context.Canceled, for instance).
func unavailable(op string, cause error) error {
	return fmt.Errorf("%w: %s: %w", ErrUnavailable, op, cause)
}

// errClosed is the cause of ErrUnavailable after Close.
var errClosed = errors.New("store closed")

// normalizeTask validates t and returns it as stored: Updated in UTC with
// microsecond precision, now when zero.
func normalizeTask(t Task, now time.Time) (Task, error) {
	var problems []error
	if t.ID == "" {
		problems = append(problems, errors.New("task id is empty"))
	}
	if t.Agent == "" {
		problems = append(problems, errors.New("task agent is empty"))
	}
	if err := errors.Join(problems...); err != nil {
		return Task{}, fmt.Errorf("put task: %w", err)
	}
	if t.Updated.IsZero() {
		t.Updated = now
	}
	t.Updated = fromMicros(t.Updated.UnixMicro())
	return t, nil
}

// startList checks q and returns the cursor of its page token, nil for the
// first page.
func startList(q Query) (*cursor, error) {
	if err := validateQuery(q); err != nil {
		return nil, err
	}
	return decodePageToken(q)
}

func validateQuery(q Query) error {
	var problems []error
	if q.Agent == "" {
		problems = append(problems, errors.New("query agent is empty"))
	}
	if q.PageSize < 1 || q.PageSize > MaxPageSize {
		problems = append(problems, fmt.Errorf("page size %d out of range 1..%d", q.PageSize, MaxPageSize))
	}
	if err := errors.Join(problems...); err != nil {
		return fmt.Errorf("list tasks: %w", err)
	}
	return nil
}

// fromMicros is the inverse of time.Time.UnixMicro, in UTC.
func fromMicros(us int64) time.Time {
	return time.UnixMicro(us).UTC()
}

// afterMicros is the smallest microsecond timestamp u with fromMicros(u) >= t,
// so that a filter on stored (microsecond) timestamps matches exactly the
// tasks with Updated >= t.
func afterMicros(t time.Time) int64 {
	us := t.UnixMicro()
	if t.Nanosecond()%1000 != 0 {
		us++
	}
	return us
}
