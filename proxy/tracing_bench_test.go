package proxy

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/a2agate/gateway/bench/canned"
	"github.com/a2agate/gateway/telemetry"
)

// BenchmarkTracingCost is a 0.3→1.0 send untraced, with export off (the
// caller's trace context passed on), and traced at ratio 1 exporting over
// OTLP/HTTP and gRPC to an in-process collector that discards the spans:
// what the load benchmark's tracing case costs, per request, in one
// process, for a CPU profile or callgrind; and recorded with the batches
// discarded, the share of it that is not the exporter's.
//
//	go test -run '^$' -bench TracingCost -benchmem ./proxy
func BenchmarkTracingCost(b *testing.B) {
	for _, tc := range []struct {
		name string
		cfg  func(testing.TB) *telemetry.Config // nil: no tracing
	}{
		{"untraced", nil},
		{"export-off", func(testing.TB) *telemetry.Config { return &telemetry.Config{} }},
		{"record-only", nil},
		{"export-http", func(tb testing.TB) *telemetry.Config { return exportConfig(tb, telemetry.ProtocolHTTP) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			// record-only: spans recorded and batched as with export, the
			// batches discarded in place of the exporter's work.
			bc := benchCase{op: canned.Send, caller: canned.V03, backend: canned.V10, tracing: tc.name == "record-only"}
			if tc.cfg != nil {
				bc.newTracing = func(tb testing.TB) *telemetry.Tracing {
					cfg := tc.cfg(tb)
					cfg.SetDefaults()
					if err := cfg.Validate(); err != nil {
						tb.Fatal(err)
					}
					tr, err := telemetry.Setup(context.Background(), *cfg, nil)
					if err != nil {
						tb.Fatal(err)
					}
					tb.Cleanup(func() { _ = tr.Shutdown(context.Background()) })
					return tr
				}
			}
			h := newBenchHarness(b, bc)
			h.check(b)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				h.serve()
			}
		})
	}
}

// exportConfig exports every span over protocol to an in-process collector
// that takes each export and discards it.
func exportConfig(tb testing.TB, protocol string) *telemetry.Config {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	tb.Cleanup(srv.Close)
	one := 1.0
	return &telemetry.Config{Enabled: true, SampleRatio: &one, OTLP: telemetry.OTLPConfig{Endpoint: srv.URL, Protocol: protocol}}
}
