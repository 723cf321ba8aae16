package store

import (
	"slices"
	"sort"
	"strings"
	"time"
)

// memEntry is one task of a Memory, linked into its LRU list and held in its
// owner's bucket.
type memEntry struct {
	task       Task
	updated    int64 // task.Updated in microseconds: the sort key
	expires    time.Time
	prev, next *memEntry
}

// listOrder orders entries as List returns them: newest first, ties by ID.
func listOrder(a, b *memEntry) int {
	if a.updated != b.updated {
		if a.updated > b.updated {
			return -1
		}
		return 1
	}
	return strings.Compare(a.task.ID, b.task.ID)
}

// memBucket holds one (agent, owner)'s tasks sorted in List order, in
// blocks of a bounded size: a new task (newest, so first) or an update costs a
// move within one block and a search, not a move of the whole bucket. Without
// authentication every caller shares one bucket, so buckets of the index's
// full size (100,000 tasks by default) are the normal case.
type memBucket struct {
	blocks [][]*memEntry // each non-empty and sorted; block i entirely before block i+1
	n      int
}

// memBlockSize is the size at which a block splits in two.
const memBlockSize = 512

// memPos is a place in a bucket: a block and an offset in it.
type memPos struct{ block, off int }

func (b *memBucket) len() int { return b.n }

// blockFor returns the block e belongs in: the first whose last entry does
// not sort before e, else the last block.
func (b *memBucket) blockFor(e *memEntry) int {
	i := sort.Search(len(b.blocks), func(i int) bool {
		blk := b.blocks[i]
		return listOrder(blk[len(blk)-1], e) >= 0
	})
	return min(i, len(b.blocks)-1)
}

func (b *memBucket) insert(e *memEntry) {
	b.n++
	if len(b.blocks) == 0 {
		b.blocks = [][]*memEntry{{e}}
		return
	}
	bi := b.blockFor(e)
	blk := b.blocks[bi]
	i, _ := slices.BinarySearchFunc(blk, e, listOrder)
	blk = slices.Insert(blk, i, e)
	if len(blk) < 2*memBlockSize {
		b.blocks[bi] = blk
		return
	}
	half := len(blk) / 2
	tail := append(make([]*memEntry, 0, memBlockSize*2), blk[half:]...)
	b.blocks[bi] = blk[:half:half]
	b.blocks = slices.Insert(b.blocks, bi+1, tail)
}

// remove drops e, which must be in b with its current sort key.
func (b *memBucket) remove(e *memEntry) {
	if len(b.blocks) > 0 {
		bi := b.blockFor(e)
		blk := b.blocks[bi]
		if i, found := slices.BinarySearchFunc(blk, e, listOrder); found && blk[i] == e {
			blk = slices.Delete(blk, i, i+1)
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

// search returns the first position whose entry satisfies pred, which must
// be false and then true along the bucket; the end when none does.
func (b *memBucket) search(pred func(*memEntry) bool) memPos {
	bi := sort.Search(len(b.blocks), func(i int) bool {
		blk := b.blocks[i]
		return pred(blk[len(blk)-1])
	})
	if bi == len(b.blocks) {
		return memPos{block: bi}
	}
	blk := b.blocks[bi]
	return memPos{block: bi, off: sort.Search(len(blk), func(i int) bool { return pred(blk[i]) })}
}

// index returns p's position counted from the start of the bucket.
func (b *memBucket) index(p memPos) int {
	n := p.off
	for _, blk := range b.blocks[:p.block] {
		n += len(blk)
	}
	return n
}

// each calls fn on the entries from p on, in order, until fn returns false.
func (b *memBucket) each(p memPos, fn func(*memEntry) bool) {
	for bi := p.block; bi < len(b.blocks); bi++ {
		off := 0
		if bi == p.block {
			off = p.off
		}
		for _, e := range b.blocks[bi][off:] {
			if !fn(e) {
				return
			}
		}
	}
}

// memList is an intrusive doubly linked list of entries, oldest Put first.
// container/list would cost an extra allocation and a type assertion per
// entry.
type memList struct {
	head, tail *memEntry
}

func (l *memList) front() *memEntry { return l.head }

func (l *memList) pushBack(e *memEntry) {
	e.prev, e.next = l.tail, nil
	if l.tail != nil {
		l.tail.next = e
	} else {
		l.head = e
	}
	l.tail = e
}

func (l *memList) remove(e *memEntry) {
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		l.head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		l.tail = e.prev
	}
	e.prev, e.next = nil, nil
}
