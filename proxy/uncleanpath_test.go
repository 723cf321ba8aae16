package proxy

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/testnet"
)

// TestUncleanPathsAnswered: a path ServeMux would redirect to its clean
// form (an empty segment, ".", "..") gets a 404 in the caller's binding's
// form naming the clean path, JSON-RPC's on an agent's JSON-RPC path, the
// REST Status elsewhere (the 0.3 routes' form under /v1/), never a
// redirect with an HTML body, and is not served.
func TestUncleanPathsAnswered(t *testing.T) {
	var calls atomic.Int32
	back := backends[1].handler(t, nil)
	root := newGateway(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			calls.Add(1)
		}
		back.ServeHTTP(w, r)
	}), dialect.Version10)
	gw, err := NewGateway([]*Agent{idleAgent(t, "a", "/a2a"), idleAgent(t, "b", "/b/")})
	if err != nil {
		t.Fatal(err)
	}
	multi := httptestServer(t, gw)
	noRedirects := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	const (
		jsonrpc = "jsonrpc"
		rest10  = "rest"
		rest03  = "rest 0.3"
	)
	for _, tc := range []struct {
		base, method, path, form, clean string
	}{
		{root.url, "POST", "//", jsonrpc, "/"},
		{root.url, "POST", "/./", jsonrpc, "/"},
		{root.url, "POST", "//message:send", rest10, "/message:send"},
		{root.url, "GET", "/tasks/..", rest10, "/"},
		{root.url, "GET", "/tasks//x", rest10, "/tasks/x"},
		{root.url, "GET", "//.well-known/agent-card.json", rest10, "/.well-known/agent-card.json"},
		{root.url, "GET", "/v1//tasks/x", rest03, "/v1/tasks/x"},
		{multi, "POST", "//a2a", jsonrpc, "/a2a"},
		{multi, "POST", "/./a2a", jsonrpc, "/a2a"},
		{multi, "POST", "/b/./", jsonrpc, "/b/"},
		{multi, "POST", "/a2a/../x", rest10, "/x"},
		{multi, "POST", "/a2a//message:send", rest10, "/a2a/message:send"},
		{multi, "GET", "/a2a/v1/./card", rest03, "/a2a/v1/card"},
		{multi, "PUT", "/b//", rest10, "/b/"},
	} {
		req, err := http.NewRequest(tc.method, strings.TrimSuffix(tc.base, "/")+tc.path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("A2A-Version", "1.0")
		res, b := testnet.RoundTrip(t, noRedirects, req)
		body := gjson.ParseBytes(b)
		var msg string
		ok := res.StatusCode == http.StatusNotFound && res.Header.Get("Content-Type") == "application/json" && res.Header.Get("Location") == ""
		switch tc.form {
		case jsonrpc:
			msg = body.Get("error.message").Str
			ok = ok && body.Get("jsonrpc").Str == "2.0" && body.Get("error.code").Int() == -32601 &&
				body.Get("error.data.0.reason").Str == "METHOD_NOT_FOUND"
		case rest10:
			msg = body.Get("error.message").Str
			ok = ok && body.Get("error.status").Str == "NOT_FOUND" && body.Get("error.details.0.reason").Str == "METHOD_NOT_FOUND"
		case rest03:
			msg = body.Get("message").Str
			ok = ok && body.Get("code").Int() == -32601
		}
		if !ok || !strings.Contains(msg, "not in canonical form") || !strings.Contains(msg, `"`+tc.clean+`"`) {
			t.Errorf("%s %s (%s): HTTP %d %q %s", tc.method, tc.path, tc.form, res.StatusCode, res.Header.Get("Content-Type"), b)
		}
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("the backend was called %d times", n)
	}

	// A request line in absolute form without a path has the empty path,
	// which ServeMux would redirect to "/".
	conn, err := net.Dial("tcp", strings.TrimSuffix(strings.TrimPrefix(multi, "http://"), "/"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	_, _ = io.WriteString(conn, "GET http://gateway.test HTTP/1.1\r\nHost: gateway.test\r\n\r\n")
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusNotFound || res.Header.Get("Content-Type") != "application/json" ||
		!strings.Contains(gjson.GetBytes(b, "error.message").Str, `"/"`) {
		t.Errorf("GET http://gateway.test: HTTP %d %q %s", res.StatusCode, res.Header.Get("Content-Type"), b)
	}
}
