package proxy

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"

	"github.com/a2agate/gateway/bench/canned"
	"github.com/a2agate/gateway/internal/testnet"
	"github.com/a2agate/gateway/telemetry"
)

// BenchmarkTracingCost is a 0.3→1.0 send untraced, with export off (the
// caller's trace context passed on), traced at ratio 1 exporting over
// OTLP/HTTP and gRPC to an in-process collector that discards the spans,
// and with export on at ratio 0 (no call sampled, so none recorded):
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
		{"export-grpc", func(tb testing.TB) *telemetry.Config { return exportConfig(tb, telemetry.ProtocolGRPC) }},
		{"ratio-0", unsampledConfig},
	} {
		b.Run(tc.name, func(b *testing.B) {
			// record-only: spans recorded and batched as with export, the
			// batches discarded in place of the exporter's work.
			bc := benchCase{op: canned.Send, caller: canned.V03, backend: canned.V10, tracing: tc.name == "record-only"}
			if tc.cfg != nil {
				bc.newTracing = setupTracing(tc.cfg)
			}
			benchServe(b, bc)
		})
	}
}

// An unsampled call, with export on, pays for passing the trace on but
// records nothing: no span is started under it and none is queued.
// Measured: 5 allocations a send more than untraced (the non-recording
// span, the context holding it, the request given that context, the
// backend's traceparent and the header slice holding it).
func TestUnsampledCallAllocs(t *testing.T) {
	skipAllocBudgets(t)
	perCall := func(bc benchCase) float64 {
		h := newBenchHarness(t, bc)
		h.check(t)
		return testing.AllocsPerRun(200, h.serve)
	}
	bc := benchCase{op: canned.Send, caller: canned.V03, backend: canned.V10}
	untraced := perCall(bc)
	bc.newTracing = setupTracing(unsampledConfig)
	unsampled := perCall(bc)
	t.Logf("%.1f allocations per send untraced, %.1f unsampled", untraced, unsampled)
	if unsampled > untraced+6 {
		t.Errorf("an unsampled send allocates %.1f times, %.1f more than untraced: over the 6 of passing its trace on", unsampled, unsampled-untraced)
	}
}

// setupTracing is a benchCase's newTracing for the tracing cfg makes.
func setupTracing(cfg func(testing.TB) *telemetry.Config) func(testing.TB) *telemetry.Tracing {
	return func(tb testing.TB) *telemetry.Tracing {
		c := cfg(tb)
		c.SetDefaults()
		if err := c.Validate(); err != nil {
			tb.Fatal(err)
		}
		tr, err := telemetry.Setup(context.Background(), *c, nil)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { _ = tr.Shutdown(context.Background()) })
		return tr
	}
}

// unsampledConfig exports spans, but samples no new trace.
func unsampledConfig(tb testing.TB) *telemetry.Config {
	cfg, none := exportConfig(tb, telemetry.ProtocolHTTP), 0.0
	cfg.SampleRatio = &none
	return cfg
}

// exportConfig exports every span over protocol to an in-process collector
// that takes each export and discards it.
func exportConfig(tb testing.TB, protocol string) *telemetry.Config {
	one := 1.0
	cfg := &telemetry.Config{Enabled: true, SampleRatio: &one, OTLP: telemetry.OTLPConfig{Protocol: protocol}}
	if protocol == telemetry.ProtocolGRPC {
		l := testnet.Listen(tb)
		srv := grpc.NewServer(grpc.ForceServerCodec(discardCodec{}))
		collectortrace.RegisterTraceServiceServer(srv, discardCollector{})
		go func() { _ = srv.Serve(l) }()
		tb.Cleanup(srv.Stop)
		cfg.OTLP.Endpoint, cfg.OTLP.Insecure = l.Addr().String(), true
		return cfg
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	tb.Cleanup(srv.Close)
	cfg.OTLP.Endpoint = srv.URL
	return cfg
}

// discardCollector is an OTLP/gRPC collector that takes every export.
type discardCollector struct {
	collectortrace.UnimplementedTraceServiceServer
}

// discardCodec reads no export, as the HTTP collector reads none: the
// process's count is then the exporter's alone, not a collector's decoding
// beside it. The collector's answer, an empty message, is no bytes.
type discardCodec struct{}

func (discardCodec) Marshal(any) ([]byte, error) { return nil, nil }
func (discardCodec) Unmarshal([]byte, any) error { return nil }
func (discardCodec) Name() string                { return "proto" }

func (discardCollector) Export(context.Context, *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	return &collectortrace.ExportTraceServiceResponse{}, nil
}
