package proxy

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/debug"
	"strconv"
	"testing"

	"github.com/a2agate/gateway/bench/canned"
)

// callStackBudget is the goroutine stack a unary call may leave its
// connection with. Go sizes stacks in powers of two and keeps the size a
// goroutine's deepest call needed, so one frame too many doubles the stack
// of every connection: from 16 KiB to 32 KiB, 4 MiB more at 256
// connections.
const callStackBudget = 16 << 10

// TestCallStackBudget holds every unary call, through net/http's server,
// to a 16 KiB connection goroutine stack.
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
			if got := stackPerConnection(t, h.gw, h.req.Header, h.body); got > callStackBudget+callStackBudget/2 {
				t.Errorf("a call leaves its connection goroutine with a %d-byte stack; the budget is %d: a translation frame grew (see members in package normalize)", got, callStackBudget)
			}
		})
	}
}

// stackPerConnection is the stack memory each of 64 keep-alive connections
// holds after one call (header and body) through handler. The client side uses no
// goroutines, so what grows is the server's connection goroutines.
func stackPerConnection(t *testing.T, handler http.Handler, header http.Header, body []byte) uint64 {
	t.Helper()
	srv := httptest.NewServer(handler)
	defer srv.Close()
	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // no stack shrinking meanwhile
	var head bytes.Buffer
	head.WriteString("POST / HTTP/1.1\r\nHost: gateway.test\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n")
	if err := header.Write(&head); err != nil {
		t.Fatal(err)
	}
	head.WriteString("\r\n")
	request := append(head.Bytes(), body...)
	const n = 64
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		c, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Write(request); err != nil {
			t.Fatal(err)
		}
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, res.Body); err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("HTTP %d, %v", res.StatusCode, err)
		}
	}
	runtime.ReadMemStats(&after)
	return (after.StackInuse - before.StackInuse) / n
}
