package store

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// The share suite holds both stores to the per-owner bound: an owner's new
// task past its share evicts only the owner's own final tasks, else it is
// refused; nobody else's task is touched. Its opener gives every owner a
// share of testShare tasks per agent.
const testShare = 3

var shareCases = []conformanceCase{
	{"ShareRefusesOwner", testShareRefusesOwner},
	{"ShareEvictsOwnFinalFirst", testShareEvictsOwnFinalFirst},
	{"OthersCannotEvictLiveTask", testOthersCannotEvictLiveTask},
	{"ContextOwnerSurvivesWhileTaskLives", testContextOwnerSurvives},
	{"RetryShare", testRetryShare},
}

func runShareConformance(t *testing.T, open opener) { runCases(t, shareCases, open) }

func testShareRefusesOwner(t *testing.T, open opener) {
	s, clock := open.onFakeClock(t)
	ctx := context.Background()
	for i := range testShare {
		mustPut(t, s, Task{ID: fmt.Sprint("a", i), Owner: "alice", Agent: "x", State: working})
	}
	if err := s.Put(ctx, Task{ID: "a-over", Owner: "alice", Agent: "x", State: working}); !errors.Is(err, ErrOwnerQuota) {
		t.Fatalf("Put past the share = %v, want ErrOwnerQuota", err)
	}
	if _, err := s.Admit(ctx, Admission{Agent: "x", Owner: "alice"}); !errors.Is(err, ErrOwnerQuota) {
		t.Fatalf("Admit past the share = %v, want ErrOwnerQuota", err)
	}
	// A refused task names no context: the context stays unowned.
	if err := s.Put(ctx, Task{ID: "a-over", ContextID: "c-over", Owner: "alice", Agent: "x", State: working}); !errors.Is(err, ErrOwnerQuota) {
		t.Fatalf("Put past the share, in a new context = %v, want ErrOwnerQuota", err)
	}
	if got, err := s.ContextOwner(ctx, "x", "c-over"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("ContextOwner of a refused task's context = %q, %v; want ErrNotFound", got, err)
	}
	wantNotFound(t, s, "x", "a-over")
	// Her known tasks still update; other agents and owners have their own.
	mustPut(t, s, Task{ID: "a0", Owner: "alice", Agent: "x", State: working})
	mustPut(t, s, Task{ID: "a-other-agent", Owner: "alice", Agent: "y", State: working})
	mustPut(t, s, Task{ID: "b0", Owner: "bob", Agent: "x", State: working})
	if _, err := s.Admit(ctx, Admission{Agent: "x", Owner: "bob"}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Admit for bob = %v, want ErrNotFound (admitted, no context)", err)
	}
	// Without authentication there is one principal, bounded by the index.
	for i := range testShare + 1 {
		mustPut(t, s, Task{ID: fmt.Sprint("anon", i), Owner: "", Agent: "x", State: working})
	}
	// The share frees up as her tasks expire.
	clock.Advance(DefaultTTL)
	mustPut(t, s, Task{ID: "a-later", Owner: "alice", Agent: "x", State: working})
}

func testShareEvictsOwnFinalFirst(t *testing.T, open opener) {
	s, clock := open.onFakeClock(t)
	ctx := context.Background()
	mustPut(t, s, Task{ID: "done1", ContextID: "c1", Owner: "alice", Agent: "x", State: completed})
	clock.Advance(time.Second)
	mustPut(t, s, Task{ID: "live", Owner: "alice", Agent: "x", State: working})
	clock.Advance(time.Second)
	mustPut(t, s, Task{ID: "done2", Owner: "alice", Agent: "x", State: "TASK_STATE_FAILED"})
	clock.Advance(time.Second)
	mustPut(t, s, Task{ID: "new1", Owner: "alice", Agent: "x", State: working})
	wantNotFound(t, s, "x", "done1")
	mustGet(t, s, "x", "done2")
	if owner, err := s.ContextOwner(ctx, "x", "c1"); err == nil && owner != "alice" {
		t.Fatalf("ContextOwner(c1) = %q after its task was evicted", owner)
	}
	clock.Advance(time.Second)
	mustPut(t, s, Task{ID: "new2", Owner: "alice", Agent: "x", State: working})
	wantNotFound(t, s, "x", "done2")
	if err := s.Put(ctx, Task{ID: "new3", Owner: "alice", Agent: "x", State: working}); !errors.Is(err, ErrOwnerQuota) {
		t.Fatalf("Put with no final task left = %v, want ErrOwnerQuota", err)
	}
	for _, id := range []string{"live", "new1", "new2"} {
		mustGet(t, s, "x", id)
	}
	// A task that finishes makes room again.
	mustPut(t, s, Task{ID: "live", Owner: "alice", Agent: "x", State: "TASK_STATE_CANCELED"})
	clock.Advance(time.Second)
	mustPut(t, s, Task{ID: "new3", Owner: "alice", Agent: "x", State: working})
	wantNotFound(t, s, "x", "live")
	p := mustList(t, s, Query{Agent: "x", Owner: "alice", PageSize: 10})
	wantIDs(t, "List after evictions", p.Tasks, []string{"new3", "new2", "new1"})
	if p.TotalSize != 3 {
		t.Errorf("TotalSize = %d, want 3", p.TotalSize)
	}
	if n := mustLen(t, s); n != 3 {
		t.Errorf("Len() = %d, want 3", n)
	}
}

func testOthersCannotEvictLiveTask(t *testing.T, open opener) {
	s, clock := open.onFakeClock(t)
	ctx := context.Background()
	mustPut(t, s, Task{ID: "alice-run", ContextID: "alice-ctx", Owner: "alice", Agent: "x", State: working})
	refused := 0
	for i := range 4 * testShare {
		clock.Advance(time.Millisecond)
		err := s.Put(ctx, Task{ID: fmt.Sprint("bob", i), ContextID: fmt.Sprint("bob-ctx", i), Owner: "bob", Agent: "x", State: working})
		switch {
		case errors.Is(err, ErrOwnerQuota):
			refused++
		case err != nil:
			t.Fatal(err)
		}
	}
	if refused != 3*testShare {
		t.Errorf("bob was refused %d times, want %d", refused, 3*testShare)
	}
	if got := mustGet(t, s, "x", "alice-run"); got.Owner != "alice" || got.State != working {
		t.Fatalf("alice's task after bob's sends: %+v", got)
	}
	owner, err := s.Admit(ctx, Admission{Agent: "x", Owner: "bob", ContextID: "alice-ctx"})
	if !errors.Is(err, ErrOwnerQuota) {
		t.Fatalf("Admit(bob) = %q, %v; want ErrOwnerQuota", owner, err)
	}
	if owner, err := s.ContextOwner(ctx, "x", "alice-ctx"); err != nil || owner != "alice" {
		t.Fatalf("ContextOwner(alice-ctx) = %q, %v; want alice", owner, err)
	}
	owner, err = s.Admit(ctx, Admission{Agent: "x", Owner: "alice", ContextID: "alice-ctx"})
	if err != nil || owner != "alice" {
		t.Fatalf("Admit(alice, her context) = %q, %v; want alice", owner, err)
	}
}

func testContextOwnerSurvives(t *testing.T, open opener) {
	s, clock := open.onFakeClock(t)
	ctx := context.Background()
	mustPut(t, s, Task{ID: "t1", ContextID: "c", Owner: "alice", Agent: "x", State: completed})
	clock.Advance(time.Second)
	mustPut(t, s, Task{ID: "t2", ContextID: "c", Owner: "alice", Agent: "x", State: working})
	clock.Advance(time.Second)
	mustPut(t, s, Task{ID: "t3", Owner: "alice", Agent: "x", State: working})
	clock.Advance(time.Second)
	mustPut(t, s, Task{ID: "t4", Owner: "alice", Agent: "x", State: working})
	wantNotFound(t, s, "x", "t1")
	if owner, err := s.ContextOwner(ctx, "x", "c"); err != nil || owner != "alice" {
		t.Fatalf("ContextOwner(c) while t2 lives = %q, %v; want alice", owner, err)
	}
	if owner, err := s.Admit(ctx, Admission{Agent: "x", Owner: "bob", ContextID: "c"}); err != nil || owner != "alice" {
		t.Fatalf("Admit(bob, c) = %q, %v; want alice's context", owner, err)
	}
}

// testKnown: Known sees an id under any agent, and only while it lives.
func testKnown(t *testing.T, open opener) {
	s, clock := open.onFakeClock(t)
	ctx := context.Background()
	mustPut(t, s, Task{ID: "t1", Owner: "alice", Agent: "a", State: working})
	clock.Advance(time.Hour)
	mustPut(t, s, Task{ID: "t2", Owner: "bob", Agent: "b", State: working})
	for id, want := range map[string]bool{"t1": true, "t2": true, "t3": false} {
		if got, err := s.Known(ctx, id); err != nil || got != want {
			t.Errorf("Known(%q) = %v, %v; want %v", id, got, err, want)
		}
	}
	clock.Advance(DefaultTTL - time.Hour)
	if got, err := s.Known(ctx, "t1"); err != nil || got {
		t.Errorf("Known(t1) after expiry = %v, %v; want false", got, err)
	}
	if got, err := s.Known(ctx, "t2"); err != nil || !got {
		t.Errorf("Known(t2) = %v, %v; want true", got, err)
	}
}

// testRetryShare: an owner's send records are bounded by the share as its
// tasks are, whichever call writes them: a new key past it drops the
// owner's record written least recently, and nobody else's.
func testRetryShare(t *testing.T, open opener) {
	clock := newFakeClock()
	s := open(t, clock)
	ctx := context.Background()
	key := func(owner, k string) SendKey { return SendKey{Agent: "x", Owner: owner, Key: k} }
	write := map[string]func(k SendKey) error{
		"ClaimSend": func(k SendKey) error {
			_, _, claimed, err := s.ClaimSend(ctx, Admission{Agent: k.Agent, Owner: k.Owner}, k, running(clock, "d"), clock.Now())
			if !claimed && err == nil {
				err = errors.New("not claimed")
			}
			return ignoreNotFound(err)
		},
		"GetClaimSend": func(k SendKey) error {
			_, _, claimed, err := s.GetClaimSend(ctx, k.Agent, "none", k, running(clock, "d"), clock.Now())
			if !claimed && err == nil {
				err = errors.New("not claimed")
			}
			return ignoreNotFound(err)
		},
		"SaveSend": func(k SendKey) error { return s.SaveSend(ctx, k, running(clock, "d")) },
		"PutSend": func(k SendKey) error {
			return s.PutSend(ctx, Task{ID: "t-" + k.Key, Owner: k.Owner, Agent: k.Agent, State: completed}, k, running(clock, "d"))
		},
	}
	mustWrite := func(how string, k SendKey) {
		t.Helper()
		// Each write after the last: the order of writes is the order kept.
		clock.Advance(time.Millisecond)
		if err := write[how](k); err != nil {
			t.Fatalf("%s(%+v) = %v", how, k, err)
		}
	}
	wantKept := func(when string, owner string, kept, gone []string) {
		t.Helper()
		for _, k := range kept {
			if _, err := s.LoadSend(ctx, key(owner, k), clock.Now()); err != nil {
				t.Errorf("%s: LoadSend(%s, %s) = %v, want kept", when, owner, k, err)
			}
		}
		for _, k := range gone {
			if _, err := s.LoadSend(ctx, key(owner, k), clock.Now()); !errors.Is(err, ErrNotFound) {
				t.Errorf("%s: LoadSend(%s, %s) = %v, want ErrNotFound (dropped for the share)", when, owner, k, err)
			}
		}
	}
	for i := range testShare {
		mustWrite("SaveSend", key("bob", fmt.Sprint("b", i)))
	}
	for i := range testShare + 2 { // without authentication: one principal, bounded by the index
		mustWrite("SaveSend", key("", fmt.Sprint("anon", i)))
	}
	mustWrite("ClaimSend", key("alice", "k0"))
	mustWrite("GetClaimSend", key("alice", "k1"))
	mustWrite("SaveSend", key("alice", "k2"))
	wantKept("at the share", "alice", []string{"k0", "k1", "k2"}, nil)
	mustWrite("PutSend", key("alice", "k3"))
	wantKept("past the share by PutSend", "alice", []string{"k1", "k2", "k3"}, []string{"k0"})
	mustWrite("ClaimSend", key("alice", "k4"))
	wantKept("past the share by ClaimSend", "alice", []string{"k2", "k3", "k4"}, []string{"k1"})
	// A record written again is written most recently.
	mustWrite("SaveSend", key("alice", "k2"))
	mustWrite("GetClaimSend", key("alice", "k5"))
	wantKept("past the share by GetClaimSend", "alice", []string{"k2", "k4", "k5"}, []string{"k3"})
	mustWrite("SaveSend", key("alice", "k6"))
	wantKept("past the share by SaveSend", "alice", []string{"k2", "k5", "k6"}, []string{"k4"})
	wantKept("others'", "bob", []string{"b0", "b1", "b2"}, nil)
	wantKept("others'", "", []string{"anon0", "anon1", "anon2", "anon3", "anon4"}, nil)
}

func ignoreNotFound(err error) error {
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	return err
}
