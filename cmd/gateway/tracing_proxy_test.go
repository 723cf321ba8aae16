package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/a2agate/gateway/legacyagent"
)

// TestTracingReachesTheProxy: with tracing on, the agents trace their
// calls: the backend gets the caller's trace under a span of the gateway's,
// and the access log names the trace.
func TestTracingReachesTheProxy(t *testing.T) {
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer collector.Close()
	agent := legacyagent.New(legacyagent.Options{})
	defer agent.Close()
	var mu sync.Mutex
	var parents []string
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			mu.Lock()
			parents = append(parents, r.Header.Get("traceparent"))
			mu.Unlock()
		}
		agent.ServeHTTP(w, r)
	}))
	defer backend.Close()
	g := startGateway(t, gatewayConfig(backend.URL+"/", "Traced")+"tracing:\n  enabled: true\n  otlp:\n    endpoint: "+collector.URL+"\n")

	const traceID, callerSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	body := `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":"hi"}]}}}`
	req, err := http.NewRequest(http.MethodPost, g.url+"/", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("traceparent", "00-"+traceID+"-"+callerSpan+"-01")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("HTTP %d", res.StatusCode)
	}
	mu.Lock()
	got := append([]string(nil), parents...)
	mu.Unlock()
	if len(got) != 1 || !strings.HasPrefix(got[0], "00-"+traceID+"-") || strings.Contains(got[0], callerSpan) {
		t.Errorf("the backend got traceparent %q, want the caller's trace under a gateway span", got)
	}
	eventually(t, "the access-log line", func() bool {
		return strings.Contains(g.log.String(), `"msg":"call"`)
	})
	if !strings.Contains(g.log.String(), `"trace_id":"`+traceID+`"`) {
		t.Errorf("the access log does not name the trace:\n%s", g.log.String())
	}
}
