package store

import (
	"context"
	"errors"
	"testing"
	"time"
)

func testExpiry(t *testing.T, open opener) {
	s, clock := open.onFakeClock(t)
	ctx := context.Background()
	mustPut(t, s, Task{ID: "t1", ContextID: "c1", Owner: "alice", Agent: "a", State: working})
	q := Query{Agent: "a", Owner: "alice", PageSize: 10}

	clock.Advance(DefaultTTL - time.Microsecond)
	mustGet(t, s, "a", "t1")
	if p := mustList(t, s, q); len(p.Tasks) != 1 || p.TotalSize != 1 {
		t.Errorf("List() just before expiry = %+v, want t1", p)
	}
	if n := mustLen(t, s); n != 1 {
		t.Errorf("Len() just before expiry = %d, want 1", n)
	}

	clock.Advance(time.Microsecond)
	wantNotFound(t, s, "a", "t1")
	if p := mustList(t, s, q); len(p.Tasks) != 0 || p.TotalSize != 0 || p.NextPageToken != "" {
		t.Errorf("List() after expiry = %+v, want empty", p)
	}
	q.State, q.ContextID = working, "c1"
	if p := mustList(t, s, q); len(p.Tasks) != 0 || p.TotalSize != 0 {
		t.Errorf("List(filtered) after expiry = %+v, want empty", p)
	}
	if n := mustLen(t, s); n != 0 {
		t.Errorf("Len() after expiry = %d, want 0", n)
	}
	if owner, err := s.ContextOwner(ctx, "a", "c1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("ContextOwner() after expiry = %q, %v; want ErrNotFound", owner, err)
	}
}

func testExpiryRenewedByPut(t *testing.T, open opener) {
	s, clock := open.onFakeClock(t)
	task := Task{ID: "t1", ContextID: "c1", Owner: "alice", Agent: "a", State: working, Updated: clock.Now()}
	mustPut(t, s, task)
	clock.Advance(DefaultTTL / 2)
	// Even an out-of-date status renews the task: the task is still in use.
	stale := task
	stale.State, stale.Updated = submitted, task.Updated.Add(-time.Minute)
	mustPut(t, s, stale)
	clock.Advance(DefaultTTL/2 + time.Second)
	if got := mustGet(t, s, "a", "t1"); got != task {
		t.Errorf("Get() after renewal = %+v, want %+v", got, task)
	}
	if owner, err := s.ContextOwner(context.Background(), "a", "c1"); err != nil || owner != "alice" {
		t.Errorf("ContextOwner() after renewal = %q, %v; want alice", owner, err)
	}
	clock.Advance(DefaultTTL / 2)
	wantNotFound(t, s, "a", "t1")
}

// testTakeoverAfterExpiry checks that an expired task frees its id: a new
// owner may take it, and the old owner's indexes forget it.
func testTakeoverAfterExpiry(t *testing.T, open opener) {
	s, clock := open.onFakeClock(t)
	mustPut(t, s, Task{ID: "t1", ContextID: "c1", Owner: "alice", Agent: "a", State: working})
	clock.Advance(DefaultTTL)
	mustPut(t, s, Task{ID: "t1", ContextID: "c2", Owner: "bob", Agent: "a", State: submitted})
	if got := mustGet(t, s, "a", "t1"); got.Owner != "bob" || got.ContextID != "c2" || got.State != submitted {
		t.Errorf("Get() after takeover = %+v, want bob's task", got)
	}
	for _, q := range []Query{
		{Agent: "a", Owner: "alice", PageSize: 10},
		{Agent: "a", Owner: "alice", State: working, PageSize: 10},
		{Agent: "a", Owner: "alice", ContextID: "c1", PageSize: 10},
	} {
		if p := mustList(t, s, q); len(p.Tasks) != 0 || p.TotalSize != 0 {
			t.Errorf("List(%+v) after takeover = %+v, want empty", q, p)
		}
	}
	p := mustList(t, s, Query{Agent: "a", Owner: "bob", PageSize: 10})
	wantIDs(t, "List(bob)", p.Tasks, []string{"t1"})
	if n := mustLen(t, s); n != 1 {
		t.Errorf("Len() after takeover = %d, want 1", n)
	}
}

// testRecreateAfterExpiry checks that an owner recreating its own expired
// task id starts afresh: nothing of the old task's state or context lingers.
func testRecreateAfterExpiry(t *testing.T, open opener) {
	s, clock := open.onFakeClock(t)
	mustPut(t, s, Task{ID: "t1", ContextID: "c1", Owner: "alice", Agent: "a", Backend: "b1", State: working})
	clock.Advance(DefaultTTL)
	recreated := Task{ID: "t1", ContextID: "c2", Owner: "alice", Agent: "a", Backend: "b2", State: submitted,
		Updated: clock.Now().Add(-time.Hour)}
	mustPut(t, s, recreated)
	if got := mustGet(t, s, "a", "t1"); got != recreated {
		t.Errorf("Get() after recreation = %+v, want %+v", got, recreated)
	}
	for _, tc := range []struct {
		q    Query
		want []string
	}{
		{Query{State: working}, nil},
		{Query{ContextID: "c1"}, nil},
		{Query{State: submitted}, []string{"t1"}},
		{Query{ContextID: "c2"}, []string{"t1"}},
		{Query{}, []string{"t1"}},
	} {
		tc.q.Agent, tc.q.Owner, tc.q.PageSize = "a", "alice", 10
		p := mustList(t, s, tc.q)
		wantIDs(t, "List after recreation", p.Tasks, tc.want)
		if p.TotalSize != len(tc.want) {
			t.Errorf("List(%+v).TotalSize = %d, want %d", tc.q, p.TotalSize, len(tc.want))
		}
	}
	if owner, err := s.ContextOwner(context.Background(), "a", "c1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("ContextOwner(c1) after recreation = %q, %v; want ErrNotFound", owner, err)
	}
}

func testLen(t *testing.T, open opener) {
	s, clock := open.onFakeClock(t)
	if n := mustLen(t, s); n != 0 {
		t.Fatalf("Len() of an empty store = %d", n)
	}
	mustPut(t, s, Task{ID: "t1", Owner: "alice", Agent: "a"})
	mustPut(t, s, Task{ID: "t1", Owner: "alice", Agent: "b"})
	clock.Advance(time.Hour)
	mustPut(t, s, Task{ID: "t2", Owner: "bob", Agent: "a"})
	mustPut(t, s, Task{ID: "t1", Owner: "alice", Agent: "a", State: working})
	_ = s.Put(context.Background(), Task{ID: "t2", Owner: "alice", Agent: "a"}) // conflict: no new task
	if n := mustLen(t, s); n != 3 {
		t.Errorf("Len() = %d, want 3", n)
	}
	clock.Advance(DefaultTTL - time.Hour)
	if n := mustLen(t, s); n != 2 {
		t.Errorf("Len() after the first Put expired = %d, want 2", n)
	}
}
