package store

import (
	"context"
	"sync"
	"time"
)

// Memory is a Store held in the memory of one process: bounded, with entries
// that expire, and safe for concurrent use. It never blocks on I/O, so it
// ignores the contexts it is given.
type Memory struct {
	maxTasks int
	ttl      time.Duration
	now      func() time.Time

	mu       sync.Mutex
	closed   bool
	tasks    map[taskKey]*memEntry
	buckets  map[bucketKey]*memBucket
	contexts map[contextKey]*memContext
	lru      memList // least recently put first, which is also expiry order

	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

type (
	taskKey    struct{ agent, id string }
	bucketKey  struct{ agent, owner string }
	contextKey struct{ agent, contextID string }
)

// memContext remembers a context's owner while any task in it is alive.
type memContext struct {
	owner string
	tasks int
}

var _ Store = (*Memory)(nil)

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
		maxTasks: cfg.MaxTasks,
		ttl:      cfg.TTL,
		now:      now,
		tasks:    make(map[taskKey]*memEntry),
		buckets:  make(map[bucketKey]*memBucket),
		contexts: make(map[contextKey]*memContext),
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
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
	if e := m.tasks[taskKey{t.Agent, t.ID}]; e != nil {
		if e.task.Owner != t.Owner {
			return ErrOwnerConflict
		}
		m.update(e, t, expires)
		return nil
	}
	if len(m.tasks) >= m.maxTasks {
		m.remove(m.lru.front())
	}
	m.insert(t, expires)
	return nil
}

func (m *Memory) update(e *memEntry, t Task, expires time.Time) {
	if e.task.ContextID == "" && t.ContextID != "" {
		e.task.ContextID = t.ContextID
		m.addContextRef(e.task)
	}
	if updated := t.Updated.UnixMicro(); updated >= e.updated {
		b := m.buckets[bucketKey{e.task.Agent, e.task.Owner}]
		b.remove(e)
		e.task.State, e.task.Updated, e.updated = t.State, t.Updated, updated
		b.insert(e)
	}
	e.expires = expires
	m.lru.remove(e)
	m.lru.pushBack(e)
}

func (m *Memory) insert(t Task, expires time.Time) {
	e := &memEntry{task: t, updated: t.Updated.UnixMicro(), expires: expires}
	m.tasks[taskKey{t.Agent, t.ID}] = e
	bk := bucketKey{t.Agent, t.Owner}
	b := m.buckets[bk]
	if b == nil {
		b = &memBucket{}
		m.buckets[bk] = b
	}
	b.insert(e)
	m.addContextRef(t)
	m.lru.pushBack(e)
}

func (m *Memory) remove(e *memEntry) {
	delete(m.tasks, taskKey{e.task.Agent, e.task.ID})
	bk := bucketKey{e.task.Agent, e.task.Owner}
	b := m.buckets[bk]
	b.remove(e)
	if b.len() == 0 {
		delete(m.buckets, bk)
	}
	if e.task.ContextID != "" {
		ck := contextKey{e.task.Agent, e.task.ContextID}
		c := m.contexts[ck]
		if c.tasks--; c.tasks == 0 {
			delete(m.contexts, ck)
		}
	}
	m.lru.remove(e)
}

// addContextRef counts t in its context, which t's owner claims if it is new.
func (m *Memory) addContextRef(t Task) {
	if t.ContextID == "" {
		return
	}
	ck := contextKey{t.Agent, t.ContextID}
	c := m.contexts[ck]
	if c == nil {
		c = &memContext{owner: t.Owner}
		m.contexts[ck] = c
	}
	c.tasks++
}

// purge drops the expired tasks. Every operation calls it first, so callers
// never see an expired task, and it costs O(1) per task over its lifetime
// because the LRU list is also in expiry order.
func (m *Memory) purge(now time.Time) {
	for e := m.lru.front(); e != nil && !now.Before(e.expires); e = m.lru.front() {
		m.remove(e)
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
	e := m.tasks[taskKey{agent, id}]
	if e == nil {
		return Task{}, ErrNotFound
	}
	return e.task, nil
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

// List implements Store. Filtering by context or state scans the owner's
// tasks; owners rarely hold enough tasks in one process for that to matter.
func (m *Memory) List(_ context.Context, q Query) (Page, error) {
	if err := validateQuery(q); err != nil {
		return Page{}, err
	}
	cur, err := decodePageToken(q)
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
	end := b.len()
	if !q.UpdatedAfter.IsZero() {
		oldest := afterMicros(q.UpdatedAfter)
		end = b.index(b.search(func(e *memEntry) bool { return e.updated < oldest }))
	}
	matches := func(e *memEntry) bool {
		return (q.ContextID == "" || e.task.ContextID == q.ContextID) && (q.State == "" || e.task.State == q.State)
	}
	if q.ContextID == "" && q.State == "" {
		page.TotalSize = end
	} else {
		i := 0
		b.each(memPos{}, func(e *memEntry) bool {
			if i++; i > end {
				return false
			}
			if matches(e) {
				page.TotalSize++
			}
			return true
		})
	}
	start := b.search(func(e *memEntry) bool { return cur.after(e.updated, e.task.ID) })
	i := b.index(start)
	b.each(start, func(e *memEntry) bool {
		if i++; i > end {
			return false
		}
		if !matches(e) {
			return true
		}
		if len(page.Tasks) == q.PageSize {
			page.NextPageToken = encodePageToken(q, page.Tasks[len(page.Tasks)-1])
			return false
		}
		page.Tasks = append(page.Tasks, e.task)
		return true
	})
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
