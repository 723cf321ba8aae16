package store

import (
	"context"
	"errors"
	"maps"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
)

// NodeErrorCounter is a store that counts its failures by the backing
// node that failed, for a metric that names it.
type NodeErrorCounter interface {
	// NodeErrors returns, for each node address the store has connected
	// to or tried to, the failures seen so far: failed connects and
	// connections that broke or timed out.
	NodeErrors() map[string]uint64
}

var _ NodeErrorCounter = (*Redis)(nil)

// NodeErrors implements NodeErrorCounter. The addresses are those of the
// configuration and those Redis reported (a cluster's nodes, the primary
// a sentinel names), so the set stays as small as the deployment.
func (r *Redis) NodeErrors() map[string]uint64 { return r.nodes.snapshot() }

// nodeErrors counts failures per node address.
type nodeErrors struct {
	mu    sync.Mutex
	nodes map[string]*atomic.Uint64
}

func (n *nodeErrors) counter(addr string) *atomic.Uint64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	c, ok := n.nodes[addr]
	if !ok {
		c = new(atomic.Uint64)
		n.nodes[addr] = c
	}
	return c
}

func (n *nodeErrors) snapshot() map[string]uint64 {
	n.mu.Lock()
	nodes := maps.Clone(n.nodes)
	n.mu.Unlock()
	out := make(map[string]uint64, len(nodes))
	for addr, c := range nodes {
		out[addr] = c.Load()
	}
	return out
}

// countedConn is a connection to one node that counts its read and write
// failures against the node: a reset, a node that stopped answering within
// the timeouts. Closing it is not a failure.
type countedConn struct {
	net.Conn
	failures *atomic.Uint64
	broken   atomic.Bool // counted once per connection
	// socket is the connection's socket handle (nil with socketErr when
	// it has none), made once: go-redis asks for it before each command.
	socket    syscall.RawConn
	socketErr error
}

func newCountedConn(conn net.Conn, failures *atomic.Uint64) *countedConn {
	c := &countedConn{Conn: conn, failures: failures, socketErr: errors.ErrUnsupported}
	if sc, ok := conn.(syscall.Conn); ok {
		c.socket, c.socketErr = sc.SyscallConn()
	}
	return c
}

func (c *countedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if err != nil {
		c.failed(err)
	}
	return n, err
}

func (c *countedConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	if err != nil {
		c.failed(err)
	}
	return n, err
}

func (c *countedConn) failed(err error) {
	if errors.Is(err, net.ErrClosed) || errors.Is(err, context.Canceled) {
		return
	}
	if c.broken.CompareAndSwap(false, true) {
		c.failures.Add(1)
	}
}

// SyscallConn gives go-redis's pool the socket, which it peeks at to find
// connections the node closed while they were idle.
func (c *countedConn) SyscallConn() (syscall.RawConn, error) {
	return c.socket, c.socketErr
}
