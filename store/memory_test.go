package store

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"
)

func openMemory(cfg MemoryConfig) opener {
	return func(t *testing.T, clock *fakeClock) Store {
		cfg.now = clock.Now
		m := NewMemory(cfg)
		t.Cleanup(func() { m.Close() })
		return m
	}
}

func TestMemoryConformance(t *testing.T) {
	t.Parallel()
	runConformance(t, openMemory(MemoryConfig{}))
}

func TestMemoryEvictsLeastRecentlyUpdated(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	s := openMemory(MemoryConfig{MaxTasks: 3})(t, clock)
	ctx := context.Background()
	for _, id := range []string{"a", "b", "c"} {
		mustPut(t, s, Task{ID: id, ContextID: "ctx-" + id, Owner: "o", Agent: "x"})
		clock.Advance(time.Second)
	}
	// Renewing a makes b the least recently updated task.
	mustPut(t, s, Task{ID: "a", Owner: "o", Agent: "x"})
	// A conflicting Put on a full index creates nothing, so evicts nothing.
	if err := s.Put(ctx, Task{ID: "c", Owner: "p", Agent: "x"}); !errors.Is(err, ErrOwnerConflict) {
		t.Fatalf("conflicting Put = %v, want ErrOwnerConflict", err)
	}
	if n := mustLen(t, s); n != 3 {
		t.Fatalf("Len() = %d, want 3", n)
	}
	mustPut(t, s, Task{ID: "d", Owner: "o", Agent: "x"})
	wantNotFound(t, s, "x", "b")
	for _, id := range []string{"a", "c", "d"} {
		mustGet(t, s, "x", id)
	}
	if n := mustLen(t, s); n != 3 {
		t.Errorf("Len() after eviction = %d, want 3", n)
	}
	if p := mustList(t, s, Query{Agent: "x", Owner: "o", PageSize: 10}); p.TotalSize != 3 {
		t.Errorf("List().TotalSize after eviction = %d, want 3", p.TotalSize)
	}
	if owner, err := s.ContextOwner(ctx, "x", "ctx-b"); !errors.Is(err, ErrNotFound) {
		t.Errorf("ContextOwner(ctx-b) after eviction = %q, %v; want ErrNotFound", owner, err)
	}
	if owner, err := s.ContextOwner(ctx, "x", "ctx-a"); err != nil || owner != "o" {
		t.Errorf("ContextOwner(ctx-a) = %q, %v; want o", owner, err)
	}
}

func TestMemoryEvictionKeepsIndexesConsistent(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	m := NewMemory(MemoryConfig{MaxTasks: 50, now: clock.Now})
	t.Cleanup(func() { m.Close() })
	for i := range 500 {
		clock.Advance(time.Millisecond)
		mustPut(t, m, Task{ID: fmt.Sprintf("t%d", i%120), ContextID: fmt.Sprintf("c%d", i%7),
			Owner: fmt.Sprintf("o%d", i%3), Agent: "x", State: []string{working, completed}[i%2]})
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	indexed, contextRefs, listed := 0, 0, 0
	for _, b := range m.buckets {
		indexed += b.len()
	}
	for _, c := range m.contexts {
		contextRefs += c.tasks
	}
	for e := m.lru.front(); e != nil; e = e.next {
		listed++
	}
	if len(m.tasks) != 50 || indexed != 50 || contextRefs != 50 || listed != 50 {
		t.Errorf("tasks %d, indexed %d, context refs %d, LRU %d; want 50 each", len(m.tasks), indexed, contextRefs, listed)
	}
}

// TestMemorySweepReclaimsIdleStore checks that the background sweep frees
// expired tasks of a store nobody calls.
func TestMemorySweepReclaimsIdleStore(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		m := NewMemory(MemoryConfig{TTL: 2 * time.Minute})
		defer m.Close()
		mustPut(t, m, Task{ID: "t1", ContextID: "c1", Owner: "o", Agent: "x"})
		time.Sleep(2*time.Minute + time.Second)
		synctest.Wait()
		m.mu.Lock()
		defer m.mu.Unlock()
		if len(m.tasks) != 0 || len(m.buckets) != 0 || len(m.contexts) != 0 || m.lru.front() != nil {
			t.Errorf("after the sweep: %d tasks, %d buckets, %d contexts", len(m.tasks), len(m.buckets), len(m.contexts))
		}
	})
}

func TestMemoryCloseStopsSweep(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		m := NewMemory(MemoryConfig{})
		m.Close()
		// synctest.Test fails if the sweep goroutine outlives the bubble.
	})
}

func TestNewMemoryPanicsOnInvalidConfig(t *testing.T) {
	t.Parallel()
	defer func() {
		if recover() == nil {
			t.Error("NewMemory(MaxTasks: -1) did not panic")
		}
	}()
	NewMemory(MemoryConfig{MaxTasks: -1})
}

// TestMemoryLargeBucket drives one owner's bucket through many block splits
// and removals, then walks List to the end: every task once, newest first.
func TestMemoryLargeBucket(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	m := NewMemory(MemoryConfig{MaxTasks: 4000, now: clock.Now})
	t.Cleanup(func() { m.Close() })
	ctx := context.Background()
	r := rand.New(rand.NewPCG(7, 11))
	for i := range 12000 {
		clock.Advance(time.Microsecond * time.Duration(1+r.IntN(3)))
		// New tasks, and updates of random older ones (moved to the front).
		id := fmt.Sprintf("t%05d", i)
		if i > 100 && r.IntN(3) == 0 {
			id = fmt.Sprintf("t%05d", i-1-r.IntN(100))
		}
		mustPut(t, m, Task{ID: id, Owner: "o", Agent: "x", State: working, Updated: clock.Now()})
	}
	n, _ := m.Len(ctx)
	if n != 4000 {
		t.Fatalf("Len %d, want the bound 4000", n)
	}
	seen := map[string]bool{}
	var prev time.Time
	q := Query{Agent: "x", Owner: "o", PageSize: 97}
	for {
		page, err := m.List(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if page.TotalSize != 4000 {
			t.Fatalf("TotalSize %d", page.TotalSize)
		}
		for _, task := range page.Tasks {
			if seen[task.ID] {
				t.Fatalf("%s listed twice", task.ID)
			}
			seen[task.ID] = true
			if !prev.IsZero() && task.Updated.After(prev) {
				t.Fatalf("not newest first at %s", task.ID)
			}
			prev = task.Updated
		}
		if page.NextPageToken == "" {
			break
		}
		q.PageToken = page.NextPageToken
	}
	if len(seen) != 4000 {
		t.Fatalf("walked %d tasks, want 4000", len(seen))
	}
	// A filter on the time keeps the count exact across blocks.
	after := prev.Add(2000 * time.Microsecond)
	page, err := m.List(ctx, Query{Agent: "x", Owner: "o", PageSize: 100, UpdatedAfter: after})
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	m.mu.Lock()
	for _, e := range m.tasks {
		if !e.task.Updated.Before(after) {
			want++
		}
	}
	m.mu.Unlock()
	if page.TotalSize != want {
		t.Fatalf("UpdatedAfter TotalSize %d, want %d", page.TotalSize, want)
	}
}

// BenchmarkMemoryPut measures a Put into a full bucket of the default size.
func BenchmarkMemoryPut(b *testing.B) {
	m := NewMemory(MemoryConfig{})
	defer m.Close()
	ctx := context.Background()
	i := 0
	for b.Loop() {
		i++
		if err := m.Put(ctx, Task{ID: fmt.Sprint("t", i), Owner: "o", Agent: "x", State: working}); err != nil {
			b.Fatal(err)
		}
	}
}
