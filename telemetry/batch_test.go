package telemetry

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// batchLog is an exporter that keeps the size of every batch and tells of
// each.
type batchLog struct {
	mu      sync.Mutex
	sizes   []int
	got     chan int
	release chan struct{} // nil: answer at once
	entered chan struct{} // told of every export begun, when not nil
}

func (l *batchLog) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if l.entered != nil {
		l.entered <- struct{}{}
	}
	if l.release != nil {
		select {
		case <-l.release:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	l.mu.Lock()
	l.sizes = append(l.sizes, len(spans))
	l.mu.Unlock()
	l.got <- len(spans)
	return nil
}

func (l *batchLog) Shutdown(context.Context) error { return nil }

func (l *batchLog) next(t *testing.T) int {
	t.Helper()
	select {
	case n := <-l.got:
		return n
	case <-time.After(10 * time.Second):
		t.Fatal("no export within 10s")
		return 0
	}
}

func sampledSpan() sdktrace.ReadOnlySpan {
	return tracetest.SpanStub{SpanContext: spanContext(true)}.Snapshot()
}

// A full batch is exported at once, without waiting for the interval; what
// is left goes at Shutdown; an unsampled span is not exported.
func TestBatcherExportsFullBatches(t *testing.T) {
	exp := &batchLog{got: make(chan int, 16)}
	dropped := prometheus.NewCounter(prometheus.CounterOpts{Name: "d"})
	b := newBatcher(exp, 100, 10, time.Hour, time.Minute, dropped)
	for range 25 {
		b.OnEnd(sampledSpan())
	}
	b.OnEnd(tracetest.SpanStub{SpanContext: spanContext(false)}.Snapshot())
	if n, m := exp.next(t), exp.next(t); n != 10 || m != 10 {
		t.Fatalf("batches of %d and %d, want 10 each", n, m)
	}
	if err := b.Shutdown(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if n := exp.next(t); n != 5 {
		t.Errorf("Shutdown exported %d, want the 5 left", n)
	}
	b.OnEnd(sampledSpan())
	if got := testutil.ToFloat64(dropped); got != 1 {
		t.Errorf("dropped %v, want 1 (the span ended after Shutdown)", got)
	}
}

// A batch not yet full is exported when the interval passes.
func TestBatcherExportsOnInterval(t *testing.T) {
	exp := &batchLog{got: make(chan int, 16)}
	b := newBatcher(exp, 100, 10, 10*time.Millisecond, time.Minute, prometheus.NewCounter(prometheus.CounterOpts{Name: "d"}))
	t.Cleanup(func() { _ = b.Shutdown(context.Background()) })
	for range 3 {
		b.OnEnd(sampledSpan())
	}
	if n := exp.next(t); n != 3 {
		t.Errorf("the interval exported %d, want 3", n)
	}
}

// While an export is held, at most limit spans are kept, queued or in
// flight; the rest are dropped and counted; ForceFlush exports what is
// queued once the exporter is free, and gives up when its context ends
// while it is not.
func TestBatcherBoundsWhatItHolds(t *testing.T) {
	exp := &batchLog{got: make(chan int, 16), release: make(chan struct{}), entered: make(chan struct{}, 16)}
	dropped := prometheus.NewCounter(prometheus.CounterOpts{Name: "d"})
	b := newBatcher(exp, 20, 10, time.Hour, time.Minute, dropped)
	for range 50 {
		b.OnEnd(sampledSpan())
	}
	if got := testutil.ToFloat64(dropped); got != 30 {
		t.Errorf("dropped %v, want 30 (50 spans, 20 held)", got)
	}
	<-exp.entered // the first full batch is in flight, held
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := b.ForceFlush(ctx); err == nil {
		t.Error("ForceFlush returned no error while the exporter was held past its context")
	}
	close(exp.release)
	if err := b.ForceFlush(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	total := 0
	for total < 20 {
		total += exp.next(t)
	}
	if total != 20 {
		t.Errorf("exported %d, want the 20 held", total)
	}
	if err := b.Shutdown(testCtx(t)); err != nil {
		t.Fatal(err)
	}
}

func spanContext(sampled bool) trace.SpanContext {
	var flags trace.TraceFlags
	if sampled {
		flags = trace.FlagsSampled
	}
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{1}, TraceFlags: flags})
}
