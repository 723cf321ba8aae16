// Package testnet holds network fixtures for tests: a TCP relay that stands
// between the gateway and a real service, so a test can cut the service off
// and bring it back without touching the service itself, loopback
// listeners and refused addresses, and the measure of the stack an HTTP
// server's connections keep.
package testnet

import (
	"io"
	"net"
	"sync"
	"testing"
)

// Relay forwards TCP connections from Addr to a target address.
type Relay struct {
	t      testing.TB
	target string
	// Addr is where the relay listens (127.0.0.1, a free port).
	Addr  string
	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]bool
	wg    sync.WaitGroup
}

// NewRelay starts a relay to target; it stops when the test ends.
func NewRelay(t testing.TB, target string) *Relay {
	r := &Relay{t: t, target: target, conns: map[net.Conn]bool{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r.Addr = ln.Addr().String()
	r.serve(ln)
	t.Cleanup(func() { r.Cut(); r.wg.Wait() })
	return r
}

func (r *Relay) serve(ln net.Listener) {
	r.mu.Lock()
	r.ln = ln
	r.mu.Unlock()
	r.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", r.target)
			if err != nil {
				c.Close()
				continue
			}
			r.mu.Lock()
			r.conns[c], r.conns[up] = true, true
			r.mu.Unlock()
			pipe := func(dst, src net.Conn) {
				_, _ = io.Copy(dst, src)
				dst.Close()
				src.Close()
			}
			r.wg.Go(func() { pipe(up, c) })
			r.wg.Go(func() { pipe(c, up) })
		}
	})
}

// Cut refuses new connections and drops the open ones.
func (r *Relay) Cut() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ln != nil {
		r.ln.Close()
		r.ln = nil
	}
	for c := range r.conns {
		c.Close()
	}
	clear(r.conns)
}

// Restore accepts connections again, on the same address.
func (r *Relay) Restore() {
	ln, err := net.Listen("tcp", r.Addr)
	if err != nil {
		r.t.Fatalf("relay cannot listen on %s again: %v", r.Addr, err)
	}
	r.serve(ln)
}
