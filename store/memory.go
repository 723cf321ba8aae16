package store

import (
	"context"
	"fmt"
	"hash/maphash"
	"math"
	"strings"
	"sync"
	"time"
	"unique"

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
	// epoch is what task lifetimes are counted from, so that they keep the
	// monotonic clock's reading.
	epoch time.Time

	mu     sync.Mutex
	closed bool
	agents map[string]*memAgent
	count  int
	// unfinished and finished hold the tasks that are not final and those
	// that are, in the order of their last Put: the least recently put of
	// both is the next to expire (every Put renews a lifetime by the same
	// TTL), the least recently put finished one the next eviction may take.
	unfinished, finished *btree.BTreeG[*memTask]
	// puts numbers the Puts, for their order.
	puts uint64
	// free holds the free nodes every tree shares.
	free *btree.FreeListG[*memTask]
	// sends are the records of Retries, under their own lock.
	sends memSends

	push memPush // push configs and relays: memory_push.go

	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

var _ Store = (*Memory)(nil)

// memAgent holds one agent's tasks, by id, by owner and by context. The
// agent's name, its owners' and its contexts' strings are held once here
// and shared by their tasks.
type memAgent struct {
	name     string
	tasks    map[string]*memTask
	buckets  map[string]*memBucket // by owner
	contexts map[string]memContext // by context id
}

// memBucket holds one (agent, owner)'s tasks in List order, and its final
// tasks least recently put first, for the owner's share. Tasks recorded
// with authentication off (owner "") have no share, so no finished order.
type memBucket struct {
	agent    *memAgent
	owner    string
	list     *btree.BTreeG[*memTask]
	finished *btree.BTreeG[*memTask]
}

// memTask is one stored task; its agent and owner are its bucket's.
type memTask struct {
	// ids is the task id followed by its context id, in one allocation
	// that the agent's maps key on too; idLen ends the task id.
	ids  string
	meta unique.Handle[memMeta]
	// updated is in microseconds since the Unix epoch, UTC.
	updated int64
	expires time.Duration // since Memory.epoch
	put     uint64        // the number of its last Put
	bucket  *memBucket
	idLen   uint32
}

// memMeta is what a task shares with many others: the backend and the
// state, interned as one pair so that a task holds a single handle.
type memMeta struct{ backend, state string }

func (mt *memTask) id() string        { return mt.ids[:mt.idLen] }
func (mt *memTask) contextID() string { return mt.ids[mt.idLen:] }
func (mt *memTask) state() string     { return mt.meta.Value().state }

// joinIDs returns id and contextID in one string of the index's own: the
// caller's may be views into a reply.
func joinIDs(id, contextID string) string {
	var b strings.Builder
	b.Grow(len(id) + len(contextID))
	b.WriteString(id)
	b.WriteString(contextID)
	return b.String()
}

// putLess orders the most recently put first, so that the oldest is the
// Max: the B-trees take new items at their low end, where a split leaves
// full nodes behind (at the high end it leaves half-empty ones). Items are
// the tasks themselves rather than (put, task) pairs: a pointer per item,
// at the cost of reading the task on each comparison.
func putLess(a, b *memTask) bool { return a.put > b.put }

// memContext remembers a context's owner while any of its tasks is stored.
type memContext struct {
	owner unique.Handle[string]
	tasks int
}

func (mt *memTask) task() Task {
	meta := mt.meta.Value()
	return Task{ID: mt.id(), ContextID: mt.contextID(), Owner: mt.bucket.owner, Agent: mt.bucket.agent.name,
		Backend: meta.backend, State: meta.state, Updated: fromMicros(mt.updated)}
}

func (mt *memTask) final() bool { return finalState(mt.state()) }

// listLess orders tasks as List returns them: newest first, ties by ID.
func listLess(a, b *memTask) bool {
	if a.updated != b.updated {
		return a.updated > b.updated
	}
	return a.id() < b.id()
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

// btreeDegree is the degree of the index's B-trees: nodes of up to 63
// pointers, which spread each node's own fields over more items than
// smaller ones (see BenchmarkMemoryFootprint).
const btreeDegree = 32

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
		epoch:       now(),
		agents:      map[string]*memAgent{},
		free:        btree.NewFreeListG[*memTask](btree.DefaultFreeListSize),
		stop:        make(chan struct{}),
		done:        make(chan struct{}),
	}
	m.sends.seeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}
	m.unfinished = btree.NewWithFreeListG(btreeDegree, putLess, m.free)
	m.finished = btree.NewWithFreeListG(btreeDegree, putLess, m.free)
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
			now := m.now()
			m.mu.Lock()
			m.purge(now)
			m.mu.Unlock()
			m.push.purge(now)
		}
	}
}

// lookup returns agent's task id, nil if it holds none. The caller holds
// m.mu.
func (m *Memory) lookup(agent, id string) *memTask {
	if a := m.agents[agent]; a != nil {
		return a.tasks[id]
	}
	return nil
}

// bucket returns (agent, owner)'s bucket, nil if it holds no task. The
// caller holds m.mu.
func (m *Memory) bucket(agent, owner string) *memBucket {
	if a := m.agents[agent]; a != nil {
		return a.buckets[owner]
	}
	return nil
}

// Put implements Store.
func (m *Memory) Put(_ context.Context, t Task) error {
	now := m.now()
	t, err := normalizeTask(t, now)
	if err != nil {
		return err
	}
	if uint64(len(t.ID)) > math.MaxUint32 {
		return fmt.Errorf("put task: task id of %d bytes exceeds the memory index's %d", len(t.ID), uint32(math.MaxUint32))
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return unavailable("put task", errClosed)
	}
	m.purge(now)
	expires := now.Add(m.ttl).Sub(m.epoch)
	mt := m.lookup(t.Agent, t.ID)
	if mt != nil && mt.bucket.owner != t.Owner {
		return ErrOwnerConflict
	}
	if m.contextOfAnother(t) {
		return ErrContextConflict
	}
	if mt != nil {
		m.update(mt, t, expires)
		return nil
	}
	if err := m.makeRoom(t.Agent, t.Owner); err != nil {
		return err
	}
	m.add(t, expires)
	return nil
}

// contextOfAnother reports whether t names a context another owner holds.
// The caller holds m.mu.
func (m *Memory) contextOfAnother(t Task) bool {
	if t.ContextID == "" {
		return false
	}
	a := m.agents[t.Agent]
	if a == nil {
		return false
	}
	c, ok := a.contexts[t.ContextID]
	return ok && c.owner.Value() != t.Owner
}

// makeRoom evicts what a new task of (agent, owner) needs: the owner's own
// least recently put final task when its share is full, then anyone's when
// the index is. It never evicts a task that is not final; it refuses
// instead. The caller holds m.mu.
func (m *Memory) makeRoom(agent, owner string) error {
	if err := m.admit(agent, owner); err != nil {
		return err
	}
	if b := m.bucket(agent, owner); m.shareFull(b) {
		if oldest, ok := b.finished.Max(); ok {
			m.remove(oldest)
		}
	}
	if m.count >= m.maxTasks {
		oldest, ok := m.finished.Max()
		if !ok {
			return m.indexFull()
		}
		m.remove(oldest)
	}
	return nil
}

// admit reports whether a new task of (agent, owner) fits, once final
// tasks are evicted. The caller holds m.mu.
func (m *Memory) admit(agent, owner string) error {
	if b := m.bucket(agent, owner); m.shareFull(b) && b.finished.Len() == 0 {
		return &LimitError{Err: ErrOwnerQuota, Limit: m.maxPerOwner, Setting: "store.memory.max_tasks_per_owner"}
	}
	if m.count >= m.maxTasks && m.finished.Len() == 0 {
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
	return b != nil && b.owner != "" && b.list.Len() >= m.maxPerOwner
}

func (m *Memory) add(t Task, expires time.Duration) {
	a := m.agents[t.Agent]
	if a == nil {
		// The names are kept for as long as the agent has tasks: they may
		// be views of what the caller holds.
		a = &memAgent{name: strings.Clone(t.Agent), tasks: map[string]*memTask{},
			buckets: map[string]*memBucket{}, contexts: map[string]memContext{}}
		m.agents[a.name] = a
	}
	b := a.buckets[t.Owner]
	if b == nil {
		b = &memBucket{agent: a, owner: strings.Clone(t.Owner), list: btree.NewWithFreeListG(btreeDegree, listLess, m.free)}
		if b.owner != "" {
			b.finished = btree.NewWithFreeListG(btreeDegree, putLess, m.free)
		}
		a.buckets[b.owner] = b
	}
	mt := &memTask{ids: joinIDs(t.ID, t.ContextID), idLen: uint32(len(t.ID)),
		meta: unique.Make(memMeta{backend: t.Backend, state: t.State}), updated: t.Updated.UnixMicro(), expires: expires, bucket: b}
	a.tasks[mt.id()] = mt
	m.count++
	b.list.ReplaceOrInsert(mt)
	m.placePut(mt)
	m.setContext(mt)
}

func (m *Memory) update(mt *memTask, t Task, expires time.Duration) {
	if mt.contextID() == "" && t.ContextID != "" {
		// The tree orders compare the task id, which stays the same; the
		// task map is keyed anew so that it holds no second copy of it.
		a := mt.bucket.agent
		delete(a.tasks, mt.id())
		mt.ids = joinIDs(mt.id(), t.ContextID)
		a.tasks[mt.id()] = mt
		m.setContext(mt)
	}
	m.unplacePut(mt)
	if updated := t.Updated.UnixMicro(); updated >= mt.updated {
		b := mt.bucket
		b.list.Delete(mt)
		state := t.State
		if mt.final() {
			state = mt.state() // a final state is never left
		}
		mt.meta, mt.updated = unique.Make(memMeta{backend: mt.meta.Value().backend, state: state}), updated
		b.list.ReplaceOrInsert(mt)
	}
	mt.expires = expires
	m.placePut(mt)
}

// placePut numbers mt's Put and places it last in its Put orders.
func (m *Memory) placePut(mt *memTask) {
	m.puts++
	mt.put = m.puts
	for _, order := range m.putOrders(mt) {
		if order != nil {
			order.ReplaceOrInsert(mt)
		}
	}
}

// unplacePut takes mt out of its Put orders, before its state changes.
func (m *Memory) unplacePut(mt *memTask) {
	for _, order := range m.putOrders(mt) {
		if order != nil {
			order.Delete(mt)
		}
	}
}

// putOrders are the Put orders mt belongs in as its state stands: the
// unfinished tasks' (and nil), or the finished tasks' and its bucket's
// (nil for a bucket without a share).
func (m *Memory) putOrders(mt *memTask) [2]*btree.BTreeG[*memTask] {
	if !mt.final() {
		return [2]*btree.BTreeG[*memTask]{m.unfinished}
	}
	return [2]*btree.BTreeG[*memTask]{m.finished, mt.bucket.finished}
}

// setContext counts mt in its context, which mt's owner claims if new.
func (m *Memory) setContext(mt *memTask) {
	contextID := mt.contextID()
	if contextID == "" {
		return
	}
	a := mt.bucket.agent
	c, ok := a.contexts[contextID]
	if !ok {
		c.owner = unique.Make(mt.bucket.owner)
	}
	c.tasks++
	a.contexts[contextID] = c
}

// remove drops mt from every index.
func (m *Memory) remove(mt *memTask) {
	b := mt.bucket
	a := b.agent
	delete(a.tasks, mt.id())
	m.count--
	m.unplacePut(mt)
	b.list.Delete(mt)
	if b.list.Len() == 0 {
		delete(a.buckets, b.owner)
	}
	if contextID := mt.contextID(); contextID != "" {
		if c := a.contexts[contextID]; c.tasks <= 1 {
			delete(a.contexts, contextID)
		} else {
			c.tasks--
			a.contexts[contextID] = c
		}
	}
	if len(a.tasks) == 0 {
		delete(m.agents, a.name)
	}
}

// purge drops the expired tasks. Every operation calls it first, so callers
// never see an expired task, and it costs O(log n) per task over its
// lifetime because both Put orders are expiry orders.
func (m *Memory) purge(now time.Time) {
	at := now.Sub(m.epoch)
	for {
		oldest, ok := m.unfinished.Max()
		if f, fok := m.finished.Max(); fok && (!ok || f.put < oldest.put) {
			oldest, ok = f, true
		}
		if !ok || oldest.expires > at {
			return
		}
		m.remove(oldest)
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
	mt := m.lookup(agent, id)
	if mt == nil {
		return Task{}, ErrNotFound
	}
	return mt.task(), nil
}

// Known implements Store.
func (m *Memory) Known(_ context.Context, id string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return false, unavailable("look up task", errClosed)
	}
	m.purge(m.now())
	// Agents are few (the gateway's configured ones): one lookup each.
	for _, a := range m.agents {
		if a.tasks[id] != nil {
			return true, nil
		}
	}
	return false, nil
}

// ContextOwner implements Store.
func (m *Memory) ContextOwner(_ context.Context, agent, contextID string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return "", unavailable("get context owner", errClosed)
	}
	m.purge(m.now())
	if a := m.agents[agent]; a != nil {
		if c, ok := a.contexts[contextID]; ok {
			return c.owner.Value(), nil
		}
	}
	return "", ErrNotFound
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
	if ag := m.agents[a.Agent]; ag != nil && a.ContextID != "" {
		if c, ok := ag.contexts[a.ContextID]; ok {
			return c.owner.Value(), nil
		}
	}
	return "", ErrNotFound
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
	b := m.bucket(q.Agent, q.Owner)
	if b == nil {
		return page, nil
	}
	oldest := int64(-1 << 63)
	if !q.UpdatedAfter.IsZero() {
		oldest = afterMicros(q.UpdatedAfter)
	}
	matches := func(mt *memTask) bool {
		return (q.ContextID == "" || mt.contextID() == q.ContextID) && (q.State == "" || mt.state() == q.State || (q.OrUnfinished && !mt.final()))
	}
	if q.ContextID == "" && q.State == "" && q.UpdatedAfter.IsZero() {
		page.TotalSize = b.list.Len()
	} else {
		b.list.Ascend(func(mt *memTask) bool {
			if mt.updated < oldest {
				return false
			}
			if matches(mt) {
				page.TotalSize++
			}
			return true
		})
	}
	walk := func(mt *memTask) bool {
		if mt.updated < oldest {
			return false
		}
		if !cur.after(mt.updated, mt.id()) || !matches(mt) {
			return true
		}
		if len(page.Tasks) == q.PageSize {
			page.NextPageToken = encodePageToken(q, page.Tasks[len(page.Tasks)-1])
			return false
		}
		page.Tasks = append(page.Tasks, mt.task())
		return true
	}
	if cur == nil {
		b.list.Ascend(walk)
	} else {
		b.list.AscendGreaterOrEqual(&memTask{ids: cur.ID, idLen: uint32(len(cur.ID)), updated: cur.Updated}, walk)
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
