package store

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// newMemory is a memory store closed when tb ends.
func newMemory(tb testing.TB, cfg MemoryConfig) *Memory {
	m := NewMemory(cfg)
	tb.Cleanup(func() { m.Close() })
	return m
}

func openMemory(cfg MemoryConfig) opener {
	return func(t *testing.T, clock *fakeClock) Store {
		cfg := cfg // each parallel case its own copy
		cfg.now = clock.Now
		m := newMemory(t, cfg)
		return m
	}
}

func TestMemoryConformance(t *testing.T) {
	t.Parallel()
	runConformance(t, openMemory(MemoryConfig{}))
}

func TestMemoryShareConformance(t *testing.T) {
	t.Parallel()
	runShareConformance(t, openMemory(MemoryConfig{MaxTasksPerOwner: testShare}))
}

// TestMemoryOthersCannotEvictLiveTasks: a full index of unfinished tasks
// refuses a newcomer rather than drop anyone's running task.
func TestMemoryOthersCannotEvictLiveTasks(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	s := openMemory(MemoryConfig{MaxTasks: 2 * testShare, MaxTasksPerOwner: testShare})(t, clock)
	ctx := context.Background()
	mustPut(t, s, Task{ID: "alice-run", ContextID: "alice-ctx", Owner: "alice", Agent: "x", State: working})
	for i := range testShare {
		mustPut(t, s, Task{ID: fmt.Sprint("bob", i), Owner: "bob", Agent: "x", State: working})
	}
	mustPut(t, s, Task{ID: "carol0", Owner: "carol", Agent: "x", State: completed})
	mustPut(t, s, Task{ID: "carol1", Owner: "carol", Agent: "x", State: working})
	// Full: dave's first task takes carol's finished one, the next is refused.
	mustPut(t, s, Task{ID: "dave0", Owner: "dave", Agent: "x", State: working})
	wantNotFound(t, s, "x", "carol0")
	if err := s.Put(ctx, Task{ID: "dave1", Owner: "dave", Agent: "x", State: working}); !errors.Is(err, ErrIndexFull) {
		t.Fatalf("Put into a full index of unfinished tasks = %v, want ErrIndexFull", err)
	}
	if got := mustGet(t, s, "x", "alice-run"); got.Owner != "alice" {
		t.Fatalf("alice's task: %+v", got)
	}
	if owner, err := s.ContextOwner(ctx, "x", "alice-ctx"); err != nil || owner != "alice" {
		t.Fatalf("ContextOwner(alice-ctx) = %q, %v", owner, err)
	}
}

// TestMemoryEvictsLeastRecentlyUpdatedFinal: a full index makes room by
// dropping the final task put least recently, and refuses a new task when
// none of its tasks is final.
func TestMemoryEvictsLeastRecentlyUpdatedFinal(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	s := openMemory(MemoryConfig{MaxTasks: 4})(t, clock)
	ctx := context.Background()
	for _, id := range []string{"a", "b", "c"} {
		mustPut(t, s, Task{ID: id, ContextID: "ctx-" + id, Owner: "o", Agent: "x", State: completed})
		clock.Advance(time.Second)
	}
	mustPut(t, s, Task{ID: "w", Owner: "o", Agent: "x", State: working})
	// Renewing a makes b the least recently updated task.
	mustPut(t, s, Task{ID: "a", Owner: "o", Agent: "x", State: completed})
	// A conflicting Put on a full index creates nothing, so evicts nothing.
	if err := s.Put(ctx, Task{ID: "c", Owner: "p", Agent: "x"}); !errors.Is(err, ErrOwnerConflict) {
		t.Fatalf("conflicting Put = %v, want ErrOwnerConflict", err)
	}
	if n := mustLen(t, s); n != 4 {
		t.Fatalf("Len() = %d, want 4", n)
	}
	mustPut(t, s, Task{ID: "d", Owner: "o", Agent: "x", State: working})
	wantNotFound(t, s, "x", "b")
	for _, id := range []string{"a", "c", "d", "w"} {
		mustGet(t, s, "x", id)
	}
	if n := mustLen(t, s); n != 4 {
		t.Errorf("Len() after eviction = %d, want 4", n)
	}
	if p := mustList(t, s, Query{Agent: "x", Owner: "o", PageSize: 10}); p.TotalSize != 4 {
		t.Errorf("List().TotalSize after eviction = %d, want 4", p.TotalSize)
	}
	if owner, err := s.ContextOwner(ctx, "x", "ctx-b"); !errors.Is(err, ErrNotFound) {
		t.Errorf("ContextOwner(ctx-b) after eviction = %q, %v; want ErrNotFound", owner, err)
	}
	if owner, err := s.ContextOwner(ctx, "x", "ctx-a"); err != nil || owner != "o" {
		t.Errorf("ContextOwner(ctx-a) = %q, %v; want o", owner, err)
	}
	// c and a go next; then only unfinished tasks are left, and the index
	// refuses rather than drop one.
	mustPut(t, s, Task{ID: "e", Owner: "p", Agent: "x", State: working})
	mustPut(t, s, Task{ID: "f", Owner: "", Agent: "x", State: working})
	wantNotFound(t, s, "x", "c")
	wantNotFound(t, s, "x", "a")
	if err := s.Put(ctx, Task{ID: "g", Owner: "q", Agent: "x", State: working}); !errors.Is(err, ErrIndexFull) {
		t.Fatalf("Put into an index of unfinished tasks = %v, want ErrIndexFull", err)
	}
	if _, err := s.Admit(ctx, Admission{Agent: "x", Owner: "q"}); !errors.Is(err, ErrIndexFull) {
		t.Fatalf("Admit into an index of unfinished tasks = %v, want ErrIndexFull", err)
	}
	for _, id := range []string{"d", "e", "f", "w"} {
		mustGet(t, s, "x", id)
	}
}

func TestMemoryEvictionKeepsIndexesConsistent(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	m := newMemory(t, MemoryConfig{MaxTasks: 50, now: clock.Now})
	for i := range 500 {
		clock.Advance(time.Millisecond)
		err := m.Put(context.Background(), Task{ID: fmt.Sprintf("t%d", i%120), ContextID: fmt.Sprintf("o%d-c%d", i%3, i%7),
			Owner: fmt.Sprintf("o%d", i%3), Agent: "x", State: []string{working, completed}[i%2]})
		if err != nil && !errors.Is(err, ErrIndexFull) && !errors.Is(err, ErrOwnerQuota) {
			t.Fatal(err)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if c := m.census(); !c.consistent(50, 50) {
		t.Errorf("%+v; want 50 tasks in every index", c)
	}
}

// census counts what a Memory's indexes hold; each must agree with the
// others. The caller holds m.mu.
type census struct {
	count, tasks, indexed, contextRefs, listed, buckets, contexts, final, ownerFinal, finalStates int
	// sharelessFinal counts the final tasks of owner "", in no bucket's
	// finished order.
	sharelessFinal int
	// unused counts buckets and agents kept with no task: a leak.
	unused int
	// misplaced counts tasks in the Put order of the other kind.
	misplaced int
}

func (m *Memory) census() census {
	c := census{count: m.count, listed: m.unfinished.Len() + m.finished.Len(), final: m.finished.Len()}
	m.unfinished.Ascend(func(mt *memTask) bool {
		if mt.final() {
			c.misplaced++
		}
		return true
	})
	m.finished.Ascend(func(mt *memTask) bool {
		if !mt.final() {
			c.misplaced++
		}
		return true
	})
	for _, a := range m.agents {
		c.tasks += len(a.tasks)
		c.contexts += len(a.contexts)
		if len(a.tasks) == 0 {
			c.unused++
		}
		for _, b := range a.buckets {
			c.indexed += b.list.Len()
			switch {
			case b.owner == "" && b.finished != nil:
				c.misplaced++ // a bucket without a share keeps no finished order
			case b.finished != nil:
				c.ownerFinal += b.finished.Len()
			}
			c.buckets++
			if b.list.Len() == 0 {
				c.unused++
			}
		}
		for _, ctx := range a.contexts {
			c.contextRefs += ctx.tasks
		}
		for _, mt := range a.tasks {
			if mt.final() {
				c.finalStates++
				if mt.bucket.owner == "" {
					c.sharelessFinal++
				}
			}
		}
	}
	return c
}

// consistent reports whether the census's indexes agree on n tasks.
func (c census) consistent(n, withContext int) bool {
	return c.count == n && c.tasks == n && c.indexed == n && c.listed == n && c.contextRefs == withContext &&
		c.final == c.finalStates && c.ownerFinal == c.finalStates-c.sharelessFinal && c.unused == 0 && c.misplaced == 0
}

// each calls f with every task the index holds. The caller holds m.mu.
func (m *Memory) each(f func(Task)) {
	for _, a := range m.agents {
		for _, mt := range a.tasks {
			f(mt.task())
		}
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
		if c := m.census(); c != (census{}) {
			t.Errorf("after the sweep: %+v", c)
		}
	})
}

// TestMemorySweepReclaimsPushConfigs: the sweep drops expired push configs
// and relays too. Nothing else looks up a relay whose send never named a
// task (the backend answered with a message, or failed) or the configs of a
// task nobody asks about again, so each such send's config (up to some 17
// KiB of a caller's URL, token and credentials) was kept for good: a caller
// sending messages with an inline config grew the gateway without bound.
func TestMemorySweepReclaimsPushConfigs(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		m := NewMemory(MemoryConfig{TTL: 2 * time.Minute})
		defer m.Close()
		ctx := context.Background()
		pending := PushConfig{Agent: "x", Owner: "o", ID: "c", URL: "https://hook.example/"}
		if err := m.PutPendingRelay(ctx, PushRelay{ID: "r1", Token: "k", Agent: "x", Pending: &pending}); err != nil {
			t.Fatal(err)
		}
		cfg := pending
		cfg.TaskID = "t2"
		if _, err := m.PutPushConfig(ctx, cfg, PushRelay{ID: "r2", Token: "k", Agent: "x"}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2*time.Minute + time.Second)
		synctest.Wait()
		m.push.mu.Lock()
		defer m.push.mu.Unlock()
		if len(m.push.relays) != 0 || len(m.push.tasks) != 0 {
			t.Errorf("after the sweep: %d relays, %d tasks' push configs", len(m.push.relays), len(m.push.tasks))
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
	m := newMemory(t, MemoryConfig{MaxTasks: 4000, now: clock.Now})
	ctx := context.Background()
	r := rand.New(rand.NewPCG(7, 11))
	for i := range 12000 {
		clock.Advance(time.Microsecond * time.Duration(1+r.IntN(3)))
		// New tasks, and updates of random older ones (moved to the front).
		id := fmt.Sprintf("t%05d", i)
		if i > 100 && r.IntN(3) == 0 {
			id = fmt.Sprintf("t%05d", i-1-r.IntN(100))
		}
		mustPut(t, m, Task{ID: id, Owner: "o", Agent: "x", State: completed, Updated: clock.Now()})
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
	m.each(func(t Task) {
		if !t.Updated.Before(after) {
			want++
		}
	})
	m.mu.Unlock()
	if page.TotalSize != want {
		t.Fatalf("UpdatedAfter TotalSize %d, want %d", page.TotalSize, want)
	}
}

// BenchmarkMemoryPut measures a Put into a full share of final tasks: each
// evicts the oldest.
func BenchmarkMemoryPut(b *testing.B) {
	m := NewMemory(MemoryConfig{})
	defer m.Close()
	ctx := context.Background()
	i := 0
	for b.Loop() {
		i++
		if err := m.Put(ctx, Task{ID: fmt.Sprint("t", i), Owner: "o", Agent: "x", State: completed}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestMemoryStaysConsistent churns a small index (evictions, expiry,
// late context ids, out-of-order updates, owner and context conflicts) and checks after
// every step that its lookups, buckets, contexts and LRU list agree, and
// that Get and List see the same tasks.
func TestMemoryStaysConsistent(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	// Shares smaller than the index, so that owners evict their own; owner
	// "" (authentication off) has none.
	m := newMemory(t, MemoryConfig{MaxTasks: 64, MaxTasksPerOwner: 24, TTL: time.Hour, now: clock.Now})
	ctx := context.Background()
	r := rand.New(rand.NewPCG(3, 5))
	owners := []string{"o0", "o1", "o2", ""}
	for step := range 4000 {
		clock.Advance(time.Duration(r.IntN(2000)) * time.Millisecond)
		task := Task{ID: fmt.Sprintf("t%d", r.IntN(150)), Owner: owners[r.IntN(len(owners))], Agent: fmt.Sprintf("a%d", r.IntN(2)),
			State: []string{working, completed}[r.IntN(2)], Updated: clock.Now().Add(-time.Duration(r.IntN(5000)) * time.Millisecond)}
		if r.IntN(3) > 0 {
			task.ContextID = fmt.Sprintf("c%d", r.IntN(20))
		}
		if err := m.Put(ctx, task); err != nil && !errors.Is(err, ErrOwnerConflict) && !errors.Is(err, ErrContextConflict) &&
			!errors.Is(err, ErrIndexFull) && !errors.Is(err, ErrOwnerQuota) {
			t.Fatal(err)
		}
		if step%7 == 0 {
			clock.Advance(time.Duration(r.IntN(20)) * time.Minute)
		}
		n, _ := m.Len(ctx)
		m.mu.Lock()
		c := m.census()
		m.mu.Unlock()
		if !c.consistent(n, n-m.tasksWithoutContext()) {
			t.Fatalf("step %d: %+v, Len %d", step, c, n)
		}
		listed := 0
		for _, o := range owners {
			for a := range 2 {
				p, err := m.List(ctx, Query{Agent: fmt.Sprintf("a%d", a), Owner: o, PageSize: MaxPageSize})
				if err != nil {
					t.Fatal(err)
				}
				listed += p.TotalSize
				for _, lt := range p.Tasks {
					if got, err := m.Get(ctx, lt.Agent, lt.ID); err != nil || got != lt {
						t.Fatalf("step %d: List has %+v, Get %+v, %v", step, lt, got, err)
					}
					if lt.ContextID != "" {
						if owner, err := m.ContextOwner(ctx, lt.Agent, lt.ContextID); err != nil || owner != lt.Owner {
							t.Fatalf("step %d: context of %+v: owner %q, %v; want the task's (a context has one owner)", step, lt, owner, err)
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
	m.each(func(t Task) {
		if t.ContextID == "" {
			n++
		}
	})
	return n
}

// TestMemorySendExpiresBeyondNanos: a record keeps its window to the
// instant whether or not nanoseconds since the Unix epoch can hold its end.
func TestMemorySendExpiresBeyondNanos(t *testing.T) {
	t.Parallel()
	m := newMemory(t, MemoryConfig{})
	ctx := context.Background()
	now := time.Date(2026, 12, 2, 7, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		expires time.Time
		live    bool
	}{
		{"zero", time.Time{}, false},
		{"past", now.Add(-time.Nanosecond), false},
		{"now", now, false},
		{"next nanosecond", now.Add(time.Nanosecond), true},
		{"local zone", now.Add(time.Minute).In(time.FixedZone("X", 3600)), true},
		{"year 3000", time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC), true},
	} {
		key := SendKey{Agent: "x", Owner: "o", Key: tc.name}
		if err := m.SaveSend(ctx, key, SendRecord{Digest: "0123456789abcdef", State: SendMessage, Expires: tc.expires}); err != nil {
			t.Fatal(err)
		}
		got, err := m.LoadSend(ctx, key, now)
		switch {
		case !tc.live && !errors.Is(err, ErrNotFound):
			t.Errorf("%s: LoadSend = %+v, %v; want ErrNotFound", tc.name, got, err)
		case tc.live && (err != nil || !got.Expires.Equal(tc.expires)):
			t.Errorf("%s: LoadSend = %+v, %v; want Expires %v", tc.name, got, err, tc.expires)
		}
	}
	// Judged at an instant nanoseconds cannot hold either.
	key := SendKey{Agent: "x", Owner: "o", Key: "year 3000"}
	if got, err := m.LoadSend(ctx, key, time.Date(3000, 1, 1, 0, 0, 0, 1, time.UTC)); !errors.Is(err, ErrNotFound) {
		t.Errorf("LoadSend past year 3000 = %+v, %v; want ErrNotFound", got, err)
	}
}

// TestMemorySendKeysStayApart: a record is found by its own key alone,
// which the index keeps as a sum: keys that are prefixes of each other,
// differ in one byte or only past a long common start, and the same key
// under other principals and agents, each have a record of their own.
func TestMemorySendKeysStayApart(t *testing.T) {
	t.Parallel()
	m := newMemory(t, MemoryConfig{})
	ctx := context.Background()
	now := time.Date(2026, 12, 2, 7, 0, 0, 0, time.UTC)
	long := strings.Repeat("k", 4096)
	var keys []SendKey
	for _, k := range []string{"a", "a\x00", "ab", "b", "msg-1", "msg-10", "msg-01", long, long + "x", long + "y", "é", "e\u0301"} {
		keys = append(keys, SendKey{Agent: "x", Owner: "o", Key: k})
	}
	keys = append(keys, SendKey{Agent: "x", Owner: "p", Key: "a"}, SendKey{Agent: "x", Owner: "", Key: "a"},
		SendKey{Agent: "y", Owner: "o", Key: "a"}, SendKey{Agent: "xo", Owner: "", Key: "a"})
	for i, key := range keys {
		rec := SendRecord{Digest: "0123456789abcdef", State: SendTask, TaskID: fmt.Sprint("task-", i), Expires: now.Add(time.Hour)}
		if err := m.SaveSend(ctx, key, rec); err != nil {
			t.Fatal(err)
		}
	}
	for i, key := range keys {
		got, err := m.LoadSend(ctx, key, now)
		if want := fmt.Sprint("task-", i); err != nil || got.TaskID != want {
			t.Errorf("LoadSend(%.20q) = %+v, %v; want task %s", key, got, err, want)
		}
	}
	if got, err := m.LoadSend(ctx, SendKey{Agent: "x", Owner: "o", Key: long[:4095]}, now); !errors.Is(err, ErrNotFound) {
		t.Errorf("LoadSend of a key never saved = %+v, %v; want ErrNotFound", got, err)
	}
}

// TestMemorySendsBoundedByIndex: a full index of records loses the one
// written least recently, whoever's it is; a record written again is
// written most recently; and a principal whose last record made room for
// its own new one keeps the new one.
func TestMemorySendsBoundedByIndex(t *testing.T) {
	t.Parallel()
	m := newMemory(t, MemoryConfig{MaxTasks: 3})
	ctx := context.Background()
	now := time.Date(2026, 12, 2, 7, 0, 0, 0, time.UTC)
	save := func(owner, key string) {
		t.Helper()
		rec := SendRecord{Digest: "0123456789abcdef", State: SendTask, TaskID: "task-" + key, Expires: now.Add(time.Hour)}
		if err := m.SaveSend(ctx, SendKey{Agent: "x", Owner: owner, Key: key}, rec); err != nil {
			t.Fatal(err)
		}
	}
	check := func(when string, want map[[2]string]bool) {
		t.Helper()
		for k, kept := range want {
			got, err := m.LoadSend(ctx, SendKey{Agent: "x", Owner: k[0], Key: k[1]}, now)
			switch {
			case kept && (err != nil || got.TaskID != "task-"+k[1]):
				t.Errorf("%s: LoadSend(%q, %q) = %+v, %v; want kept", when, k[0], k[1], got, err)
			case !kept && !errors.Is(err, ErrNotFound):
				t.Errorf("%s: LoadSend(%q, %q) = %+v, %v; want ErrNotFound", when, k[0], k[1], got, err)
			}
		}
	}
	save("", "k1")
	save("", "k2")
	save("alice", "k3")
	save("", "k4")
	check("after k4", map[[2]string]bool{{"", "k1"}: false, {"", "k2"}: true, {"alice", "k3"}: true, {"", "k4"}: true})
	save("", "k2")
	save("alice", "k5") // takes alice's k3, her only record, to make room
	check("after k5", map[[2]string]bool{{"", "k2"}: true, {"alice", "k3"}: false, {"", "k4"}: true, {"alice", "k5"}: true})
	save("bob", "k6")
	check("after k6", map[[2]string]bool{{"", "k2"}: true, {"", "k4"}: false, {"alice", "k5"}: true, {"bob", "k6"}: true})
}
