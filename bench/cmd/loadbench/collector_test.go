package main

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

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
	// The counter's name and help are telemetry's to test; here only that
	// nothing was dropped.
	reg := prometheus.NewRegistry()
	reg.MustRegister(tr.Collector())
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	reasons := 0
	for _, f := range families {
		for _, m := range f.GetMetric() {
			if f.GetName() == "a2a_gateway_trace_spans_dropped_total" {
				reasons++
			}
			if v := m.GetCounter().GetValue(); v != 0 {
				t.Errorf("%s%v = %v, want 0", f.GetName(), m.GetLabel(), v)
			}
		}
	}
	if reasons == 0 {
		t.Fatal("no a2a_gateway_trace_spans_dropped_total series")
	}
}
