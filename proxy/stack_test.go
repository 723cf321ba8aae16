package proxy

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/a2agate/gateway/bench/canned"
	"github.com/a2agate/gateway/internal/testnet"
)

// callStackBudget is the goroutine stack a unary call may leave its
// connection with. Go sizes stacks in powers of two and keeps the size a
// goroutine's deepest call needed, so one frame too many doubles the stack
// of every connection: from 16 KiB to 32 KiB, 4 MiB more at 256
// connections.
const callStackBudget = 16 << 10

// callStackHeadroom is what a call must leave of the budget, so that a
// frame that grows fails here before it doubles every connection's stack
// (a call fits with 1.5 KiB to spare today). cmd/gateway's
// TestConnectionStackBudget holds the shipped build, through the real
// server, logger and connection pool.
const callStackHeadroom = 1 << 10

// TestCallStackBudget holds every unary call, through net/http's server,
// to a 16 KiB connection goroutine stack with headroom to spare.
func TestCallStackBudget(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector deepens every frame: the budget holds without it")
	}
	for _, bc := range benchCases() {
		if bc.op == canned.Stream {
			continue
		}
		t.Run(bc.name(), func(t *testing.T) {
			h := newBenchHarness(t, bc)
			h.check(t)
			deeper := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				useStack(callStackHeadroom, func() { h.gw.ServeHTTP(w, r) })
			})
			srv := httptest.NewServer(deeper)
			defer srv.Close()
			if got := testnet.StackPerConnection(t, srv.Listener.Addr().String(), testnet.Post(t, h.req.Header, h.body)); got > callStackBudget+callStackBudget/2 {
				t.Errorf("a call %d bytes deeper than it is leaves its connection goroutine with a %d-byte stack; the budget is %d: a translation frame grew (see members in package normalize)", callStackHeadroom, got, callStackBudget)
			}
		})
	}
}

// TestStackBudgetHeadroomIsReal proves that useStack deepens a call: a
// handler that uses the whole budget through it leaves a larger stack.
func TestStackBudgetHeadroomIsReal(t *testing.T) {
	if raceEnabled {
		t.Skip("stack sizes differ under the race detector")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		useStack(callStackBudget, func() {})
	}))
	defer srv.Close()
	got := testnet.StackPerConnection(t, srv.Listener.Addr().String(), []byte("GET / HTTP/1.1\r\nHost: stack.test\r\n\r\n"))
	if got <= callStackBudget {
		t.Fatalf("a handler that used %d bytes of stack left a %d-byte stack", callStackBudget, got)
	}
}

// useStack calls f with at least n more bytes of stack in use than a
// direct call would have.
//
//go:noinline
func useStack(n int, f func()) byte {
	var pad [512]byte
	pad[n%len(pad)] = byte(n) // indexed at run time: the array stays on the frame
	if n <= len(pad) {
		f()
	} else {
		useStack(n-len(pad), f)
	}
	return pad[(n+1)%len(pad)]
}
