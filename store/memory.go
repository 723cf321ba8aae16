package store

import (
	"container/list"
	"context"
	"strings"
	"sync"
	"time"

	"github.com/google/btree"
)

// Memory is a Store held in the memory of one process: bounded, with entries
// that expire, and safe for concurrent use. It never blocks on I/O, so it
// ignores the contexts it is given.
type Memory struct {
	maxTasks    int
	maxPerOwner int
	ttl         time.Duration
	now         func() time.Time

	mu       sync.Mutex
	closed   bool
	tasks    map[taskKey]*memTask
	ids      map[string]int // agents holding each task id, for Known
	buckets  map[bucketKey]*memBucket
	contexts map[contextKey]*memContext
	// recent holds every task, least recently put first: also expiry order,
	// as every Put renews a task's lifetime by the same TTL.
	recent list.List
	// final holds the tasks in a final state, least recently put first: the
	// only ones eviction may take.
	final list.List
	// sends are the records of Retries, under their own lock.
	sends memSends

	push memPush // push configs and relays: memory_push.go

	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

var _ Store = (*Memory)(nil)

type (
	taskKey    struct{ agent, id string }
	bucketKey  struct{ agent, owner string }
	contextKey struct{ agent, contextID string }
)

// memTask is one stored task and its places in the lists.
type memTask struct {
	Task
	expires    time.Time
	recent     *list.Element
	final      *list.Element // in Memory.final; nil unless final
	ownerFinal *list.Element // in the bucket's final list; nil unless final
	bucket     *memBucket
	context    *memContext // nil when the task has no context id
}

// memBucket holds one (agent, owner)'s tasks in List order, and its final
// tasks least recently put first, for the owner's share.
type memBucket struct {
	key   bucketKey
	list  *btree.BTreeG[*memTask]
	final list.List
}

// memContext remembers a context's owner while any of its tasks is stored.
type memContext struct {
	owner string
	tasks int
}

// listLess orders tasks as List returns them: newest first, ties by ID.
func listLess(a, b *memTask) bool {
	if c := a.Updated.Compare(b.Updated); c != 0 {
		return c > 0
	}
	return a.ID < b.ID
}

// finalState reports whether a 1.0 task state ends the task, which makes it
// the only kind eviction may drop.
func finalState(state string) bool {
	switch state {
	case "TASK_STATE_COMPLETED", "TASK_STATE_CANCELED", "TASK_STATE_FAILED", "TASK_STATE_REJECTED":
		return true
	}
	return false
}

// maxSweepInterval bounds how long expired tasks of an idle Memory hold
// memory. Reads purge expired tasks themselves, so the sweep never decides
// what callers see.
const maxSweepInterval = time.Minute

// NewMemory returns a Memory configured by cfg after SetDefaults. It panics
// if cfg does not validate; call Validate first when cfg comes from a user.
// Close stops its background sweep.
func NewMemory(cfg MemoryConfig) *Memory {
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		panic("store: invalid memory config: " + err.Error())
	}
	now := cfg.now
	if now == nil {
		now = time.Now
	}
	m := &Memory{
		maxTasks:    cfg.MaxTasks,
		maxPerOwner: cfg.MaxTasksPerOwner,
		ttl:         cfg.TTL,
		now:         now,
		tasks:       map[taskKey]*memTask{},
		ids:         map[string]int{},
		buckets:     map[bucketKey]*memBucket{},
		contexts:    map[contextKey]*memContext{},
		stop:        make(chan struct{}),
		done:        make(chan struct{}),
	}
	go m.sweep(min(cfg.TTL, maxSweepInterval))
	return m
}

func (m *Memory) sweep(every time.Duration) {
	defer close(m.done)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-tick.C:
			m.mu.Lock()
			m.purge(m.now())
			m.mu.Unlock()
		}
	}
}

// Put implements Store.
func (m *Memory) Put(_ context.Context, t Task) error {
	now := m.now()
	t, err := normalizeTask(t, now)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return unavailable("put task", errClosed)
	}
	m.purge(now)
	expires := now.Add(m.ttl)
	if mt := m.tasks[taskKey{t.Agent, t.ID}]; mt != nil {
		if mt.Owner != t.Owner {
			return ErrOwnerConflict
		}
		m.update(mt, t, expires)
		return nil
	}
	if err := m.makeRoom(t.Agent, t.Owner); err != nil {
		return err
	}
	m.add(t, expires)
	return nil
}

// makeRoom evicts what a new task of (agent, owner) needs: the owner's own
// least recently put final task when its share is full, then anyone's when
// the index is. It never evicts a task that is not final; it refuses
// instead. The caller holds m.mu.
func (m *Memory) makeRoom(agent, owner string) error {
	if err := m.admit(agent, owner); err != nil {
		return err
	}
	if b := m.buckets[bucketKey{agent, owner}]; m.shareFull(b) {
		if e := b.final.Front(); e != nil {
			m.remove(e.Value.(*memTask))
		}
	}
	if len(m.tasks) >= m.maxTasks {
		e := m.final.Front()
		if e == nil {
			return m.indexFull()
		}
		m.remove(e.Value.(*memTask))
	}
	return nil
}

// admit reports whether a new task of (agent, owner) fits, once final
// tasks are evicted. The caller holds m.mu.
func (m *Memory) admit(agent, owner string) error {
	if b := m.buckets[bucketKey{agent, owner}]; m.shareFull(b) && b.final.Len() == 0 {
		return &LimitError{Err: ErrOwnerQuota, Limit: m.maxPerOwner, Setting: "store.memory.max_tasks_per_owner"}
	}
	if len(m.tasks) >= m.maxTasks && m.final.Len() == 0 {
		return m.indexFull()
	}
	return nil
}

func (m *Memory) indexFull() error {
	return &LimitError{Err: ErrIndexFull, Limit: m.maxTasks, Setting: "store.memory.max_tasks"}
}

// shareFull reports whether bucket b holds its owner's whole share. Tasks
// recorded with authentication off (owner "") have one shared principal,
// bounded by the index's size alone.
func (m *Memory) shareFull(b *memBucket) bool {
	return b != nil && b.key.owner != "" && b.list.Len() >= m.maxPerOwner
}

func (m *Memory) add(t Task, expires time.Time) {
	bk := bucketKey{t.Agent, t.Owner}
	b := m.buckets[bk]
	if b == nil {
		b = &memBucket{key: bk, list: btree.NewG(16, listLess)}
		m.buckets[bk] = b
	}
	mt := &memTask{Task: t, expires: expires, bucket: b}
	m.tasks[taskKey{t.Agent, t.ID}] = mt
	m.ids[t.ID]++
	mt.recent = m.recent.PushBack(mt)
	b.list.ReplaceOrInsert(mt)
	m.setFinal(mt)
	m.setContext(mt)
}

func (m *Memory) update(mt *memTask, t Task, expires time.Time) {
	if mt.ContextID == "" && t.ContextID != "" {
		// Ids are views of what the caller holds: keep a copy of our own.
		mt.ContextID = strings.Clone(t.ContextID)
		m.setContext(mt)
	}
	if !t.Updated.Before(mt.Updated) {
		mt.bucket.list.Delete(mt)
		mt.State, mt.Updated = t.State, t.Updated
		mt.bucket.list.ReplaceOrInsert(mt)
	}
	mt.expires = expires
	m.recent.MoveToBack(mt.recent)
	m.setFinal(mt)
}

// setFinal puts mt at the back of the final lists if its state is final,
// and takes it out of them if not.
func (m *Memory) setFinal(mt *memTask) {
	if mt.final != nil {
		m.final.Remove(mt.final)
		mt.bucket.final.Remove(mt.ownerFinal)
		mt.final, mt.ownerFinal = nil, nil
	}
	if finalState(mt.State) {
		mt.final = m.final.PushBack(mt)
		mt.ownerFinal = mt.bucket.final.PushBack(mt)
	}
}

// setContext counts mt in its context, which mt's owner claims if new.
func (m *Memory) setContext(mt *memTask) {
	if mt.ContextID == "" {
		return
	}
	k := contextKey{mt.Agent, mt.ContextID}
	c := m.contexts[k]
	if c == nil {
		c = &memContext{owner: mt.Owner}
		m.contexts[k] = c
	}
	c.tasks++
	mt.context = c
}

// remove drops mt from every index.
func (m *Memory) remove(mt *memTask) {
	delete(m.tasks, taskKey{mt.Agent, mt.ID})
	if m.ids[mt.ID]--; m.ids[mt.ID] <= 0 {
		delete(m.ids, mt.ID)
	}
	m.recent.Remove(mt.recent)
	if mt.final != nil {
		m.final.Remove(mt.final)
		mt.bucket.final.Remove(mt.ownerFinal)
	}
	b := mt.bucket
	b.list.Delete(mt)
	if b.list.Len() == 0 {
		delete(m.buckets, b.key)
	}
	if c := mt.context; c != nil {
		if c.tasks--; c.tasks <= 0 {
			delete(m.contexts, contextKey{mt.Agent, mt.ContextID})
		}
	}
}

// purge drops the expired tasks. Every operation calls it first, so callers
// never see an expired task, and it costs O(log n) per task over its
// lifetime because the recent list is in expiry order.
func (m *Memory) purge(now time.Time) {
	for e := m.recent.Front(); e != nil; e = m.recent.Front() {
		mt := e.Value.(*memTask)
		if mt.expires.After(now) {
			return
		}
		m.remove(mt)
	}
}

// Get implements Store.
func (m *Memory) Get(_ context.Context, agent, id string) (Task, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return Task{}, unavailable("get task", errClosed)
	}
	m.purge(m.now())
	mt := m.tasks[taskKey{agent, id}]
	if mt == nil {
		return Task{}, ErrNotFound
	}
	return mt.Task, nil
}

// Known implements Store.
func (m *Memory) Known(_ context.Context, id string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return false, unavailable("look up task", errClosed)
	}
	m.purge(m.now())
	return m.ids[id] > 0, nil
}

// ContextOwner implements Store.
func (m *Memory) ContextOwner(_ context.Context, agent, contextID string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return "", unavailable("get context owner", errClosed)
	}
	m.purge(m.now())
	c := m.contexts[contextKey{agent, contextID}]
	if c == nil {
		return "", ErrNotFound
	}
	return c.owner, nil
}

// Admit implements Store.
func (m *Memory) Admit(_ context.Context, a Admission) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return "", unavailable("admit task", errClosed)
	}
	m.purge(m.now())
	if err := m.admit(a.Agent, a.Owner); err != nil {
		return "", err
	}
	c := m.contexts[contextKey{a.Agent, a.ContextID}]
	if a.ContextID == "" || c == nil {
		return "", ErrNotFound
	}
	return c.owner, nil
}

// List implements Store. Filtering by context or state scans the owner's
// tasks; an owner's share bounds how many that is.
func (m *Memory) List(_ context.Context, q Query) (Page, error) {
	cur, err := startList(q)
	if err != nil {
		return Page{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return Page{}, unavailable("list tasks", errClosed)
	}
	m.purge(m.now())
	page := Page{Tasks: []Task{}}
	b := m.buckets[bucketKey{q.Agent, q.Owner}]
	if b == nil {
		return page, nil
	}
	oldest := int64(-1 << 63)
	if !q.UpdatedAfter.IsZero() {
		oldest = afterMicros(q.UpdatedAfter)
	}
	matches := func(mt *memTask) bool {
		return (q.ContextID == "" || mt.ContextID == q.ContextID) && (q.State == "" || mt.State == q.State)
	}
	if q.ContextID == "" && q.State == "" && q.UpdatedAfter.IsZero() {
		page.TotalSize = b.list.Len()
	} else {
		b.list.Ascend(func(mt *memTask) bool {
			if mt.Updated.UnixMicro() < oldest {
				return false
			}
			if matches(mt) {
				page.TotalSize++
			}
			return true
		})
	}
	walk := func(mt *memTask) bool {
		if mt.Updated.UnixMicro() < oldest {
			return false
		}
		if !cur.after(mt.Updated.UnixMicro(), mt.ID) || !matches(mt) {
			return true
		}
		if len(page.Tasks) == q.PageSize {
			page.NextPageToken = encodePageToken(q, page.Tasks[len(page.Tasks)-1])
			return false
		}
		page.Tasks = append(page.Tasks, mt.Task)
		return true
	}
	if cur == nil {
		b.list.Ascend(walk)
	} else {
		b.list.AscendGreaterOrEqual(&memTask{Task: Task{ID: cur.ID, Updated: fromMicros(cur.Updated)}}, walk)
	}
	return page, nil
}

// Len implements Store.
func (m *Memory) Len(context.Context) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return 0, unavailable("count tasks", errClosed)
	}
	m.purge(m.now())
	return len(m.tasks), nil
}

// Ping implements Store: a Memory is ready until closed.
func (m *Memory) Ping(context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return unavailable("ping", errClosed)
	}
	return nil
}

// Close stops the background sweep. It is idempotent.
func (m *Memory) Close() error {
	m.closeOnce.Do(func() {
		close(m.stop)
		<-m.done
		m.mu.Lock()
		m.closed = true
		m.mu.Unlock()
	})
	return nil
}
