package store

import (
	"cmp"
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

	mu     sync.Mutex
	closed bool
	slab   // the tasks, in List order by owner and in expiry order

	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
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
		slab:     newSlab(cfg.MaxTasks, cmp.Or(cfg.presizedHeads, maxPresizedHeads)),
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
	expires := now.Add(m.ttl).UnixNano()
	backend, err := m.name(t.Backend)
	if err != nil {
		return err
	}
	state, err := m.name(t.State)
	if err != nil {
		return err
	}
	if i := m.find(t.Agent, t.ID); i != noSlot {
		if m.buckets[m.slots.at(i).bucket].owner != t.Owner {
			return ErrOwnerConflict
		}
		m.update(i, t, state, expires)
		return nil
	}
	if m.count >= m.maxTasks {
		m.remove(m.lruHead)
	}
	m.add(t, backend, state, expires)
	return nil
}

func (m *Memory) update(i int32, t Task, state uint16, expires int64) {
	sl := m.slots.at(i)
	if sl.contextID() == "" && t.ContextID != "" {
		m.addContextID(i, t.Agent, t.ContextID)
	}
	if updated := t.Updated.UnixMicro(); updated >= sl.updated {
		b := m.buckets[sl.bucket]
		m.bucketRemove(b, i)
		sl.state, sl.updated = state, updated
		m.bucketInsert(b, i)
	}
	sl.expires = expires
	m.lruRemove(i)
	m.lruPushBack(i)
}

// purge drops the expired tasks. Every operation calls it first, so callers
// never see an expired task, and it costs O(1) per task over its lifetime
// because the LRU list is also in expiry order.
func (m *Memory) purge(now time.Time) {
	ns := now.UnixNano()
	for m.lruHead != noSlot && m.slots.at(m.lruHead).expires <= ns {
		m.remove(m.lruHead)
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
	i := m.find(agent, id)
	if i == noSlot {
		return Task{}, ErrNotFound
	}
	return m.task(i), nil
}

// ContextOwner implements Store.
func (m *Memory) ContextOwner(_ context.Context, agent, contextID string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return "", unavailable("get context owner", errClosed)
	}
	m.purge(m.now())
	owner, ok := m.contextOwner(agent, contextID)
	if !ok {
		return "", ErrNotFound
	}
	return owner, nil
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
	bi, ok := m.bucketIDs[bucketKey{q.Agent, q.Owner}]
	if !ok {
		return page, nil
	}
	b := m.buckets[bi]
	end := b.n
	if !q.UpdatedAfter.IsZero() {
		oldest := afterMicros(q.UpdatedAfter)
		end = b.index(m.search(b, func(sl *memSlot) bool { return sl.updated < oldest }))
	}
	matches := func(i int32) bool {
		sl := m.slots.at(i)
		return (q.ContextID == "" || sl.contextID() == q.ContextID) && (q.State == "" || m.names[sl.state] == q.State)
	}
	if q.ContextID == "" && q.State == "" {
		page.TotalSize = end
	} else {
		n := 0
		b.each(memPos{}, func(i int32) bool {
			if n++; n > end {
				return false
			}
			if matches(i) {
				page.TotalSize++
			}
			return true
		})
	}
	start := m.search(b, func(sl *memSlot) bool { return cur.after(sl.updated, sl.id()) })
	n := b.index(start)
	b.each(start, func(i int32) bool {
		if n++; n > end {
			return false
		}
		if !matches(i) {
			return true
		}
		if len(page.Tasks) == q.PageSize {
			page.NextPageToken = encodePageToken(q, page.Tasks[len(page.Tasks)-1])
			return false
		}
		page.Tasks = append(page.Tasks, m.task(i))
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
	return m.count, nil
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
