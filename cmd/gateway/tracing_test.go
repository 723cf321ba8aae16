package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
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
