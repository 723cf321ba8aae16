package telemetry

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/a2agate/gateway/internal/testlog"
)

// endSpans ends n spans and fails unless their End calls took less than a
// second in all: a collector that fails, named by collector, must not slow
// the calls that trace.
func endSpans(t *testing.T, tr *Tracing, n int, collector string) {
	t.Helper()
	var took time.Duration
	for range n {
		_, span := tr.StartServer(testCtx(t), "a2a SendMessage")
		start := time.Now()
		span.End()
		took += time.Since(start)
	}
	t.Logf("%d span.End calls with %s collector: %s", n, collector, took)
	if took > time.Second {
		t.Errorf("ending %d spans took %s with %s collector, want < 1s", n, took, collector)
	}
}

func dropped(tr *Tracing, reason string) int {
	return int(testutil.ToFloat64(tr.dropped.WithLabelValues(reason)))
}

// A collector that refuses every export costs a call nothing: ending the
// spans takes no time, every span lost is counted, and the failures are
// one log line, not one per export.
func TestRefusingCollectorDropsAndCounts(t *testing.T) {
	var logs testlog.Buffer
	cfg := Config{Enabled: true, OTLP: OTLPConfig{Endpoint: newReceiver(t, refuse).URL}, queueSize: 100}
	cfg.SetDefaults()
	tr, err := Setup(testCtx(t), cfg, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	endSpans(t, tr, 1000, "a refusing")
	if err := tr.Shutdown(testCtx(t)); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	full, failed := dropped(tr, "queue_full"), dropped(tr, "export_failed")
	if full+failed != 1000 || failed == 0 {
		t.Errorf("dropped: queue_full %d + export_failed %d, want 1000 with some export_failed", full, failed)
	}
	if n := strings.Count(logs.String(), "did not take spans"); n != 1 {
		t.Errorf("%d log lines about the failing collector, want 1:\n%s", n, logs.String())
	}
}

// A collector that never answers holds one batch; every span ending while
// the queue is full is dropped and counted, ending spans stays fast, and
// Shutdown gives up when its context ends.
func TestHangingCollectorDropsAndCounts(t *testing.T) {
	cfg := Config{Enabled: true, OTLP: OTLPConfig{Endpoint: newReceiver(t, hang).URL}, queueSize: 100, exportTimeout: time.Minute}
	tr := setup(t, cfg)
	endSpans(t, tr, 1000, "a hanging")
	// The gate lets at most queueSize spans in while none is exported.
	if got := dropped(tr, "queue_full"); got != 900 {
		t.Errorf("queue_full = %d, want 900 (1000 spans, a queue of 100)", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := tr.Shutdown(ctx)
	took := time.Since(start)
	t.Logf("Shutdown with a hanging collector and a 200ms bound: %s", took)
	if err == nil {
		t.Error("Shutdown reported no error while spans could not be exported")
	}
	if took > 5*time.Second {
		t.Errorf("Shutdown took %s past a 200ms bound", took)
	}
}

// The counter is registered under its documented name, both reasons
// present from the start, with export on or off.
func TestDroppedCounterRegistered(t *testing.T) {
	for _, enabled := range []bool{false, true} {
		tr := setup(t, Config{Enabled: enabled, OTLP: OTLPConfig{Endpoint: newReceiver(t, accept).URL}})
		reg := prometheus.NewRegistry()
		reg.MustRegister(tr.Collector())
		want := `
# HELP a2a_gateway_trace_spans_dropped_total Spans not delivered to the OTLP collector, by reason: queue_full (the export queue was full when the span ended), export_failed (the collector refused the batch or did not answer in time).
# TYPE a2a_gateway_trace_spans_dropped_total counter
a2a_gateway_trace_spans_dropped_total{reason="export_failed"} 0
a2a_gateway_trace_spans_dropped_total{reason="queue_full"} 0
`
		if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
			t.Errorf("enabled=%v: %v", enabled, err)
		}
	}
}
