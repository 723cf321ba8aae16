package proxy

import "sync"

// Every unary call reads a request body and a backend reply and writes an
// answer, each a few KiB; taking those buffers from a pool instead of the
// heap removes most of the bytes a call allocates, and with them most of
// the garbage collector's work under load.

const (
	// minPooledBuffer is the smallest buffer handed out: most calls fit.
	minPooledBuffer = 8 << 10
	// maxPooledBuffer keeps a rare large body from being held forever.
	maxPooledBuffer = 1 << 20
)

var bufferPool = sync.Pool{New: func() any { return new([]byte) }}

// buffer lends the call an empty buffer with room for at least n bytes. The
// call gives it back once it has been answered, so everything built on the
// buffer (ids, results, error objects viewed in it) must be written to the
// caller or copied before then; the task index clones what it keeps. Store
// the buffer back through the pointer when it grows, so the larger one is
// what returns to the pool.
func (c *call) buffer(n int) *[]byte {
	p := bufferPool.Get().(*[]byte)
	if cap(*p) < n {
		*p = make([]byte, 0, max(n, minPooledBuffer))
	}
	*p = (*p)[:0]
	c.lent = append(c.lent, p)
	return p
}

// giveBack returns the call's buffers to the pool.
func (c *call) giveBack() {
	for i, p := range c.lent {
		if cap(*p) <= maxPooledBuffer {
			bufferPool.Put(p)
		}
		c.lent[i] = nil
	}
	c.lent = c.lent[:0]
}
