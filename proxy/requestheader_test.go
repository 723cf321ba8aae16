package proxy

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/a2agate/gateway/dialect"
)

// TestBackendRequestHeaderLentPerCall: the backend request's header is the
// call's, lent from a pool; a call's second request to the backend (a
// subscribe that fetches the task first) carries nothing of its first, and
// the map goes back emptied when the call is answered.
func TestBackendRequestHeaderLentPerCall(t *testing.T) {
	seen := make(chan http.Header, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- r.Header.Clone()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	}))
	t.Cleanup(srv.Close)
	b, err := newBackend("b", BackendConfig{URL: srv.URL, ConnectTimeout: 5 * time.Second, ResponseHeaderTimeout: 5 * time.Second, MaxIdleConns: 2}, dialect.Version10, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.closeIdle)
	if _, ok := b.transport.(*h1Transport); !ok {
		t.Fatalf("an http backend must use the gateway's own transport, got %T", b.transport)
	}
	c := &call{backend: b}
	c.lent = c.lentInline[:0]
	send := func(in http.Header, stream bool) http.Header {
		t.Helper()
		r := httptest.NewRequest(http.MethodPost, "/", nil)
		r.Header = in
		res, err := b.post(context.Background(), r, c, "GetTask", []byte(`{"id":"t"}`), stream)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return <-seen
	}
	first := send(http.Header{"X-First": {"1"}}, false)
	second := send(http.Header{"X-Second": {"2"}}, true)
	if first.Get("X-First") != "1" || first.Get("Accept") != "application/json" {
		t.Fatalf("first request's header: %v", first)
	}
	if second.Get("X-First") != "" || second.Get("X-Second") != "2" || second.Get("Accept") != "text/event-stream" {
		t.Fatalf("second request's header holds the first's or lacks its own: %v", second)
	}
	lent := c.header
	c.giveBack()
	if c.header != nil || len(lent) != 0 {
		t.Fatalf("the header goes back to the pool emptied: still lent %v, holding %d fields", c.header != nil, len(lent))
	}
}
