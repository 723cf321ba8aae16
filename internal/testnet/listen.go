package testnet

import (
	"io"
	"net"
	"net/http"
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

// RoundTrip sends req through client and reads the whole answer, closing
// its body; a transport or read error fails tb.
func RoundTrip(tb testing.TB, client *http.Client, req *http.Request) (*http.Response, []byte) {
	tb.Helper()
	res, err := client.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return res, b
}
