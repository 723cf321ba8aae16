package proxy

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a2agate/gateway/dialect"
)

// TestPushDeliveryBodyThatNeverArrives: a backend that posts a delivery to
// its relay, with the relay's token, and never sends the body it declared
// is answered within server.read_timeout, saying so, and its connection
// is closed, as a caller's call is: the relay's read of a delivery is no
// wait without end.
func TestPushDeliveryBodyThatNeverArrives(t *testing.T) {
	checkNoLeak(t)
	g := newGatewayOpts(t, backends[1].handler(t, nil), backends[1].version, Options{ReadTimeout: 100 * time.Millisecond}, allowLoopback)
	rcv := newReceiver(t, 0)
	_, path, token := pushedTask(t, g, caller{dialect.V10}, dialect.Version10, rcv.url)
	conn, err := net.Dial("tcp", strings.TrimPrefix(strings.TrimSuffix(g.url, "/"), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// A guard against a hang, far past the configured limit.
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	partial := `{"statusUpdate":{`
	if _, err := io.WriteString(conn, "POST "+path+" HTTP/1.1\r\nHost: gateway.test\r\nContent-Type: application/json\r\nA2A-Notification-Token: "+token+
		"\r\nContent-Length: "+strconv.Itoa(1000)+"\r\n\r\n"+partial); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer to a delivery whose body never arrives: %v", err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(b), "server.read_timeout (100ms)") {
		t.Fatalf("HTTP %d %s, want 408 naming server.read_timeout", res.StatusCode, b)
	}
	if n, err := br.Read(make([]byte, 1)); err == nil {
		t.Fatalf("the connection stayed open (read %d bytes)", n)
	}
}
