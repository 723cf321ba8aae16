package main

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/a2agate/gateway/telemetry"
)

// The tracing case's collector takes the gateway's exports: none fails.
func TestCollectorTakesExports(t *testing.T) {
	var b bench
	url, err := b.collectorURL()
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := b.collectorURL(); again != url {
		t.Fatalf("a second collector at %s, want the one at %s", again, url)
	}
	cfg := telemetry.Config{Enabled: true, OTLP: telemetry.OTLPConfig{Endpoint: url}}
	cfg.SetDefaults()
	tr, err := telemetry.Setup(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		_, span := tr.StartServer(context.Background(), "SendMessage")
		span.End()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tr.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(tr.Collector())
	want := `
# HELP a2a_gateway_trace_spans_dropped_total Spans not delivered to the OTLP collector, by reason: queue_full (the export queue was full when the span ended), export_failed (the collector refused the batch or did not answer in time).
# TYPE a2a_gateway_trace_spans_dropped_total counter
a2a_gateway_trace_spans_dropped_total{reason="export_failed"} 0
a2a_gateway_trace_spans_dropped_total{reason="queue_full"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}
