package store

import (
	"errors"
	"hash/maphash"
	"slices"
	"sort"
	"strings"
)

// A full in-memory index holds 100,000 tasks by default. Kept as objects
// linked by pointers (an entry per task, map entries, list links, sorted
// pointer arrays), it was the largest thing the garbage collector had to
// walk on every cycle, and keeping its sorted arrays in order cost a write
// barrier per moved pointer while a cycle ran. So tasks live in one slice
// of slots that refer to each other by index; the lookup maps are keyed by
// hashes and hold indexes, and the sorted arrays hold indexes: none of
// those has a pointer in it. What a slot still points at is its id and
// context id, and strings shared by every task (backend, state).
//
// The lookups are chained hash tables over arrays of int32 heads, not Go
// maps: a map[uint64]int32 of 100,000 entries holds 24 to 37 bytes per
// entry (16-byte slots, control bytes, the room it grows into), a head
// array at most 8, and the index's heap is what the garbage collector's
// pacing doubles.

// noSlot is the index of no slot, bucket or context.
const noSlot = -1

// memSlot is one task, or a free slot (bucket == noSlot).
type memSlot struct {
	// key is the task id followed by its context id: one string, so one
	// allocation and one pointer per task.
	key            string
	idLen          uint32
	backend, state uint16 // in the slab's names
	updated        int64  // status time in Unix microseconds: the list order
	expires        int64  // Unix nanoseconds
	bucket         int32  // the (agent, owner) bucket
	ctx            int32  // the context record; noSlot when the task has none
	hashNext       int32  // the next slot in the same lookup chain
	prev, next     int32  // the LRU list, least recently put first; next also links free slots
}

func (sl *memSlot) id() string        { return sl.key[:sl.idLen] }
func (sl *memSlot) contextID() string { return sl.key[sl.idLen:] }

// memContext remembers a context's owner while any task in it is alive:
// the bucket of the task that opened it (agent and owner), which stays
// while any context refers to it; the context id is shared with that
// task's key.
type memContext struct {
	contextID string
	bucket    int32
	tasks     int32
	hashNext  int32 // the next context in the same lookup chain, or the next free one
}

// memBucket holds one (agent, owner)'s tasks, as slot indexes, sorted in
// List order, in blocks of a bounded size: a new task (newest, so first)
// or an update costs a move within one block and a search, not a move of
// the whole bucket. Without authentication every caller shares one bucket,
// so buckets of the index's full size are the normal case.
type memBucket struct {
	agent, owner string
	blocks       [][]int32 // each non-empty and sorted; block i entirely before block i+1
	n            int
	contexts     int // contexts whose owner this bucket names
}

// memBlockSize is the size at which a block splits in two.
const memBlockSize = 512

// memPos is a place in a bucket: a block and an offset in it.
type memPos struct{ block, off int }

// slab is the storage of a Memory's tasks and contexts and the lookups
// into them. Its methods expect the Memory's lock held.
type slab struct {
	seed     maphash.Seed
	slots    chunked[memSlot]
	freeSlot int32
	tasks    chainHeads // hash of (agent, id) to the first slot of its chain
	count    int
	lruHead  int32
	lruTail  int32

	contexts    chunked[memContext]
	freeContext int32
	contextIDs  chainHeads // hash of (agent, context id) to the first context of its chain
	liveCtx     int

	buckets    []*memBucket
	freeBucket []int32
	bucketIDs  map[bucketKey]int32

	// names holds the backend names and states, a handful of values that
	// every task repeats.
	names   []string
	nameIDs map[string]uint16
}

type (
	taskKey    struct{ agent, id string }
	bucketKey  struct{ agent, owner string }
	contextKey struct{ agent, contextID string }
)

// newSlab makes the storage of an index of at most maxTasks tasks (and as
// many contexts), with lookup heads for up to presize of them at first.
func newSlab(maxTasks, presize int) slab {
	heads := min(maxTasks, presize)
	return slab{
		seed:     maphash.MakeSeed(),
		freeSlot: noSlot, freeContext: noSlot, lruHead: noSlot, lruTail: noSlot,
		tasks: newChainHeads(heads), contextIDs: newChainHeads(heads), bucketIDs: map[bucketKey]int32{},
		names: []string{""}, nameIDs: map[string]uint16{"": 0},
	}
}

// maxPresizedHeads bounds the lookup heads made up front: the default index
// (100,000 tasks) never rehashes, and a much larger bound costs memory only
// as tasks arrive (the heads double, rehashing, as they fill).
const maxPresizedHeads = 1 << 17

// chainHeads maps a hash to the first element of its lookup chain, or
// noSlot: a power-of-two array of element indexes plus one, so that its
// zero value reads as no chain. A chain holds the elements whose hashes
// share their low bits; lookups compare the elements themselves.
type chainHeads struct {
	heads []int32
	mask  uint64
}

func newChainHeads(elements int) chainHeads {
	n := 1
	for n < elements {
		n <<= 1
	}
	return chainHeads{heads: make([]int32, n), mask: uint64(n - 1)}
}

func (c *chainHeads) head(h uint64) int32 { return c.heads[h&c.mask] - 1 }

func (c *chainHeads) setHead(h uint64, i int32) { c.heads[h&c.mask] = i + 1 }

// makeRoom doubles the heads, rechaining every element, when one more than
// count would make the chains longer than one element on average. hash
// returns an element's hash, next its chain link.
func (c *chainHeads) makeRoom(count int, hash func(int32) uint64, next func(int32) *int32) {
	if count < len(c.heads) {
		return
	}
	old := c.heads
	*c = newChainHeads(2 * len(old))
	for _, head := range old {
		for i := head - 1; i != noSlot; {
			following := *next(i)
			h := hash(i)
			*next(i) = c.head(h)
			c.setHead(h, i)
			i = following
		}
	}
}

// errTooManyNames refuses a task whose backend name or state would be the
// 65,536th distinct one: backends come from the config and states from
// A2A's list, so only a caller's bug gets here.
var errTooManyNames = errors.New("put task: more than 65535 distinct backend names and states")

// name returns the number of a backend name or state, numbering it when new.
func (s *slab) name(v string) (uint16, error) {
	if n, ok := s.nameIDs[v]; ok {
		return n, nil
	}
	if len(s.names) > 1<<16-1 {
		return 0, errTooManyNames
	}
	n := uint16(len(s.names))
	s.names = append(s.names, v)
	s.nameIDs[v] = n
	return n, nil
}

// find returns the slot of agent's task id, or noSlot.
func (s *slab) find(agent, id string) int32 {
	for i := s.tasks.head(maphash.Comparable(s.seed, taskKey{agent, id})); i != noSlot; i = s.slots.at(i).hashNext {
		if sl := s.slots.at(i); sl.id() == id && s.buckets[sl.bucket].agent == agent {
			return i
		}
	}
	return noSlot
}

// task returns the Task slot i holds.
func (s *slab) task(i int32) Task {
	sl := s.slots.at(i)
	b := s.buckets[sl.bucket]
	return Task{ID: sl.id(), ContextID: sl.contextID(), Owner: b.owner, Agent: b.agent,
		Backend: s.names[sl.backend], State: s.names[sl.state], Updated: fromMicros(sl.updated)}
}

// add stores a new task, whose backend and state are numbered, and returns
// its slot.
func (s *slab) add(t Task, backend, state uint16, expires int64) int32 {
	i := s.freeSlot
	if i != noSlot {
		s.freeSlot = s.slots.at(i).next
	} else {
		i = s.slots.grow()
	}
	*s.slots.at(i) = memSlot{key: t.ID + t.ContextID, idLen: uint32(len(t.ID)), backend: backend, state: state,
		updated: t.Updated.UnixMicro(), expires: expires, bucket: s.bucketFor(t.Agent, t.Owner), ctx: noSlot, prev: noSlot, next: noSlot}
	s.tasks.makeRoom(s.count, s.taskHash, s.taskNext)
	h := maphash.Comparable(s.seed, taskKey{t.Agent, t.ID})
	s.slots.at(i).hashNext = s.tasks.head(h)
	s.tasks.setHead(h, i)
	s.bucketInsert(s.buckets[s.slots.at(i).bucket], i)
	s.setContext(i, t.Agent)
	s.lruPushBack(i)
	s.count++
	return i
}

// addContextID gives slot i, whose task had no context id, one.
func (s *slab) addContextID(i int32, agent, contextID string) {
	sl := s.slots.at(i)
	sl.key = sl.id() + contextID
	s.setContext(i, agent)
}

// setContext counts slot i in its context, which the slot's owner claims
// if it is new.
func (s *slab) setContext(i int32, agent string) {
	contextID := s.slots.at(i).contextID()
	if contextID == "" {
		return
	}
	bucket := s.slots.at(i).bucket
	s.contextIDs.makeRoom(s.liveCtx, s.contextHash, s.contextNext)
	h := maphash.Comparable(s.seed, contextKey{agent, contextID})
	head := s.contextIDs.head(h)
	for c := head; c != noSlot; c = s.contexts.at(c).hashNext {
		if s.contexts.at(c).contextID == contextID && s.buckets[s.contexts.at(c).bucket].agent == agent {
			s.contexts.at(c).tasks++
			s.slots.at(i).ctx = c
			return
		}
	}
	c := s.freeContext
	if c != noSlot {
		s.freeContext = s.contexts.at(c).hashNext
	} else {
		c = s.contexts.grow()
	}
	*s.contexts.at(c) = memContext{contextID: contextID, bucket: bucket, tasks: 1, hashNext: head}
	s.buckets[bucket].contexts++
	s.contextIDs.setHead(h, c)
	s.slots.at(i).ctx = c
	s.liveCtx++
}

// contextOwner returns the owner of agent's context, or false.
func (s *slab) contextOwner(agent, contextID string) (string, bool) {
	for c := s.contextIDs.head(maphash.Comparable(s.seed, contextKey{agent, contextID})); c != noSlot; c = s.contexts.at(c).hashNext {
		if b := s.buckets[s.contexts.at(c).bucket]; s.contexts.at(c).contextID == contextID && b.agent == agent {
			return b.owner, true
		}
	}
	return "", false
}

// remove drops the task in slot i and frees what only it used.
func (s *slab) remove(i int32) {
	sl := s.slots.at(i)
	b := s.buckets[sl.bucket]
	s.unchain(&s.tasks, s.taskHash(i), i, s.taskNext)
	s.bucketRemove(b, i)
	if c := sl.ctx; c != noSlot {
		if s.contexts.at(c).tasks--; s.contexts.at(c).tasks == 0 {
			ctx := s.contexts.at(c)
			owner := ctx.bucket
			s.unchain(&s.contextIDs, s.contextHash(c), c, s.contextNext)
			*ctx = memContext{hashNext: s.freeContext}
			s.freeContext = c
			s.liveCtx--
			s.buckets[owner].contexts--
			s.dropBucketIfUnused(owner)
		}
	}
	s.dropBucketIfUnused(sl.bucket)
	s.lruRemove(i)
	*sl = memSlot{bucket: noSlot, ctx: noSlot, hashNext: noSlot, prev: noSlot, next: s.freeSlot}
	s.freeSlot = i
	s.count--
}

// dropBucketIfUnused frees bucket bi once it holds no task and names the
// owner of no context.
func (s *slab) dropBucketIfUnused(bi int32) {
	b := s.buckets[bi]
	if b == nil || b.n > 0 || b.contexts > 0 {
		return
	}
	delete(s.bucketIDs, bucketKey{b.agent, b.owner})
	s.buckets[bi] = nil
	s.freeBucket = append(s.freeBucket, bi)
}

func (s *slab) taskHash(i int32) uint64 {
	sl := s.slots.at(i)
	return maphash.Comparable(s.seed, taskKey{s.buckets[sl.bucket].agent, sl.id()})
}

func (s *slab) taskNext(i int32) *int32 { return &s.slots.at(i).hashNext }

func (s *slab) contextHash(c int32) uint64 {
	ctx := s.contexts.at(c)
	return maphash.Comparable(s.seed, contextKey{s.buckets[ctx.bucket].agent, ctx.contextID})
}

func (s *slab) contextNext(c int32) *int32 { return &s.contexts.at(c).hashNext }

// unchain takes i out of the lookup chain that starts at heads[h]; next
// returns the chain link of an element.
func (s *slab) unchain(heads *chainHeads, h uint64, i int32, next func(int32) *int32) {
	head := heads.head(h)
	if head == i {
		heads.setHead(h, *next(i))
		return
	}
	for j := head; j != noSlot; j = *next(j) {
		if *next(j) == i {
			*next(j) = *next(i)
			return
		}
	}
	panic("store: task missing from its lookup chain")
}

// bucketFor returns the bucket of (agent, owner), made if new.
func (s *slab) bucketFor(agent, owner string) int32 {
	k := bucketKey{agent, owner}
	if i, ok := s.bucketIDs[k]; ok {
		return i
	}
	b := &memBucket{agent: agent, owner: owner}
	var i int32
	if n := len(s.freeBucket); n > 0 {
		i = s.freeBucket[n-1]
		s.freeBucket = s.freeBucket[:n-1]
		s.buckets[i] = b
	} else {
		s.buckets = append(s.buckets, b)
		i = int32(len(s.buckets) - 1)
	}
	s.bucketIDs[k] = i
	return i
}

func (s *slab) lruPushBack(i int32) {
	s.slots.at(i).prev, s.slots.at(i).next = s.lruTail, noSlot
	if s.lruTail != noSlot {
		s.slots.at(s.lruTail).next = i
	} else {
		s.lruHead = i
	}
	s.lruTail = i
}

func (s *slab) lruRemove(i int32) {
	sl := s.slots.at(i)
	if sl.prev != noSlot {
		s.slots.at(sl.prev).next = sl.next
	} else {
		s.lruHead = sl.next
	}
	if sl.next != noSlot {
		s.slots.at(sl.next).prev = sl.prev
	} else {
		s.lruTail = sl.prev
	}
	sl.prev, sl.next = noSlot, noSlot
}

// listOrder orders slots as List returns them: newest first, ties by ID.
func (s *slab) listOrder(a, b int32) int {
	sa, sb := s.slots.at(a), s.slots.at(b)
	if sa.updated != sb.updated {
		if sa.updated > sb.updated {
			return -1
		}
		return 1
	}
	return strings.Compare(sa.id(), sb.id())
}

// blockFor returns the block slot i belongs in: the first whose last entry
// does not sort before it, else the last block.
func (s *slab) blockFor(b *memBucket, i int32) int {
	bi := sort.Search(len(b.blocks), func(k int) bool {
		blk := b.blocks[k]
		return s.listOrder(blk[len(blk)-1], i) >= 0
	})
	return min(bi, len(b.blocks)-1)
}

func (s *slab) bucketInsert(b *memBucket, i int32) {
	b.n++
	if len(b.blocks) == 0 {
		b.blocks = [][]int32{{i}}
		return
	}
	bi := s.blockFor(b, i)
	blk := b.blocks[bi]
	at, _ := slices.BinarySearchFunc(blk, i, s.listOrder)
	blk = slices.Insert(blk, at, i)
	if len(blk) < 2*memBlockSize {
		b.blocks[bi] = blk
		return
	}
	half := len(blk) / 2
	tail := append(make([]int32, 0, memBlockSize*2), blk[half:]...)
	b.blocks[bi] = blk[:half:half]
	b.blocks = slices.Insert(b.blocks, bi+1, tail)
}

// bucketRemove drops slot i, which must be in b with its current sort key.
func (s *slab) bucketRemove(b *memBucket, i int32) {
	if len(b.blocks) > 0 {
		bi := s.blockFor(b, i)
		blk := b.blocks[bi]
		if at, found := slices.BinarySearchFunc(blk, i, s.listOrder); found && blk[at] == i {
			blk = slices.Delete(blk, at, at+1)
			if len(blk) == 0 {
				b.blocks = slices.Delete(b.blocks, bi, bi+1)
			} else {
				b.blocks[bi] = blk
			}
			b.n--
			return
		}
	}
	panic("store: task missing from its bucket")
}

// search returns the first position in b whose slot satisfies pred, which
// must be false and then true along the bucket; the end when none does.
func (s *slab) search(b *memBucket, pred func(*memSlot) bool) memPos {
	bi := sort.Search(len(b.blocks), func(k int) bool {
		blk := b.blocks[k]
		return pred(s.slots.at(blk[len(blk)-1]))
	})
	if bi == len(b.blocks) {
		return memPos{block: bi}
	}
	blk := b.blocks[bi]
	return memPos{block: bi, off: sort.Search(len(blk), func(k int) bool { return pred(s.slots.at(blk[k])) })}
}

// index returns p's position counted from the start of the bucket.
func (b *memBucket) index(p memPos) int {
	n := p.off
	for _, blk := range b.blocks[:p.block] {
		n += len(blk)
	}
	return n
}

// each calls fn on the slots of b from p on, in order, until fn returns false.
func (b *memBucket) each(p memPos, fn func(int32) bool) {
	for bi := p.block; bi < len(b.blocks); bi++ {
		off := 0
		if bi == p.block {
			off = p.off
		}
		for _, i := range b.blocks[bi][off:] {
			if !fn(i) {
				return
			}
		}
	}
}

// chunked is an array that grows by fixed-size chunks: growing never copies
// or frees what it holds, so a filling index never holds its old and new
// arrays at once, and holds at most one chunk more than it uses.
type chunked[T any] struct {
	chunks [][]T
	n      int
}

const chunkShift = 12 // 4,096 elements a chunk

func (c *chunked[T]) at(i int32) *T {
	return &c.chunks[i>>chunkShift][i&(1<<chunkShift-1)]
}

// grow adds a zero element and returns its index.
func (c *chunked[T]) grow() int32 {
	if c.n == len(c.chunks)<<chunkShift {
		c.chunks = append(c.chunks, make([]T, 1<<chunkShift))
	}
	c.n++
	return int32(c.n - 1)
}

func (c *chunked[T]) len() int { return c.n }
