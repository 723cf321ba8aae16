package proxy

import (
	"io"
	"net"
	"sync"
	"testing"
)

// tcpRelay stands between the gateway and a real service so a test can cut
// the service off and bring it back without touching the service itself.
type tcpRelay struct {
	t      *testing.T
	target string
	addr   string
	mu     sync.Mutex
	ln     net.Listener
	conns  map[net.Conn]bool
	wg     sync.WaitGroup
}

func newTCPRelay(t *testing.T, target string) *tcpRelay {
	r := &tcpRelay{t: t, target: target, conns: map[net.Conn]bool{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r.addr = ln.Addr().String()
	r.serve(ln)
	t.Cleanup(func() { r.cut(); r.wg.Wait() })
	return r
}

func (r *tcpRelay) serve(ln net.Listener) {
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

// cut refuses new connections and drops the open ones.
func (r *tcpRelay) cut() {
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

// restore accepts connections again, on the same address.
func (r *tcpRelay) restore() {
	ln, err := net.Listen("tcp", r.addr)
	if err != nil {
		r.t.Fatalf("relay cannot listen on %s again: %v", r.addr, err)
	}
	r.serve(ln)
}
