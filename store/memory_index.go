package store

import (
	"slices"
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

// memBucket holds one (agent, owner)'s tasks sorted in List order, so that a
// page is a binary search and a short scan. Insertion costs a memmove, which
// is cheap next to the map operations of a Put at the sizes a Memory allows.
type memBucket struct {
	entries []*memEntry
}

func (b *memBucket) insert(e *memEntry) {
	i, _ := slices.BinarySearchFunc(b.entries, e, listOrder)
	b.entries = slices.Insert(b.entries, i, e)
}

// remove drops e, which must be in b with its current sort key.
func (b *memBucket) remove(e *memEntry) {
	i, found := slices.BinarySearchFunc(b.entries, e, listOrder)
	if !found || b.entries[i] != e {
		panic("store: task missing from its bucket")
	}
	b.entries = slices.Delete(b.entries, i, i+1)
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
