package testnet

import (
	"net"
	"testing"
)

// Listen is a TCP listener on a free loopback port, closed when tb ends
// (a server handed it may close it first).
func Listen(tb testing.TB) net.Listener {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = ln.Close() })
	return ln
}

// RefusedAddr is a loopback address nothing listens on, a port just freed,
// so that a dial to it is refused.
func RefusedAddr(tb testing.TB) string {
	tb.Helper()
	ln := Listen(tb)
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}
