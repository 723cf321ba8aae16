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

// TestMemoryConformanceGrowingLookups runs the suite with lookups that
// start with one head and double, rechaining, as tasks and contexts arrive.
func TestMemoryConformanceGrowingLookups(t *testing.T) {
	t.Parallel()
	runConformance(t, openMemory(MemoryConfig{presizedHeads: 1}))
}

func TestMemoryLookupsGrowWithTheIndex(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	m := NewMemory(MemoryConfig{MaxTasks: 300, presizedHeads: 2, now: clock.Now})
	t.Cleanup(func() { m.Close() })
	ctx := context.Background()
	for i := range 1000 {
		clock.Advance(time.Millisecond)
		mustPut(t, m, Task{ID: fmt.Sprintf("t%d", i), ContextID: fmt.Sprintf("c%d", i%400),
			Owner: fmt.Sprintf("o%d", i%400%3), Agent: "x", State: working})
	}
	m.mu.Lock()
	c, heads, ctxHeads := m.census(), len(m.slab.tasks.heads), len(m.slab.contextIDs.heads)
	m.mu.Unlock()
	if c.tasks != 300 || c.chained != 300 || c.indexed != 300 || c.contextRefs != 300 || c.listed != 300 || c.unused != 0 {
		t.Errorf("%+v; want 300 tasks in every index", c)
	}
	if heads != 512 || ctxHeads != 512 {
		t.Errorf("lookup heads: %d for tasks, %d for contexts; want 512 each (grown from 2 past 300)", heads, ctxHeads)
	}
	// Every task kept is found by its id, and every context by its id.
	for i := 700; i < 1000; i++ {
		task, err := m.Get(ctx, "x", fmt.Sprintf("t%d", i))
		if err != nil || task.ContextID != fmt.Sprintf("c%d", i%400) {
			t.Fatalf("Get(t%d) = %+v, %v", i, task, err)
		}
		owner, err := m.ContextOwner(ctx, "x", fmt.Sprintf("c%d", i%400))
		if err != nil || owner != fmt.Sprintf("o%d", i%400%3) {
			t.Fatalf("ContextOwner(c%d) = %q, %v", i%400, owner, err)
		}
	}
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
	if c := m.census(); c.tasks != 50 || c.chained != 50 || c.indexed != 50 || c.contextRefs != 50 || c.listed != 50 {
		t.Errorf("%+v; want 50 tasks in every index", c)
	}
}

// census counts what a Memory's indexes hold; each must agree with the
// others. The caller holds m.mu.
type census struct {
	tasks, chained, indexed, contextRefs, listed, buckets, contexts, freeSlots int
	// unused counts buckets kept with no task and no context: a leak.
	unused int
}

func (m *Memory) census() census {
	c := census{tasks: m.count, contexts: m.liveCtx}
	for _, head := range m.slab.tasks.heads {
		for i := head - 1; i != noSlot; i = m.slots.at(i).hashNext {
			c.chained++
		}
	}
	for _, b := range m.buckets {
		if b != nil {
			c.indexed += b.n
			c.buckets++
			if b.n == 0 && b.contexts == 0 {
				c.unused++
			}
		}
	}
	for i := range int32(m.contexts.len()) {
		c.contextRefs += int(m.contexts.at(i).tasks)
	}
	for i := m.lruHead; i != noSlot; i = m.slots.at(i).next {
		c.listed++
	}
	for i := m.freeSlot; i != noSlot; i = m.slots.at(i).next {
		c.freeSlots++
	}
	return c
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
		if c := m.census(); c != (census{freeSlots: 1}) {
			t.Errorf("after the sweep: %+v", c)
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
	for i := range int32(m.slots.len()) {
		sl := m.slots.at(i)
		if sl.bucket != noSlot && !fromMicros(sl.updated).Before(after) {
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

// TestMemorySlabStaysConsistent churns a small index (evictions, expiry,
// late context ids, out-of-order updates, owner conflicts) and checks after
// every step that its lookups, buckets, contexts and LRU list agree, and
// that Get and List see the same tasks.
func TestMemorySlabStaysConsistent(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	m := NewMemory(MemoryConfig{MaxTasks: 64, TTL: time.Hour, now: clock.Now})
	t.Cleanup(func() { m.Close() })
	ctx := context.Background()
	r := rand.New(rand.NewPCG(3, 5))
	for step := range 4000 {
		clock.Advance(time.Duration(r.IntN(2000)) * time.Millisecond)
		task := Task{ID: fmt.Sprintf("t%d", r.IntN(150)), Owner: fmt.Sprintf("o%d", r.IntN(4)), Agent: fmt.Sprintf("a%d", r.IntN(2)),
			State: []string{working, completed}[r.IntN(2)], Updated: clock.Now().Add(-time.Duration(r.IntN(5000)) * time.Millisecond)}
		if r.IntN(3) > 0 {
			task.ContextID = fmt.Sprintf("c%d", r.IntN(20))
		}
		if err := m.Put(ctx, task); err != nil && !errors.Is(err, ErrOwnerConflict) {
			t.Fatal(err)
		}
		if step%7 == 0 {
			clock.Advance(time.Duration(r.IntN(20)) * time.Minute)
		}
		n, _ := m.Len(ctx)
		m.mu.Lock()
		c := m.census()
		m.mu.Unlock()
		if c.tasks != n || c.chained != n || c.indexed != n || c.contextRefs != n-m.tasksWithoutContext() || c.listed != n || c.unused != 0 {
			t.Fatalf("step %d: %+v, Len %d", step, c, n)
		}
		listed := 0
		for o := range 4 {
			for a := range 2 {
				p, err := m.List(ctx, Query{Agent: fmt.Sprintf("a%d", a), Owner: fmt.Sprintf("o%d", o), PageSize: MaxPageSize})
				if err != nil {
					t.Fatal(err)
				}
				listed += p.TotalSize
				for _, lt := range p.Tasks {
					if got, err := m.Get(ctx, lt.Agent, lt.ID); err != nil || got != lt {
						t.Fatalf("step %d: List has %+v, Get %+v, %v", step, lt, got, err)
					}
					if lt.ContextID != "" {
						if _, err := m.ContextOwner(ctx, lt.Agent, lt.ContextID); err != nil {
							t.Fatalf("step %d: context of %+v: %v", step, lt, err)
						}
					}
				}
			}
		}
		if listed != n {
			t.Fatalf("step %d: List counts %d tasks, Len %d", step, listed, n)
		}
	}
}

// tasksWithoutContext counts the live tasks that have no context id.
func (m *Memory) tasksWithoutContext() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for i := range int32(m.slots.len()) {
		sl := m.slots.at(i)
		if sl.bucket != noSlot && sl.ctx == noSlot {
			n++
		}
	}
	return n
}

// TestMemoryRefusesEndlessNames: backend names and states are numbered in a
// small table; a caller that made up more than it holds gets an error and
// the index stays whole.
func TestMemoryRefusesEndlessNames(t *testing.T) {
	t.Parallel()
	m := NewMemory(MemoryConfig{MaxTasks: 10})
	t.Cleanup(func() { m.Close() })
	ctx := context.Background()
	var err error
	for i := 0; err == nil && i < 1<<17; i++ {
		err = m.Put(ctx, Task{ID: "t", Owner: "o", Agent: "x", State: fmt.Sprint("S", i)})
	}
	if !errors.Is(err, errTooManyNames) {
		t.Fatalf("err = %v, want errTooManyNames", err)
	}
	if got, err := m.Get(ctx, "x", "t"); err != nil || got.State != "S65534" {
		t.Fatalf("after the refusal: %+v, %v", got, err)
	}
}
