package store

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// Records the gateway did not write, or wrote only in part, must fail
// closed: the caller gets ErrUnavailable (or ErrNotFound), never another
// owner's task, and the owner's other tasks are still served.

func openCorrupt(t *testing.T) (*Redis, *fakeClock) {
	t.Helper()
	open, clock := sharedIndex(t)
	return open(), clock
}

// A task hash whose exp no replica wrote (a string Lua cannot read as a
// number) must not stop the purge of its owner's index: every put and list
// of that owner ran the purge and failed while the entry was expired.
func TestRedisPurgeSkipsCorruptTask(t *testing.T) {
	s, clock := openCorrupt(t)
	ctx := context.Background()
	admin := adminClient(t)
	mustPut(t, s, Task{ID: "x", Agent: "a", Owner: "alice", State: "TASK_STATE_WORKING"})
	if err := admin.HSet(ctx, s.keys.task("a", "x"), "exp", "garbage").Err(); err != nil {
		t.Fatal(err)
	}
	clock.Advance(s.ttl + 1)
	if err := s.Put(ctx, Task{ID: "y", Agent: "a", Owner: "alice", State: "TASK_STATE_WORKING"}); err != nil {
		t.Fatalf("Put of another task of the owner = %v, want nil", err)
	}
	if _, err := s.List(ctx, Query{Agent: "a", Owner: "alice", PageSize: 10}); err != nil {
		t.Fatalf("List = %v, want nil", err)
	}
	// The corrupt task itself is taken by nobody.
	err := s.Put(ctx, Task{ID: "x", Agent: "a", Owner: "bob", State: "TASK_STATE_WORKING"})
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Put of the corrupt task by another owner = %v, want ErrUnavailable", err)
	}
}

// A value of another Redis type at a task key named by an owner's index
// must not stop that owner's puts and lists.
func TestRedisPurgeSkipsWrongType(t *testing.T) {
	s, clock := openCorrupt(t)
	ctx := context.Background()
	admin := adminClient(t)
	mustPut(t, s, Task{ID: "x", Agent: "a", Owner: "alice", State: "TASK_STATE_COMPLETED"})
	mustPut(t, s, Task{ID: "z", Agent: "a", Owner: "alice", State: "TASK_STATE_WORKING"})
	if err := admin.Del(ctx, s.keys.task("a", "x")).Err(); err != nil {
		t.Fatal(err)
	}
	if err := admin.Set(ctx, s.keys.task("a", "x"), "not a hash", 0).Err(); err != nil {
		t.Fatal(err)
	}
	// Listed while live: the list must still answer, without x.
	p, err := s.List(ctx, Query{Agent: "a", Owner: "alice", PageSize: 10})
	if err != nil || len(p.Tasks) != 1 || p.Tasks[0].ID != "z" {
		t.Fatalf("List = %+v, %v, want z alone", p, err)
	}
	p, err = s.List(ctx, Query{Agent: "a", Owner: "alice", State: "TASK_STATE_WORKING", PageSize: 10})
	if err != nil || len(p.Tasks) != 1 {
		t.Fatalf("List by state = %+v, %v, want z alone", p, err)
	}
	if _, err := s.Get(ctx, "a", "x"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Get of the wrong type = %v, want ErrUnavailable", err)
	}
	clock.Advance(s.ttl + 1)
	if err := s.Put(ctx, Task{ID: "y", Agent: "a", Owner: "alice", State: "TASK_STATE_WORKING"}); err != nil {
		t.Fatalf("Put after the entry expired = %v, want nil", err)
	}
	if err := s.Put(ctx, Task{ID: "x", Agent: "a", Owner: "bob"}); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Put over the wrong type = %v, want ErrUnavailable", err)
	}
}

// A task hash that lost its exp (or holds one Lua reads as no number)
// was treated as absent by Put: another owner took the id.
func TestRedisPutRefusesTaskWithoutExpiry(t *testing.T) {
	for _, mangle := range []string{"missing", "nan", "inf"} {
		t.Run(mangle, func(t *testing.T) {
			s, _ := openCorrupt(t)
			ctx := context.Background()
			admin := adminClient(t)
			mustPut(t, s, Task{ID: "x", Agent: "a", Owner: "alice", State: "TASK_STATE_WORKING"})
			key := s.keys.task("a", "x")
			var err error
			if mangle == "missing" {
				err = admin.HDel(ctx, key, "exp").Err()
			} else {
				err = admin.HSet(ctx, key, "exp", mangle).Err()
			}
			if err != nil {
				t.Fatal(err)
			}
			err = s.Put(ctx, Task{ID: "x", Agent: "a", Owner: "bob", State: "TASK_STATE_WORKING"})
			if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), key) {
				t.Fatalf("Put by another owner = %v, want ErrUnavailable naming %s", err, key)
			}
			if owner, _ := admin.HGet(ctx, key, "owner").Result(); owner != "alice" {
				t.Fatalf("owner = %q after the refused put, want alice", owner)
			}
			if _, err := s.Get(ctx, "a", "x"); !errors.Is(err, ErrUnavailable) {
				t.Fatalf("Get = %v, want ErrUnavailable", err)
			}
		})
	}
}

// A context's value no replica wrote was read by the scripts as no owner:
// Admit answered ErrNotFound (the context is free) and Put wrote the
// caller as its owner, though ContextOwner reports it unreadable.
func TestRedisCorruptContextFailsClosed(t *testing.T) {
	for _, v := range []string{"garbage", "|alice", "12x|alice"} {
		t.Run(v, func(t *testing.T) {
			s, _ := openCorrupt(t)
			ctx := context.Background()
			admin := adminClient(t)
			mustPut(t, s, Task{ID: "x", Agent: "a", Owner: "alice", ContextID: "c1", State: "TASK_STATE_WORKING"})
			key := s.keys.context("a", "c1")
			if err := admin.Set(ctx, key, v, 0).Err(); err != nil {
				t.Fatal(err)
			}
			if _, err := s.ContextOwner(ctx, "a", "c1"); !errors.Is(err, ErrUnavailable) {
				t.Fatalf("ContextOwner = %v, want ErrUnavailable", err)
			}
			if _, err := s.Admit(ctx, Admission{Agent: "a", Owner: "bob", ContextID: "c1"}); !errors.Is(err, ErrUnavailable) {
				t.Fatalf("Admit = %v, want ErrUnavailable", err)
			}
			_, _, _, err := s.ClaimSend(ctx, Admission{Agent: "a", Owner: "bob", ContextID: "c1"},
				SendKey{Agent: "a", Owner: "bob", Key: "k"}, SendRecord{State: SendRunning, Expires: s.now().Add(s.ttl)}, s.now())
			if !errors.Is(err, ErrUnavailable) {
				t.Fatalf("ClaimSend = %v, want ErrUnavailable", err)
			}
			err = s.Put(ctx, Task{ID: "y", Agent: "a", Owner: "bob", ContextID: "c1", State: "TASK_STATE_WORKING"})
			if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), key) {
				t.Fatalf("Put in the context = %v, want ErrUnavailable naming %s", err, key)
			}
			if got, _ := admin.Get(ctx, key).Result(); got != v {
				t.Fatalf("context value = %q after the refused put, want %q kept", got, v)
			}
			if _, err := s.Get(ctx, "a", "y"); !errors.Is(err, ErrNotFound) {
				t.Fatalf("Get(y) = %v, want ErrNotFound", err)
			}
			// The owner's other work goes on.
			mustPut(t, s, Task{ID: "z", Agent: "a", Owner: "alice", State: "TASK_STATE_WORKING"})
		})
	}
}
