package telemetry

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// failureLogInterval spaces the log lines of a collector that keeps failing.
const failureLogInterval = time.Minute

// The batch span processor drops a span that ends while its queue is full
// and counts it only in a private field. queueGate holds the queue's bound
// itself, in front of the processor: it lets a sampled span through only
// while fewer than limit spans are queued or being exported, so the
// processor's own queue (of the same size) never overflows, and it counts
// every span it turns away.
type queueGate struct {
	sdktrace.SpanProcessor
	pending *atomic.Int64 // spans let through and not yet exported
	limit   int64
	dropped prometheus.Counter
}

func newQueueGate(next sdktrace.SpanProcessor, exp *countingExporter, limit int, dropped prometheus.Counter) *queueGate {
	return &queueGate{SpanProcessor: next, pending: &exp.pending, limit: int64(limit), dropped: dropped}
}

func (g *queueGate) OnEnd(s sdktrace.ReadOnlySpan) {
	if !s.SpanContext().IsSampled() {
		return // the processor exports only sampled spans
	}
	if g.pending.Add(1) > g.limit {
		g.pending.Add(-1)
		g.dropped.Inc()
		return
	}
	g.SpanProcessor.OnEnd(s)
}

// countingExporter counts the spans of every export the collector refused or
// did not answer in time, and logs the failures itself, at most one line a
// minute, so that a collector down for an hour is not thousands of lines.
type countingExporter struct {
	next    sdktrace.SpanExporter
	pending atomic.Int64
	failed  prometheus.Counter
	log     *slog.Logger

	mu        sync.Mutex
	lastLog   time.Time
	unlogged  int // failed exports since the last line
	lostSince int // spans lost since the last line
}

func (e *countingExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := e.next.ExportSpans(ctx, spans)
	e.pending.Add(-int64(len(spans)))
	if err == nil {
		return nil
	}
	e.failed.Add(float64(len(spans)))
	e.mu.Lock()
	defer e.mu.Unlock()
	e.unlogged++
	e.lostSince += len(spans)
	if now := time.Now(); now.Sub(e.lastLog) >= failureLogInterval {
		e.log.Warn("tracing: the OTLP collector did not take spans; they are dropped",
			"error", err.Error(), "failed_exports", e.unlogged, "spans_dropped", e.lostSince)
		e.lastLog, e.unlogged, e.lostSince = now, 0, 0
	}
	return nil // counted and logged here rather than by OpenTelemetry's handler
}

func (e *countingExporter) Shutdown(ctx context.Context) error { return e.next.Shutdown(ctx) }
