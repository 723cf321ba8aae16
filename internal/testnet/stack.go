package testnet

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"runtime"
	"runtime/debug"
	"strconv"
	"testing"
)

// StackPerConnection is the goroutine stack memory each of 64 keep-alive
// connections to the HTTP server at addr holds after one exchange of
// request (a whole HTTP/1.1 request, head and body). The client side uses
// no goroutines, so what grows is the server's connection goroutines: Go
// sizes stacks in powers of two and keeps the size a goroutine's deepest
// call needed, so one frame too many doubles every connection's stack.
func StackPerConnection(t testing.TB, addr string, request []byte) uint64 {
	t.Helper()
	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // no stack shrinking meanwhile
	const n = 64
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		c, err := net.Dial("tcp", addr)
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

// Post is a keep-alive HTTP/1.1 POST of body with header, as
// StackPerConnection sends it.
func Post(t testing.TB, header http.Header, body []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("POST / HTTP/1.1\r\nHost: gateway.test\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n")
	if err := header.Write(&b); err != nil {
		t.Fatal(err)
	}
	b.WriteString("\r\n")
	b.Write(body)
	return b.Bytes()
}
