package proxy

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/a2agate/gateway/dialect"
)

// TestRESTSlowBodyCountsTowardCallerBound: a REST call whose body is
// still arriving is one of its caller's calls in flight. With
// max_calls_per_caller 1, alice's second call while her first one's body
// is unfinished is refused 429 RESOURCE_EXHAUSTED naming the setting; bob
// is not. Before, the REST front end read the body before the core
// counted the call, so a caller could hold any number of calls open
// uncounted.
func TestRESTSlowBodyCountsTowardCallerBound(t *testing.T) {
	g := newGatewayOpts(t, backends[1].handler(t, nil), dialect.Version10, Options{ReadTimeout: time.Minute}, withAuth(t),
		func(a *AgentConfig) { a.MaxCallsPerCaller = 1 })
	alice, bob := token(t, "alice"), token(t, "bob")
	conn, err := net.Dial("tcp", strings.TrimSuffix(strings.TrimPrefix(g.url, "http://"), "/"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	// net/http answers 100 Continue once the handler reads the body:
	// by then the call was admitted.
	_, _ = io.WriteString(conn, "POST /message:send HTTP/1.1\r\nHost: gateway.test\r\nContent-Type: application/json\r\n"+
		"Authorization: Bearer "+alice+"\r\nExpect: 100-continue\r\nContent-Length: 500\r\n\r\n")
	br := bufio.NewReader(conn)
	if line, err := br.ReadString('\n'); err != nil || !strings.Contains(line, "100 Continue") {
		t.Fatalf("want 100 Continue, got %q, %v", line, err)
	}
	_, _ = io.WriteString(conn, `{"message":{"messageId":"m1",`)

	for _, path := range []string{"/tasks/x", "/v1/tasks/x"} {
		status, h, body := restDo(t, g, "GET", path, "", "", alice)
		if status != http.StatusTooManyRequests || h.Get("Retry-After") != "1" ||
			!strings.Contains(body.Raw, "max_calls_per_caller") {
			t.Errorf("alice's second call %s: HTTP %d %s", path, status, body.Raw)
		}
		if path == "/tasks/x" && body.Get("error.status").Str != "RESOURCE_EXHAUSTED" {
			t.Errorf("alice's second call: %s", body.Raw)
		}
	}
	if status, _, body := restDo(t, g, "GET", "/tasks/x", "", "", bob); status != http.StatusNotFound {
		t.Errorf("bob: HTTP %d %s", status, body.Raw)
	}
	// A caller without a valid token is not counted: it is refused.
	if status, _, body := restDo(t, g, "GET", "/tasks/x", "", "", "not-a-token"); status != http.StatusUnauthorized {
		t.Errorf("no valid token: HTTP %d %s", status, body.Raw)
	}
}
