package store

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/a2agate/gateway/internal/testnet"
	"github.com/a2agate/gateway/internal/testredis"
)

// faultMode is how a faultProxy treats connections.
type faultMode int

const (
	forward   faultMode = iota // relay to Redis
	refuse                     // no listener: connections are refused
	reset                      // accept, then close at once
	blackhole                  // accept and never answer
)

func (m faultMode) String() string {
	return [...]string{"forward", "refuse", "reset", "blackhole"}[m]
}

// faultProxy is a TCP proxy in front of Redis that a test can cut and
// restore, to see the store fail closed and recover.
type faultProxy struct {
	t      *testing.T
	addr   string
	target string

	mu    sync.Mutex
	mode  faultMode
	ln    net.Listener
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

// openBehindFaultProxy opens a Redis store with cfg's timeouts, on a fake
// clock, reaching the test Redis through a fault proxy.
func openBehindFaultProxy(t *testing.T, cfg RedisConfig) (*Redis, *faultProxy, *fakeClock) {
	t.Helper()
	proxy := startFaultProxy(t, testredis.Addr(t))
	clock := newFakeClock()
	cfg.Address, cfg.KeyPrefix, cfg.now = proxy.addr, testPrefix(t), clock.Now
	return openRedisStore(t, cfg), proxy, clock
}

func startFaultProxy(t *testing.T, target string) *faultProxy {
	ln := testnet.Listen(t)
	p := &faultProxy{t: t, addr: ln.Addr().String(), target: target, conns: map[net.Conn]struct{}{}}
	p.serve(ln)
	t.Cleanup(func() {
		p.setMode(refuse)
		p.wg.Wait()
	})
	return p
}

func (p *faultProxy) serve(ln net.Listener) {
	p.ln = ln
	p.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.handle(c)
		}
	})
}

func (p *faultProxy) handle(c net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch p.mode {
	case reset, refuse:
		c.Close()
	case blackhole:
		p.conns[c] = struct{}{}
	case forward:
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			return
		}
		p.conns[c], p.conns[up] = struct{}{}, struct{}{}
		relay := func(dst, src net.Conn) {
			io.Copy(dst, src)
			dst.Close()
			src.Close()
		}
		p.wg.Go(func() { relay(up, c) })
		p.wg.Go(func() { relay(c, up) })
	}
}

// setMode switches modes, dropping every open connection.
func (p *faultProxy) setMode(m faultMode) {
	p.mu.Lock()
	prev := p.mode
	p.mode = m
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
	ln := p.ln
	p.mu.Unlock()
	switch {
	case m == refuse && prev != refuse:
		ln.Close()
	case m != refuse && prev == refuse:
		// Take the same port again: the store keeps its address.
		ln, err := net.Listen("tcp", p.addr)
		if err != nil {
			p.t.Fatalf("re-listening on %s: %v", p.addr, err)
		}
		p.mu.Lock()
		p.serve(ln)
		p.mu.Unlock()
	}
}

// TestRedisFailsClosedAndRecovers cuts the path to Redis in several ways:
// every call must fail with ErrUnavailable within the configured timeouts,
// and once the path is back the same store must work again.
func TestRedisFailsClosedAndRecovers(t *testing.T) {
	t.Parallel()
	cfg := RedisConfig{
		DialTimeout:  400 * time.Millisecond,
		ReadTimeout:  250 * time.Millisecond,
		WriteTimeout: 250 * time.Millisecond,
	}
	s, proxy, _ := openBehindFaultProxy(t, cfg)
	// One try and one retry, each dialling, writing and reading, plus the
	// client's retry backoff (at most 512ms) and scheduling slack.
	bound := 2*(cfg.DialTimeout+cfg.WriteTimeout+cfg.ReadTimeout) + time.Second

	mustPut(t, s, Task{ID: "before", ContextID: "c", Owner: "alice", Agent: "a", State: working})
	calls := []struct {
		name string
		call func(context.Context) error
	}{
		{"Ping", s.Ping},
		{"Put", func(ctx context.Context) error {
			return s.Put(ctx, Task{ID: "during", Owner: "alice", Agent: "a"})
		}},
		{"Get", func(ctx context.Context) error { _, err := s.Get(ctx, "a", "before"); return err }},
		{"ContextOwner", func(ctx context.Context) error { _, err := s.ContextOwner(ctx, "a", "c"); return err }},
		{"List", func(ctx context.Context) error {
			_, err := s.List(ctx, Query{Agent: "a", Owner: "alice", PageSize: 10})
			return err
		}},
		{"Len", func(ctx context.Context) error { _, err := s.Len(ctx); return err }},
	}

	for _, mode := range []faultMode{refuse, reset, blackhole} {
		t.Run(mode.String(), func(t *testing.T) {
			proxy.setMode(mode)
			// Several rounds, so that the client's dial breaker (open after
			// a pool's worth of failed dials) is part of what must recover.
			for round := range 3 {
				for _, c := range calls {
					start := time.Now()
					err := c.call(context.Background())
					if elapsed := time.Since(start); elapsed > bound {
						t.Errorf("round %d: %s took %v with Redis cut off, want at most %v", round, c.name, elapsed, bound)
					}
					if !errors.Is(err, ErrUnavailable) {
						t.Fatalf("round %d: %s with Redis cut off = %v, want ErrUnavailable", round, c.name, err)
					}
				}
			}

			proxy.setMode(forward)
			// Reconnecting is up to the client (its dial breaker probes once
			// a second), so poll, with a deadline, for Redis to be back.
			deadline := time.Now().Add(10 * time.Second)
			for err := s.Ping(context.Background()); err != nil; err = s.Ping(context.Background()) {
				if time.Now().After(deadline) {
					t.Fatalf("store did not recover after Redis came back: %v", err)
				}
				time.Sleep(50 * time.Millisecond)
			}
			for _, c := range calls {
				if err := c.call(context.Background()); err != nil {
					t.Errorf("%s after recovery = %v", c.name, err)
				}
			}
			if got := mustGet(t, s, "a", "before"); got.Owner != "alice" {
				t.Errorf("Get(before) after recovery = %+v", got)
			}
		})
	}
}
