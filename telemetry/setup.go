// Package telemetry traces the gateway with OpenTelemetry: it sets up the
// OTLP export, continues the callers' W3C trace context, names the span
// attributes, and ties log lines to traces.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Bounds of the export. A collector that is down or slow costs at most a
// full queue of spans, never a call's time: spans that end while the queue
// is full are dropped and counted.
const (
	queueSize      = 2048
	batchSize      = 512
	batchTimeout   = 5 * time.Second
	exportTimeout  = 10 * time.Second
	instrumentName = "github.com/a2agate/gateway"
)

// Tracing is the gateway's tracer provider and propagator. A nil *Tracing
// traces nothing and still passes trace context on.
type Tracing struct {
	provider trace.TracerProvider
	tracer   trace.Tracer
	sdk      *sdktrace.TracerProvider // nil when export is off
	dropped  *prometheus.CounterVec
}

// Setup builds the tracing cfg describes; cfg must have passed Validate.
// With export off it returns a no-op tracer provider, and Extract and
// Inject still continue the caller's trace. Errors of the export go to log,
// at most one line a minute; Setup makes log OpenTelemetry's error handler.
func Setup(ctx context.Context, cfg Config, log *slog.Logger) (*Tracing, error) {
	t := &Tracing{dropped: newDroppedCounter()}
	queueFull := t.dropped.WithLabelValues("queue_full")
	exportFailed := t.dropped.WithLabelValues("export_failed")
	if !cfg.Enabled {
		t.provider = noop.NewTracerProvider()
		t.tracer = t.provider.Tracer(instrumentName)
		return t, nil
	}
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		log.Warn("opentelemetry: "+err.Error(), "component", "tracing")
	}))
	queue, timeout := queueSize, exportTimeout
	if cfg.queueSize > 0 {
		queue = cfg.queueSize
	}
	if cfg.exportTimeout > 0 {
		timeout = cfg.exportTimeout
	}
	exp, err := newExporter(ctx, cfg.OTLP, timeout)
	if err != nil {
		return nil, fmt.Errorf("tracing: %w", err)
	}
	res, err := resource.New(ctx,
		resource.WithFromEnv(), // OTEL_RESOURCE_ATTRIBUTES, OTEL_SERVICE_NAME
		resource.WithTelemetrySDK(),
		resource.WithAttributes(attribute.String("service.name", cfg.ServiceName)),
	)
	if err != nil {
		_ = exp.Shutdown(ctx)
		return nil, fmt.Errorf("tracing: resource: %w", err)
	}
	counted := &countingExporter{next: exp, failed: exportFailed, log: log}
	bsp := sdktrace.NewBatchSpanProcessor(counted,
		sdktrace.WithMaxQueueSize(queue),
		sdktrace.WithMaxExportBatchSize(min(batchSize, queue)),
		sdktrace.WithBatchTimeout(batchTimeout),
		sdktrace.WithExportTimeout(timeout),
	)
	opts := []sdktrace.TracerProviderOption{
		sdktrace.WithResource(res),
		sdktrace.WithSpanProcessor(newQueueGate(bsp, counted, queue, queueFull)),
	}
	if cfg.SampleRatio != nil {
		opts = append(opts, sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(*cfg.SampleRatio))))
	}
	t.sdk = sdktrace.NewTracerProvider(opts...)
	t.provider = t.sdk
	t.tracer = t.sdk.Tracer(instrumentName)
	return t, nil
}

func newDroppedCounter() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "a2a_gateway", Name: "trace_spans_dropped_total",
		Help: "Spans not delivered to the OTLP collector, by reason: queue_full (the export queue was full when the span ended), export_failed (the collector refused the batch or did not answer in time).",
	}, []string{"reason"})
}

// WithProvider is tracing that records into tp rather than an OTLP export:
// for tests and benchmarks that read spans in memory (tracetest) or discard
// them. Shutdown shuts tp down.
func WithProvider(tp *sdktrace.TracerProvider) *Tracing {
	return &Tracing{provider: tp, tracer: tp.Tracer(instrumentName), sdk: tp, dropped: newDroppedCounter()}
}

func newExporter(ctx context.Context, c OTLPConfig, timeout time.Duration) (*otlptrace.Exporter, error) {
	headers, err := c.headers()
	if err != nil {
		return nil, err
	}
	if c.Protocol == ProtocolGRPC {
		opts := []otlptracegrpc.Option{otlptracegrpc.WithTimeout(timeout)}
		// The gRPC exporter takes no "none" (it logs it as invalid): with
		// compression none it keeps its default, which only
		// OTEL_EXPORTER_OTLP_COMPRESSION=gzip set beside the config's none
		// would change.
		if c.Compression == CompressionGzip {
			opts = append(opts, otlptracegrpc.WithCompressor(CompressionGzip))
		}
		return otlptracegrpc.New(ctx, grpcAddress.append(opts, c, c.Endpoint, headers)...)
	}
	compression := otlptracehttp.NoCompression
	if c.Compression == CompressionGzip {
		compression = otlptracehttp.GzipCompression
	}
	opts := []otlptracehttp.Option{otlptracehttp.WithTimeout(timeout), otlptracehttp.WithCompression(compression)}
	endpointURL := c.Endpoint
	if isURL(c.Endpoint) {
		u, err := url.Parse(c.Endpoint)
		if err != nil {
			return nil, err
		}
		if u.Path == "" || u.Path == "/" {
			u.Path = "/v1/traces"
		}
		endpointURL = u.String()
	}
	return otlptracehttp.New(ctx, httpAddress.append(opts, c, endpointURL, headers)...)
}

// addressOptions are one exporter's constructors of the options that say
// where and how it reaches the collector: both exporters have the same
// four, each in its own option type.
type addressOptions[O any] struct {
	url, endpoint func(string) O
	insecure      func() O
	headers       func(map[string]string) O
}

var (
	grpcAddress = addressOptions[otlptracegrpc.Option]{otlptracegrpc.WithEndpointURL, otlptracegrpc.WithEndpoint, otlptracegrpc.WithInsecure, otlptracegrpc.WithHeaders}
	httpAddress = addressOptions[otlptracehttp.Option]{otlptracehttp.WithEndpointURL, otlptracehttp.WithEndpoint, otlptracehttp.WithInsecure, otlptracehttp.WithHeaders}
)

// append adds c's collector address to opts: a URL (as endpointURL spells
// it for this exporter), whose scheme decides TLS, or a host:port, sent in
// plain text when c is insecure; and the headers.
func (a addressOptions[O]) append(opts []O, c OTLPConfig, endpointURL string, headers map[string]string) []O {
	switch {
	case isURL(c.Endpoint):
		opts = append(opts, a.url(endpointURL))
	case c.Endpoint != "":
		opts = append(opts, a.endpoint(c.Endpoint))
	}
	if c.Insecure && !isURL(c.Endpoint) {
		opts = append(opts, a.insecure())
	}
	if headers != nil {
		opts = append(opts, a.headers(headers))
	}
	return opts
}

// isURL tells an endpoint URL from a host:port.
func isURL(endpoint string) bool { return strings.Contains(endpoint, "://") }

// Enabled reports whether spans are exported.
func (t *Tracing) Enabled() bool { return t != nil && t.sdk != nil }

// TracerProvider is the provider spans come from: the SDK's, or a no-op one
// when export is off.
func (t *Tracing) TracerProvider() trace.TracerProvider {
	if t == nil {
		return noop.NewTracerProvider()
	}
	return t.provider
}

// Propagator is the W3C trace context and baggage propagator.
func (t *Tracing) Propagator() propagation.TextMapPropagator { return propagator }

// Collector is the dropped-spans counter, for the gateway's registry.
func (t *Tracing) Collector() prometheus.Collector { return t.dropped }

// Shutdown exports the spans still queued and stops the exporter, giving up
// when ctx ends.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if !t.Enabled() {
		return nil
	}
	err := t.sdk.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return fmt.Errorf("tracing: spans still queued at shutdown were dropped: %w", err)
	}
	return err
}
