package telemetry

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// batcher is the span processor in front of the OTLP exporter, in place of
// the SDK's batch span processor. That one hands every ended span through a
// channel to its export goroutine, which wakes for each: four goroutine
// switches a call, most of the instructions tracing added to a call besides
// the export itself. batcher appends the span to a slice under a lock and
// wakes its goroutine once a batch is full (or every interval), so the
// calls pay for a lock and an append. It also holds the bound the SDK's
// counts only in a private field: at most limit spans queued or being
// exported; a span ending past it is dropped and counted.
type batcher struct {
	exp      sdktrace.SpanExporter
	limit    int
	size     int           // spans an export takes at most
	interval time.Duration // the longest a span waits for its export
	timeout  time.Duration // of one export
	dropped  prometheus.Counter

	mu       sync.Mutex
	queue    []sdktrace.ReadOnlySpan
	spare    []sdktrace.ReadOnlySpan // the last export's slice, reused
	inFlight int                     // spans of the export in progress
	stopped  bool

	exporting chan struct{} // held by the one export at a time: the loop's, ForceFlush's or Shutdown's
	wake      chan struct{}
	stop      chan struct{}
	done      chan struct{}
}

func newBatcher(exp sdktrace.SpanExporter, limit, size int, interval, timeout time.Duration, dropped prometheus.Counter) *batcher {
	b := &batcher{
		exp: exp, limit: limit, size: min(size, limit), interval: interval, timeout: timeout, dropped: dropped,
		queue:     make([]sdktrace.ReadOnlySpan, 0, min(size, limit)),
		exporting: make(chan struct{}, 1),
		wake:      make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
	}
	go b.loop()
	return b
}

func (b *batcher) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

// OnEnd queues a sampled span, or drops and counts it when the queue is
// full or shut down. It never waits for the export.
func (b *batcher) OnEnd(s sdktrace.ReadOnlySpan) {
	if !s.SpanContext().IsSampled() {
		return
	}
	b.mu.Lock()
	if b.stopped || len(b.queue)+b.inFlight >= b.limit {
		b.mu.Unlock()
		b.dropped.Inc()
		return
	}
	b.queue = append(b.queue, s)
	full := len(b.queue) == b.size
	b.mu.Unlock()
	if full {
		select {
		case b.wake <- struct{}{}:
		default: // already woken
		}
	}
}

func (b *batcher) loop() {
	defer close(b.done)
	tick := time.NewTicker(b.interval)
	defer tick.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-b.wake:
		case <-tick.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
		b.export(ctx, false)
		cancel()
	}
}

// export sends what is queued, a batch at a time, while a full batch is
// queued; with all, until the queue is empty. It gives up when ctx ends,
// also while another export holds the exporter.
func (b *batcher) export(ctx context.Context, all bool) error {
	select {
	case b.exporting <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-b.exporting }()
	for first := true; ; first = false {
		if err := ctx.Err(); err != nil {
			return err
		}
		b.mu.Lock()
		n := min(len(b.queue), b.size)
		if n == 0 || (!first && !all && n < b.size) {
			b.mu.Unlock()
			return nil
		}
		batch := b.take(n)
		b.mu.Unlock()
		err := b.exp.ExportSpans(ctx, batch)
		b.mu.Lock()
		b.inFlight = 0
		clear(batch)
		b.spare = batch[:0]
		b.mu.Unlock()
		if err != nil {
			return err
		}
	}
}

// take removes the first n spans of the queue and returns them, counted in
// flight; b.mu is held.
func (b *batcher) take(n int) []sdktrace.ReadOnlySpan {
	var batch []sdktrace.ReadOnlySpan
	if n == len(b.queue) {
		batch, b.queue = b.queue, b.spare[:0]
		b.spare = nil
	} else {
		batch = append(b.spare[:0], b.queue[:n]...)
		b.spare = nil
		rest := copy(b.queue, b.queue[n:])
		clear(b.queue[rest:])
		b.queue = b.queue[:rest]
	}
	b.inFlight = n
	return batch
}

// ForceFlush exports everything queued until ctx ends.
func (b *batcher) ForceFlush(ctx context.Context) error {
	return b.export(ctx, true)
}

// Shutdown stops taking spans, exports those queued until ctx ends, and
// shuts the exporter down.
func (b *batcher) Shutdown(ctx context.Context) error {
	b.mu.Lock()
	if b.stopped {
		b.mu.Unlock()
		return nil
	}
	b.stopped = true
	b.mu.Unlock()
	close(b.stop)
	select {
	case <-b.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	err := b.export(ctx, true)
	if err2 := b.exp.Shutdown(ctx); err == nil {
		err = err2
	}
	return err
}
