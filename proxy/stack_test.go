package proxy

import (
	"net/http/httptest"
	"testing"

	"github.com/a2agate/gateway/bench/canned"
	"github.com/a2agate/gateway/internal/testnet"
)

// BenchmarkCallStack reports the goroutine stack a unary call leaves its
// connection with, through net/http's server: Go keeps the size a
// goroutine's deepest call needed, in powers of two, so a frame that grows
// can double every keep-alive connection's stack (16 KiB to 32 KiB is 4 MiB
// more at 256 connections). Each iteration is one call on each of 64 new
// keep-alive connections. A figure to watch, not a budget: the race
// detector and compiler inlining both move it.
func BenchmarkCallStack(b *testing.B) {
	for _, bc := range benchCases() {
		if bc.op == canned.Stream {
			continue
		}
		b.Run(bc.name(), func(b *testing.B) {
			h := newBenchHarness(b, bc)
			h.check(b)
			srv := httptest.NewServer(h.gw)
			defer srv.Close()
			request := testnet.Post(b, h.req.Header, h.body)
			var stack uint64
			for b.Loop() {
				stack = max(stack, testnet.StackPerConnection(b, srv.Listener.Addr().String(), request))
			}
			b.ReportMetric(float64(stack), "stack-B/conn")
		})
	}
}
