package store

import (
	"context"
	"errors"
	"testing"
	"time"
)

func testPutGet(t *testing.T, open opener) {
	s, clock := open.onFakeClock(t)
	// A local time with nanoseconds comes back in UTC, at microsecond precision.
	updated := time.Date(2026, 2, 28, 9, 30, 15, 123456789, time.FixedZone("CET", 3600))
	in := Task{ID: "task-1", ContextID: "ctx-1", Owner: "iss|alice", Agent: "travel", Backend: "b1",
		State: "TASK_STATE_WORKING", Updated: updated}
	mustPut(t, s, in)
	want := in
	want.Updated = time.Date(2026, 2, 28, 8, 30, 15, 123456000, time.UTC)
	if got := mustGet(t, s, "travel", "task-1"); got != want {
		t.Errorf("Get() = %+v, want %+v", got, want)
	}
	if got := mustGet(t, s, "travel", "task-1"); got.Updated.Location() != time.UTC {
		t.Errorf("Get().Updated location = %v, want UTC", got.Updated.Location())
	}
	wantNotFound(t, s, "travel", "task-2")
	wantNotFound(t, s, "other-agent", "task-1")

	// A zero Updated means now.
	mustPut(t, s, Task{ID: "task-2", Owner: "iss|alice", Agent: "travel", State: "TASK_STATE_SUBMITTED"})
	if got := mustGet(t, s, "travel", "task-2"); !got.Updated.Equal(clock.Now()) {
		t.Errorf("Get().Updated after zero Put = %v, want %v", got.Updated, clock.Now())
	}
}

func testPutValidates(t *testing.T, open opener) {
	s := open(t, newFakeClock())
	for _, task := range []Task{
		{Agent: "a", Owner: "o"},
		{ID: "t", Owner: "o"},
	} {
		err := s.Put(context.Background(), task)
		if err == nil || errors.Is(err, ErrOwnerConflict) || errors.Is(err, ErrUnavailable) {
			t.Errorf("Put(%+v) = %v, want a validation error", task, err)
		}
	}
	if n := mustLen(t, s); n != 0 {
		t.Errorf("Len() after rejected Puts = %d, want 0", n)
	}
}

func testOwnerConflict(t *testing.T, open opener) {
	s, clock := open.onFakeClock(t)
	orig := Task{ID: "t1", ContextID: "c1", Owner: "alice", Agent: "a", Backend: "b1",
		State: "TASK_STATE_WORKING", Updated: clock.Now().Add(-time.Minute)}
	mustPut(t, s, orig)
	stolen := Task{ID: "t1", ContextID: "c1", Owner: "mallory", Agent: "a", Backend: "b1",
		State: "TASK_STATE_CANCELED", Updated: clock.Now()}
	if err := s.Put(context.Background(), stolen); !errors.Is(err, ErrOwnerConflict) {
		t.Fatalf("Put by another owner = %v, want ErrOwnerConflict", err)
	}
	if got := mustGet(t, s, "a", "t1"); got != orig {
		t.Errorf("Get() after conflict = %+v, want unchanged %+v", got, orig)
	}
	if p := mustList(t, s, Query{Agent: "a", Owner: "mallory", PageSize: 10}); len(p.Tasks) != 0 || p.TotalSize != 0 {
		t.Errorf("List(mallory) after conflict = %+v, want empty", p)
	}
	// Auth off ("" owner) is an owner like any other.
	if err := s.Put(context.Background(), Task{ID: "t1", Agent: "a"}); !errors.Is(err, ErrOwnerConflict) {
		t.Errorf("Put by the empty owner = %v, want ErrOwnerConflict", err)
	}
	// Task ids are per agent: the same id in another agent is another task.
	mustPut(t, s, Task{ID: "t1", Owner: "mallory", Agent: "b"})
	if got := mustGet(t, s, "b", "t1"); got.Owner != "mallory" {
		t.Errorf("Get(b, t1).Owner = %q, want mallory", got.Owner)
	}
}

func testUpdateRules(t *testing.T, open opener) {
	s, clock := open.onFakeClock(t)
	t0 := clock.Now().Add(-time.Hour)
	base := Task{ID: "t1", Owner: "alice", Agent: "a", Backend: "b1", State: "TASK_STATE_SUBMITTED", Updated: t0}
	mustPut(t, s, base)

	steps := []struct {
		name string
		put  Task
		want Task
	}{
		{
			name: "newer status wins and the context is filled in",
			put:  Task{ID: "t1", ContextID: "c1", Owner: "alice", Agent: "a", Backend: "b1", State: "TASK_STATE_WORKING", Updated: t0.Add(time.Minute)},
			want: Task{ID: "t1", ContextID: "c1", Owner: "alice", Agent: "a", Backend: "b1", State: "TASK_STATE_WORKING", Updated: t0.Add(time.Minute)},
		},
		{
			name: "older status is ignored",
			put:  Task{ID: "t1", ContextID: "c1", Owner: "alice", Agent: "a", Backend: "b1", State: "TASK_STATE_SUBMITTED", Updated: t0},
			want: Task{ID: "t1", ContextID: "c1", Owner: "alice", Agent: "a", Backend: "b1", State: "TASK_STATE_WORKING", Updated: t0.Add(time.Minute)},
		},
		{
			name: "equal timestamp takes the later Put",
			put:  Task{ID: "t1", ContextID: "c1", Owner: "alice", Agent: "a", Backend: "b1", State: "TASK_STATE_INPUT_REQUIRED", Updated: t0.Add(time.Minute)},
			want: Task{ID: "t1", ContextID: "c1", Owner: "alice", Agent: "a", Backend: "b1", State: "TASK_STATE_INPUT_REQUIRED", Updated: t0.Add(time.Minute)},
		},
		{
			name: "backend and context never change",
			put:  Task{ID: "t1", ContextID: "c2", Owner: "alice", Agent: "a", Backend: "b2", State: "TASK_STATE_COMPLETED", Updated: t0.Add(2 * time.Minute)},
			want: Task{ID: "t1", ContextID: "c1", Owner: "alice", Agent: "a", Backend: "b1", State: "TASK_STATE_COMPLETED", Updated: t0.Add(2 * time.Minute)},
		},
		{
			name: "an empty context keeps the known one",
			put:  Task{ID: "t1", Owner: "alice", Agent: "a", Backend: "b1", State: "TASK_STATE_COMPLETED", Updated: t0.Add(3 * time.Minute)},
			want: Task{ID: "t1", ContextID: "c1", Owner: "alice", Agent: "a", Backend: "b1", State: "TASK_STATE_COMPLETED", Updated: t0.Add(3 * time.Minute)},
		},
		{
			// A backend that says so would keep the task out of its
			// owner's evictable ones for good.
			name: "a final state is never left",
			put:  Task{ID: "t1", Owner: "alice", Agent: "a", Backend: "b1", State: "TASK_STATE_WORKING", Updated: t0.Add(4 * time.Minute)},
			want: Task{ID: "t1", ContextID: "c1", Owner: "alice", Agent: "a", Backend: "b1", State: "TASK_STATE_COMPLETED", Updated: t0.Add(4 * time.Minute)},
		},
		{
			name: "nor changed for another final state",
			put:  Task{ID: "t1", Owner: "alice", Agent: "a", Backend: "b1", State: "TASK_STATE_FAILED", Updated: t0.Add(5 * time.Minute)},
			want: Task{ID: "t1", ContextID: "c1", Owner: "alice", Agent: "a", Backend: "b1", State: "TASK_STATE_COMPLETED", Updated: t0.Add(5 * time.Minute)},
		},
	}
	for _, step := range steps {
		mustPut(t, s, step.put)
		if got := mustGet(t, s, "a", "t1"); got != step.want {
			t.Fatalf("%s: Get() = %+v, want %+v", step.name, got, step.want)
		}
	}
	// The indexes follow the stored task, not the ignored parts of the Puts.
	q := Query{Agent: "a", Owner: "alice", PageSize: 10}
	for _, tc := range []struct {
		ctx, state string
		want       []string
	}{
		{"c1", "", []string{"t1"}},
		{"c2", "", nil},
		{"", "TASK_STATE_COMPLETED", []string{"t1"}},
		{"", "TASK_STATE_WORKING", nil},
		{"", "TASK_STATE_SUBMITTED", nil},
		{"", "TASK_STATE_INPUT_REQUIRED", nil},
	} {
		q.ContextID, q.State = tc.ctx, tc.state
		p := mustList(t, s, q)
		wantIDs(t, "List(context "+tc.ctx+", state "+tc.state+")", p.Tasks, tc.want)
		if p.TotalSize != len(tc.want) {
			t.Errorf("List(context %q, state %q).TotalSize = %d, want %d", tc.ctx, tc.state, p.TotalSize, len(tc.want))
		}
	}
	if owner, err := s.ContextOwner(context.Background(), "a", "c2"); !errors.Is(err, ErrNotFound) {
		t.Errorf("ContextOwner(c2) = %q, %v; want ErrNotFound (the context change was ignored)", owner, err)
	}
}

// testKeysDoNotCollide guards the Redis key layout: separators inside names
// must not make two tasks share a key.
func testKeysDoNotCollide(t *testing.T, open opener) {
	s := open(t, newFakeClock())
	tasks := []Task{
		{ID: "b", Agent: "a:1", Owner: "o", ContextID: "x:y"},
		{ID: "1:b", Agent: "a", Owner: "o", ContextID: "x"},
		{ID: "b", Agent: "a", Owner: "o:1", ContextID: "y"},
		{ID: "c", Agent: "a", Owner: "o:1:all", ContextID: "y:all"},
		{ID: "all", Agent: "a", Owner: "o", State: "s:x", ContextID: "c:z"},
	}
	for i, task := range tasks {
		task.Backend = string(rune('p' + i))
		tasks[i] = task
		mustPut(t, s, task)
	}
	for _, want := range tasks {
		got := mustGet(t, s, want.Agent, want.ID)
		if got.Owner != want.Owner || got.Backend != want.Backend || got.ContextID != want.ContextID {
			t.Errorf("Get(%q, %q) = %+v, want %+v", want.Agent, want.ID, got, want)
		}
		p := mustList(t, s, Query{Agent: want.Agent, Owner: want.Owner, ContextID: want.ContextID, PageSize: 10})
		wantIDs(t, "List("+want.Agent+", "+want.Owner+", "+want.ContextID+")", p.Tasks, []string{want.ID})
	}
	if n := mustLen(t, s); n != len(tasks) {
		t.Errorf("Len() = %d, want %d", n, len(tasks))
	}
}

func testContextOwner(t *testing.T, open opener) {
	s, clock := open.onFakeClock(t)
	ctx := context.Background()
	mustPut(t, s, Task{ID: "t1", ContextID: "c1", Owner: "alice", Agent: "a"})
	clock.Advance(12 * time.Hour)
	mustPut(t, s, Task{ID: "t2", ContextID: "c1", Owner: "alice", Agent: "a"})
	mustPut(t, s, Task{ID: "t3", ContextID: "c3", Owner: "", Agent: "a"})
	for _, tc := range []struct {
		agent, contextID, want string
	}{
		{"a", "c1", "alice"},
		{"a", "c3", ""},
	} {
		if got, err := s.ContextOwner(ctx, tc.agent, tc.contextID); err != nil || got != tc.want {
			t.Errorf("ContextOwner(%q, %q) = %q, %v; want %q", tc.agent, tc.contextID, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ agent, contextID string }{
		{"b", "c1"},
		{"a", "unknown"},
		{"a", ""},
	} {
		if got, err := s.ContextOwner(ctx, tc.agent, tc.contextID); !errors.Is(err, ErrNotFound) {
			t.Errorf("ContextOwner(%q, %q) = %q, %v; want ErrNotFound", tc.agent, tc.contextID, got, err)
		}
	}
	// The context outlives its first task while another of hers is alive.
	clock.Advance(12 * time.Hour)
	wantNotFound(t, s, "a", "t1")
	if got, err := s.ContextOwner(ctx, "a", "c1"); err != nil || got != "alice" {
		t.Errorf("ContextOwner(c1) after t1 expired = %q, %v; want alice", got, err)
	}
	clock.Advance(12 * time.Hour)
	if got, err := s.ContextOwner(ctx, "a", "c1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("ContextOwner(c1) after all its tasks expired = %q, %v; want ErrNotFound", got, err)
	}
}

// testContextConflict: a context has one owner. A task of another owner
// named in it, new or known, is refused and changes nothing, whether Put or
// PutSend writes it, and whatever the task's own context was; the owner
// keeps the context, and another agent's context of the same id is
// another context.
func testContextConflict(t *testing.T, open opener) {
	s, clock := open.onFakeClock(t)
	ctx := context.Background()
	aliceTask := Task{ID: "t1", ContextID: "c1", Owner: "alice", Agent: "a", State: "TASK_STATE_WORKING", Updated: clock.Now()}
	mustPut(t, s, aliceTask)
	bobsKnown := Task{ID: "t3", Owner: "bob", Agent: "a", State: "TASK_STATE_WORKING", Updated: clock.Now()}
	mustPut(t, s, bobsKnown)
	bobsOwnContext := Task{ID: "t4", ContextID: "c4", Owner: "bob", Agent: "a", State: "TASK_STATE_WORKING", Updated: clock.Now()}
	mustPut(t, s, bobsOwnContext)
	clock.Advance(time.Second)
	later := clock.Now()
	for _, tc := range []struct {
		name string
		put  Task
	}{
		{"a new task", Task{ID: "t2", ContextID: "c1", Owner: "bob", Agent: "a", State: "TASK_STATE_WORKING", Updated: later}},
		{"a known task without a context", Task{ID: "t3", ContextID: "c1", Owner: "bob", Agent: "a", State: "TASK_STATE_COMPLETED", Updated: later}},
		{"a known task of another context", Task{ID: "t4", ContextID: "c1", Owner: "bob", Agent: "a", State: "TASK_STATE_COMPLETED", Updated: later}},
		{"a task of authentication off", Task{ID: "t5", ContextID: "c1", Agent: "a", State: "TASK_STATE_WORKING", Updated: later}},
	} {
		if err := s.Put(ctx, tc.put); !errors.Is(err, ErrContextConflict) {
			t.Errorf("%s: Put in another owner's context = %v, want ErrContextConflict", tc.name, err)
		}
	}
	key := SendKey{Agent: "a", Owner: "bob", Key: "m1"}
	rec := SendRecord{Digest: "d", State: SendTask, TaskID: "t6", Expires: later.Add(time.Hour).UTC()}
	if err := s.PutSend(ctx, Task{ID: "t6", ContextID: "c1", Owner: "bob", Agent: "a", State: "TASK_STATE_WORKING"}, key, rec); !errors.Is(err, ErrContextConflict) {
		t.Errorf("PutSend in another owner's context = %v, want ErrContextConflict", err)
	}
	if got, err := s.LoadSend(ctx, key, later); !errors.Is(err, ErrNotFound) {
		t.Errorf("LoadSend after a refused PutSend = %+v, %v; want ErrNotFound (no record written)", got, err)
	}

	// Nothing changed: no task made, none altered, one owner for c1.
	wantNotFound(t, s, "a", "t2")
	wantNotFound(t, s, "a", "t5")
	wantNotFound(t, s, "a", "t6")
	for _, want := range []Task{aliceTask, bobsKnown, bobsOwnContext} {
		if got := mustGet(t, s, "a", want.ID); !sameTask(got, want) {
			t.Errorf("Get(%s) after the refused Puts = %+v, want unchanged %+v", want.ID, got, want)
		}
	}
	if n := mustLen(t, s); n != 3 {
		t.Errorf("Len() after the refused Puts = %d, want 3", n)
	}
	if p := mustList(t, s, Query{Agent: "a", Owner: "bob", ContextID: "c1", PageSize: 10}); len(p.Tasks) != 0 || p.TotalSize != 0 {
		t.Errorf("List(bob, c1) = %+v, want empty", p)
	}
	if p := mustList(t, s, Query{Agent: "a", Owner: "", ContextID: "c1", PageSize: 10}); len(p.Tasks) != 0 || p.TotalSize != 0 {
		t.Errorf("List(no owner, c1) = %+v, want empty", p)
	}
	if got, err := s.ContextOwner(ctx, "a", "c1"); err != nil || got != "alice" {
		t.Errorf("ContextOwner(c1) = %q, %v; want alice", got, err)
	}
	if got, err := s.ContextOwner(ctx, "a", "c4"); err != nil || got != "bob" {
		t.Errorf("ContextOwner(c4) = %q, %v; want bob", got, err)
	}

	// The owner goes on in her context; the same id in another agent is free.
	mustPut(t, s, Task{ID: "t7", ContextID: "c1", Owner: "alice", Agent: "a", State: "TASK_STATE_WORKING"})
	mustPut(t, s, Task{ID: "t2", ContextID: "c1", Owner: "bob", Agent: "b", State: "TASK_STATE_WORKING"})
	if got, err := s.ContextOwner(ctx, "b", "c1"); err != nil || got != "bob" {
		t.Errorf("ContextOwner(b, c1) = %q, %v; want bob", got, err)
	}
	// Once all its tasks expired, the context is anyone's to take.
	clock.Advance(25 * time.Hour)
	mustPut(t, s, Task{ID: "t8", ContextID: "c1", Owner: "bob", Agent: "a", State: "TASK_STATE_WORKING"})
	if got, err := s.ContextOwner(ctx, "a", "c1"); err != nil || got != "bob" {
		t.Errorf("ContextOwner(c1) after alice's tasks expired = %q, %v; want bob", got, err)
	}
}
