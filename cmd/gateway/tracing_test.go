package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/a2agate/gateway/legacyagent"
)

// metricLine returns the value of the admin listener's metric line that
// starts with prefix, or "".
func metricLine(t *testing.T, admin, prefix string) string {
	t.Helper()
	_, m := httpGet(t, admin+"/metrics")
	for _, line := range strings.Split(m, "\n") {
		if strings.HasPrefix(line, prefix+" ") {
			return strings.Fields(line)[1]
		}
	}
	return ""
}

// TestTracingSection: a gateway with tracing on starts, counts dropped
// spans on /metrics, and refuses a reload that changes tracing.
func TestTracingSection(t *testing.T) {
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer collector.Close()
	backend := startLegacyBackend(t)
	tracing := func(ratio string) string {
		return "tracing:\n  enabled: true\n  sample_ratio: " + ratio + "\n  otlp:\n    endpoint: " + collector.URL + "\n"
	}
	g := startGateway(t, gatewayConfig(backend.URL+"/", "First")+tracing("1"))
	for _, reason := range []string{"queue_full", "export_failed"} {
		if got := metricLine(t, g.admin, `a2a_gateway_trace_spans_dropped_total{reason="`+reason+`"}`); got != "0" {
			t.Errorf("dropped spans (%s) = %q, want 0", reason, got)
		}
	}
	rewriteConfig(t, g.path, []byte(gatewayConfig(backend.URL+"/", "Second")+tracing("0.5")))
	eventually(t, "the refused reload", func() bool {
		return metricLine(t, g.admin, `a2a_gateway_config_reloads_total{result="failure"}`) == "1"
	})
	if !strings.Contains(g.log.String(), "tracing settings change only with a restart") {
		t.Errorf("the refusal does not name tracing:\n%s", g.log.String())
	}
}

// TestExitBoundedWithSlowCollector: at shutdown the spans' last export
// keeps to the shutdown's bound (server.shutdown_timeout and the second
// the ended calls get): a stream held past the timeout, then a collector
// that never answers, do not hold the exit for another shutdown_timeout.
func TestExitBoundedWithSlowCollector(t *testing.T) {
	const shutdownTimeout = 3 * time.Second
	hung := make(chan struct{})
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hung:
		case <-r.Context().Done():
		}
	}))
	defer collector.Close()
	defer close(hung)
	hold := make(chan struct{})
	agent := legacyagent.New(legacyagent.Options{Hold: hold})
	defer agent.Close()
	backend := httptest.NewServer(agent)
	defer backend.Close()
	defer close(hold)
	config := strings.Replace(gatewayConfig(backend.URL+"/", "Traced"), "agents:", "server:\n  shutdown_timeout: "+shutdownTimeout.String()+"\nagents:", 1) +
		"tracing:\n  enabled: true\n  otlp:\n    endpoint: " + collector.URL + "\n"
	g := startGateway(t, config)
	res := openHeldStream(t, g.url)
	defer res.Body.Close()

	start := time.Now()
	g.stop()
	select {
	case err := <-g.done:
		g.done <- err // for the cleanup's check
		took := time.Since(start)
		t.Logf("exited %s after the stop", took.Round(time.Millisecond))
		if took > shutdownTimeout+endCallsGrace+time.Second {
			t.Errorf("the gateway took %s to exit with shutdown_timeout %s, a held stream and a hung collector", took, shutdownTimeout)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the gateway did not exit")
	}
}
