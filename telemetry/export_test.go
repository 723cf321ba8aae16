package telemetry

import (
	"bytes"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

const (
	callerTraceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	callerSpanID  = "00f067aa0ba902b7"
	callerParent  = "00-" + callerTraceID + "-" + callerSpanID + "-01"
)

func callerHeaders() http.Header {
	h := http.Header{}
	h.Set("traceparent", callerParent)
	h.Set("tracestate", "vendor=abc")
	h.Set("baggage", "tenant=acme")
	return h
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// exportOne ends one server span "a2a GetTask" and shuts tr down, which
// exports it before returning.
func exportOne(t *testing.T, tr *Tracing) {
	t.Helper()
	_, span := tr.StartServer(testCtx(t), "a2a GetTask")
	span.End()
	if err := tr.Shutdown(testCtx(t)); err != nil {
		t.Fatal(err)
	}
}

func setup(t *testing.T, cfg Config) *Tracing {
	t.Helper()
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	tr, err := Setup(testCtx(t), cfg, quietLog())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Shutdown(testCtx(t)) })
	return tr
}

func attrs(s *tracepb.Span) map[string]string {
	m := map[string]string{}
	for _, kv := range s.Attributes {
		v := kv.GetValue()
		switch {
		case v.GetStringValue() != "":
			m[kv.Key] = v.GetStringValue()
		default:
			m[kv.Key] = strings.TrimSpace(strings.TrimPrefix(v.String(), "int_value:"))
		}
	}
	return m
}

// A call's spans reach the collector with the service name, the caller's
// trace as parent, the client span under the server span, the attributes
// and the error status; the backend gets the client span as its parent.
func TestSpansExportedAsOneTrace(t *testing.T) {
	for _, protocol := range []string{ProtocolHTTP, ProtocolGRPC} {
		t.Run(protocol, func(t *testing.T) {
			var rc *receiver
			cfg := Config{Enabled: true, ServiceName: "gw-under-test"}
			cfg.OTLP.Protocol = protocol
			if protocol == ProtocolGRPC {
				var addr string
				rc, addr = newGRPCReceiver(t)
				cfg.OTLP.Endpoint, cfg.OTLP.Insecure = addr, true
			} else {
				rc = newReceiver(t, accept)
				cfg.OTLP.Endpoint = rc.URL
			}
			tr := setup(t, cfg)

			ctx := Extract(testCtx(t), callerHeaders())
			ctx, server := tr.StartServer(ctx, "a2a SendMessage", AttrMethod.String("SendMessage"), AttrCallerDialect.String("1.0"), AttrAgent.String("echo"))
			cctx, client := tr.StartClient(ctx, "a2a message/send", AttrBackendMethod.String("message/send"), AttrBackendDialect.String("0.3"))
			out := http.Header{}
			Inject(cctx, out)
			Fail(client, errors.New("backend answered 502"))
			client.SetAttributes(AttrJSONRPCCode.Int(-32603))
			client.End()
			server.SetAttributes(AttrOutcome.String("backend_error"), AttrTaskID.String("task-1"))
			server.End()

			wantParent := "00-" + callerTraceID + "-" + client.SpanContext().SpanID().String() + "-01"
			if got := out.Get("traceparent"); got != wantParent {
				t.Errorf("traceparent to the backend = %q, want %q (the client span)", got, wantParent)
			}
			if got := out.Get("tracestate"); got != "vendor=abc" {
				t.Errorf("tracestate to the backend = %q, want the caller's", got)
			}
			if got := out.Get("baggage"); got != "tenant=acme" {
				t.Errorf("baggage to the backend = %q, want the caller's", got)
			}
			if err := tr.Shutdown(testCtx(t)); err != nil {
				t.Fatalf("Shutdown: %v", err)
			}

			spans, services := rc.spans()
			if len(services) == 0 || services[0] != "gw-under-test" {
				t.Errorf("service.name = %v, want gw-under-test", services)
			}
			s, c := spans["a2a SendMessage"], spans["a2a message/send"]
			if s == nil || c == nil {
				t.Fatalf("spans received: %v, want a2a SendMessage and a2a message/send", spans)
			}
			for _, sp := range []*tracepb.Span{s, c} {
				if hex.EncodeToString(sp.TraceId) != callerTraceID {
					t.Errorf("%s: trace id %x, want the caller's", sp.Name, sp.TraceId)
				}
			}
			if hex.EncodeToString(s.ParentSpanId) != callerSpanID {
				t.Errorf("server span's parent %x, want the caller's span %s", s.ParentSpanId, callerSpanID)
			}
			if !bytes.Equal(c.ParentSpanId, s.SpanId) {
				t.Errorf("client span's parent %x, want the server span %x", c.ParentSpanId, s.SpanId)
			}
			if s.Kind != tracepb.Span_SPAN_KIND_SERVER || c.Kind != tracepb.Span_SPAN_KIND_CLIENT {
				t.Errorf("kinds: server %v, client %v", s.Kind, c.Kind)
			}
			if got := attrs(s); got["a2a.method"] != "SendMessage" || got["a2a.caller_dialect"] != "1.0" || got["a2a.agent"] != "echo" || got["a2a.outcome"] != "backend_error" || got["a2a.task_id"] != "task-1" {
				t.Errorf("server span attributes: %v", got)
			}
			if got := attrs(c); got["a2a.backend.method"] != "message/send" || got["a2a.backend_dialect"] != "0.3" || got["rpc.jsonrpc.error_code"] != "-32603" {
				t.Errorf("client span attributes: %v", got)
			}
			if c.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR || c.Status.GetMessage() != "backend answered 502" {
				t.Errorf("client span status: %v", c.Status)
			}
			if len(c.Events) != 1 || c.Events[0].Name != "exception" {
				t.Errorf("client span events: %v, want the recorded error", c.Events)
			}
			if s.Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR {
				t.Errorf("server span status: %v, want unset", s.Status)
			}
		})
	}
}

// A caller without trace context starts a new trace at the gateway.
func TestNewTraceWithoutCallerContext(t *testing.T) {
	tr := setup(t, Config{Enabled: true, OTLP: OTLPConfig{Endpoint: newReceiver(t, accept).URL}})
	ctx, server := tr.StartServer(Extract(testCtx(t), http.Header{}), "a2a GetTask")
	defer server.End()
	sc := server.SpanContext()
	if !sc.IsValid() || !sc.IsSampled() || !trace.SpanContextFromContext(ctx).Equal(sc) {
		t.Fatalf("span context %v: want a new sampled trace", sc)
	}
	if sc.IsRemote() {
		t.Error("a new trace's span is remote")
	}
}

// With export off the backend gets the caller's traceparent, tracestate and
// baggage unchanged, through the same calls the proxy makes.
func TestPassThroughWithExportOff(t *testing.T) {
	for name, tr := range map[string]*Tracing{"disabled": setup(t, Config{}), "nil": nil} {
		t.Run(name, func(t *testing.T) {
			if tr.Enabled() {
				t.Fatal("Enabled with export off")
			}
			ctx := Extract(testCtx(t), callerHeaders())
			ctx, server := tr.StartServer(ctx, "a2a SendMessage")
			cctx, client := tr.StartClient(ctx, "a2a message/send")
			out := http.Header{}
			Inject(cctx, out)
			client.End()
			server.End()
			for k, v := range callerHeaders() {
				if got := out.Get(k); got != v[0] {
					t.Errorf("%s to the backend = %q, want the caller's %q", k, got, v[0])
				}
			}
			out = http.Header{}
			_, span := tr.StartServer(Extract(testCtx(t), http.Header{}), "a2a GetTask")
			Inject(trace.ContextWithSpan(testCtx(t), span), out)
			if len(out) != 0 {
				t.Errorf("without a caller trace, headers to the backend: %v, want none", out)
			}
		})
	}
}

// The collector gets the service name and headers from the standard
// variables when the config leaves them unset.
func TestEnvConfiguresExport(t *testing.T) {
	rc := newReceiver(t, accept)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rc.URL) // a base URL: /v1/traces is appended
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-api-key=from-env")
	t.Setenv("OTEL_SERVICE_NAME", "gw-from-env")
	t.Setenv("OTEL_EXPORTER_OTLP_INSECURE", "true")
	tr := setup(t, Config{Enabled: true})
	exportOne(t, tr)
	spans, services := rc.spans()
	if spans["a2a GetTask"] == nil || len(services) == 0 || services[0] != "gw-from-env" {
		t.Fatalf("spans %v, services %v: want a2a GetTask from gw-from-env", spans, services)
	}
	if got := rc.headers()[0].Get("X-Api-Key"); got != "from-env" {
		t.Errorf("x-api-key = %q, want from-env", got)
	}
}

// Batches are sent uncompressed unless the config or the standard
// variables ask for gzip; the config's choice wins.
func TestCompression(t *testing.T) {
	for _, tc := range []struct {
		name, config, env, want string // want: the Content-Encoding the collector gets
	}{
		{"default", "", "", ""},
		{"config gzip", CompressionGzip, "", "gzip"},
		{"env gzip", "", "gzip", "gzip"},
		{"config none over env gzip", CompressionNone, "gzip", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env != "" {
				t.Setenv("OTEL_EXPORTER_OTLP_COMPRESSION", tc.env)
			}
			rc := newReceiver(t, accept)
			tr := setup(t, Config{Enabled: true, OTLP: OTLPConfig{Endpoint: rc.URL, Compression: tc.config}})
			exportOne(t, tr)
			if spans, _ := rc.spans(); spans["a2a GetTask"] == nil {
				t.Fatalf("the collector got %v, want a2a GetTask", spans)
			}
			if got := rc.headers()[0].Get("Content-Encoding"); got != tc.want {
				t.Errorf("Content-Encoding %q, want %q", got, tc.want)
			}
		})
	}
	for _, compression := range []string{CompressionNone, CompressionGzip} {
		t.Run("grpc "+compression, func(t *testing.T) {
			rc, addr := newGRPCReceiver(t)
			tr := setup(t, Config{Enabled: true, OTLP: OTLPConfig{Endpoint: addr, Insecure: true, Protocol: ProtocolGRPC, Compression: compression}})
			exportOne(t, tr)
			if spans, _ := rc.spans(); spans["a2a GetTask"] == nil {
				t.Fatalf("the collector got %v, want a2a GetTask", spans)
			}
			want := ""
			if compression == CompressionGzip {
				want = "gzip"
			}
			rc.mu.Lock()
			defer rc.mu.Unlock()
			if len(rc.grpcEncodings) == 0 || rc.grpcEncodings[0] != want {
				t.Errorf("gRPC encodings %q, want %q", rc.grpcEncodings, want)
			}
		})
	}
}

// What the config sets wins over the variables.
func TestConfigWinsOverEnv(t *testing.T) {
	rc := newReceiver(t, accept)
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://127.0.0.1:1/v1/traces")
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-api-key=from-env")
	t.Setenv("OTEL_SERVICE_NAME", "gw-from-env")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	t.Setenv("OTEL_TRACES_SAMPLER", "always_off")
	t.Setenv("GW_TEST_COLLECTOR_KEY", "from-config")
	one := 1.0
	cfg := Config{Enabled: true, ServiceName: "gw-from-config", SampleRatio: &one, OTLP: OTLPConfig{
		Endpoint: rc.URL, Protocol: ProtocolHTTP,
		Headers: []HeaderConfig{{Name: "X-Api-Key", ValueEnv: "GW_TEST_COLLECTOR_KEY"}},
	}}
	tr := setup(t, cfg)
	_, span := tr.StartServer(testCtx(t), "a2a GetTask")
	if !span.SpanContext().IsSampled() {
		t.Error("sample_ratio 1 did not win over OTEL_TRACES_SAMPLER=always_off")
	}
	span.End()
	if err := tr.Shutdown(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	_, services := rc.spans()
	if len(services) == 0 || services[0] != "gw-from-config" {
		t.Fatalf("services %v, want gw-from-config at the configured endpoint", services)
	}
	if got := rc.headers()[0].Get("X-Api-Key"); got != "from-config" {
		t.Errorf("x-api-key = %q, want from-config", got)
	}
}

// The sampler variables apply when sample_ratio is unset; a ratio is
// parent-based: a sampled caller's trace is recorded whatever the ratio.
func TestSampling(t *testing.T) {
	endpoint := newReceiver(t, accept).URL
	sampled := func(tr *Tracing, h http.Header) bool {
		_, span := tr.StartServer(Extract(testCtx(t), h), "a2a GetTask")
		defer span.End()
		return span.SpanContext().IsSampled()
	}
	t.Run("env", func(t *testing.T) {
		t.Setenv("OTEL_TRACES_SAMPLER", "parentbased_traceidratio")
		t.Setenv("OTEL_TRACES_SAMPLER_ARG", "0")
		tr := setup(t, Config{Enabled: true, OTLP: OTLPConfig{Endpoint: endpoint}})
		if sampled(tr, http.Header{}) {
			t.Error("OTEL_TRACES_SAMPLER_ARG=0: a new trace was sampled")
		}
		if !sampled(tr, callerHeaders()) {
			t.Error("a sampled caller's trace was not sampled")
		}
	})
	t.Run("ratio 0", func(t *testing.T) {
		zero := 0.0
		tr := setup(t, Config{Enabled: true, SampleRatio: &zero, OTLP: OTLPConfig{Endpoint: endpoint}})
		if sampled(tr, http.Header{}) {
			t.Error("sample_ratio 0: a new trace was sampled")
		}
		if !sampled(tr, callerHeaders()) {
			t.Error("sample_ratio 0: a sampled caller's trace was not sampled")
		}
		unsampled := callerHeaders()
		unsampled.Set("traceparent", strings.TrimSuffix(callerParent, "01")+"00")
		if sampled(tr, unsampled) {
			t.Error("an unsampled caller's trace was sampled")
		}
	})
	t.Run("default", func(t *testing.T) {
		tr := setup(t, Config{Enabled: true, OTLP: OTLPConfig{Endpoint: endpoint}})
		if !sampled(tr, http.Header{}) {
			t.Error("by default a new trace is sampled")
		}
	})
}
