package store

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/a2agate/gateway/internal/redistopo"
	"github.com/a2agate/gateway/internal/testnet"
	"github.com/a2agate/gateway/internal/testrace"
)

// A node that refuses connections, or breaks them, is counted by its
// address; one that serves is listed at zero.
func TestRedisNodeErrorsNameTheNode(t *testing.T) {
	t.Parallel()
	s, proxy, _ := openBehindFaultProxy(t, RedisConfig{
		DialTimeout: 300 * time.Millisecond, ReadTimeout: 300 * time.Millisecond, WriteTimeout: 300 * time.Millisecond})
	ctx := context.Background()
	mustPut(t, s, Task{ID: "t", Owner: "o", Agent: "a", State: working})
	if got := s.NodeErrors(); len(got) != 1 || got[proxy.addr] != 0 {
		t.Fatalf("NodeErrors while Redis serves = %v; want %s at 0", got, proxy.addr)
	}
	var last uint64
	for _, mode := range []faultMode{reset, refuse, blackhole} {
		proxy.setMode(mode)
		if _, err := s.Get(ctx, "a", "t"); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("%s: Get = %v; want ErrUnavailable", mode, err)
		}
		got := s.NodeErrors()
		if len(got) != 1 || got[proxy.addr] <= last {
			t.Fatalf("%s: NodeErrors = %v; want more failures of %s than %d", mode, got, proxy.addr, last)
		}
		last = got[proxy.addr]
		proxy.setMode(forward)
	}
}

// A connection's socket is handed to go-redis's health check, which peeks
// at it before each command from the pool, as one handle made when the
// connection was: a handle made per check would be an allocation each.
func TestCountedConnSocketHandle(t *testing.T) {
	ln := testnet.Listen(t)
	go func() {
		if c, err := ln.Accept(); err == nil {
			defer c.Close()
			io.Copy(io.Discard, c)
		}
	}()
	d := &nodeDialer{net: net.Dialer{Timeout: time.Second}, log: slog.Default(), logs: map[string]time.Time{},
		nodes: &nodeErrors{nodes: map[string]*atomic.Uint64{}}}
	conn, err := d.dial(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	sc, ok := conn.(syscall.Conn)
	if !ok {
		t.Fatalf("a connection to a node (%T) gives no socket to go-redis's health check", conn)
	}
	fdOf := func(sc syscall.Conn) uintptr {
		t.Helper()
		raw, err := sc.SyscallConn()
		if err != nil {
			t.Fatal(err)
		}
		var fd uintptr
		if err := raw.Control(func(f uintptr) { fd = f }); err != nil {
			t.Fatal(err)
		}
		return fd
	}
	if got, want := fdOf(sc), fdOf(conn.(*countedConn).Conn.(*net.TCPConn)); got != want {
		t.Fatalf("the handle is of socket %d, want the connection's, %d", got, want)
	}
	if testrace.Enabled {
		return
	}
	if n := testing.AllocsPerRun(100, func() { sc.SyscallConn() }); n != 0 {
		t.Errorf("SyscallConn allocated %.0f times a call, want 0: one handle per connection", n)
	}
}

// A pooled connection that Redis closed while it was idle is found by the
// health check (a peek at its socket) and replaced before a command is
// sent on it, so that it never counts as a broken connection of the node.
func TestRedisIdleConnClosedByNode(t *testing.T) {
	t.Parallel()
	node := redistopo.StartPlain(t)
	admin := clientOf(t, node.Addr)
	s := openRedisStore(t, RedisConfig{Address: node.Addr, KeyPrefix: freshPrefix()})
	ctx := context.Background()
	mustPut(t, s, Task{ID: "t", Owner: "o", Agent: "a", State: working})
	if err := admin.Do(ctx, "CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes").Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "a", "t"); err != nil {
		t.Fatalf("Get after Redis closed the idle connections = %v", err)
	}
	if got := s.NodeErrors()[node.Addr]; got != 0 {
		t.Errorf("NodeErrors = %d after Redis closed an idle connection, want 0: the health check did not see it", got)
	}
}
