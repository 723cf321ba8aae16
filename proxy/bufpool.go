package proxy

import (
	"math/bits"
	"sync"
)

// Every unary call reads a request body and a backend reply and writes an
// answer, each a few KiB; taking those buffers from a pool instead of the
// heap removes most of the bytes a call allocates, and with them most of
// the garbage collector's work under load. Buffers come in power-of-two
// sizes, each size its own pool, so that a stream, which keeps its request
// for as long as it is open, keeps no more room than the request needs.

const (
	minBufferShift = 10 // 1 KiB
	maxBufferShift = 20 // 1 MiB: a rare larger body is not kept for reuse
)

var bufferPools [maxBufferShift - minBufferShift + 1]sync.Pool

// bufferClass is the pool whose buffers hold n bytes: the smallest power
// of two at least n (and at least 1 KiB), or -1 beyond the largest.
func bufferClass(n int) int {
	shift := minBufferShift
	if n > 1<<minBufferShift {
		shift = bits.Len(uint(n - 1))
	}
	if shift > maxBufferShift {
		return -1
	}
	return shift - minBufferShift
}

// buffer lends the call an empty buffer with room for at least n bytes. The
// call gives it back once it has been answered, so everything built on the
// buffer (ids, results, error objects viewed in it) must be written to the
// caller or copied before then; the task index clones what it keeps. Store
// the buffer back through the pointer when it grows, so the larger one is
// what returns to the pool.
func (c *call) buffer(n int) *[]byte {
	p := borrowBuffer(n)
	c.lent = append(c.lent, p)
	return p
}

// borrowBuffer takes an empty buffer with room for at least n bytes from
// the pool of its size. Work whose bytes nothing keeps (a send's digest)
// gives it back at once with returnBuffer, not with the call's buffers:
// a stream keeps those for as long as it is open.
func borrowBuffer(n int) *[]byte {
	var p *[]byte
	if class := bufferClass(n); class >= 0 {
		p, _ = bufferPools[class].Get().(*[]byte)
		if p == nil {
			b := make([]byte, 0, 1<<(class+minBufferShift))
			p = &b
		}
	} else {
		b := make([]byte, 0, n)
		p = &b
	}
	*p = (*p)[:0]
	return p
}

// returnBuffer gives a borrowed buffer back to the pool its capacity
// fills; one too large or too small for every pool is left to the
// collector.
func returnBuffer(p *[]byte) {
	// A buffer that grew goes to the class its capacity fills.
	if size := cap(*p); size >= 1<<minBufferShift && size <= 1<<maxBufferShift {
		bufferPools[bits.Len(uint(size))-1-minBufferShift].Put(p)
	}
}

// giveBack returns the call's buffers to the pool of their size.
func (c *call) giveBack() {
	for i, p := range c.lent {
		returnBuffer(p)
		c.lent[i] = nil
	}
	c.lent = c.lent[:0]
}

// keep records out as the content of the lent buffer p when a function
// writing over p's buffer returned it (or grew it), and not its input in:
// so a grown buffer is the one given back.
func keep(p *[]byte, out, in []byte) {
	if len(out) > 0 && (len(in) == 0 || &out[0] != &in[0]) {
		*p = out
	}
}
