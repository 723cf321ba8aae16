package reliability

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/a2agate/gateway/dialect"
)

// rssWatch samples a process's resident memory until stopped and keeps the
// peak.
type rssWatch struct {
	g    *gatewayProc
	stop chan struct{}
	done chan struct{}
	mu   sync.Mutex
	peak int64
	err  error
}

func watchRSS(g *gatewayProc, every time.Duration) *rssWatch {
	w := &rssWatch{g: g, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			rss, err := g.rss()
			w.mu.Lock()
			w.peak, w.err = max(w.peak, rss), errors.Join(w.err, err)
			w.mu.Unlock()
			select {
			case <-w.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return w
}

// halt stops sampling and returns the peak.
func (w *rssWatch) halt() (int64, error) {
	close(w.stop)
	<-w.done
	return w.peak, w.err
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// TestSlowReader: a caller reads a long, fast stream very slowly. The
// gateway holds one event at a time, so the backend's writes block once the
// sockets' buffers are full, the gateway's memory stays bounded while the
// backend sends many times that, and every event still arrives, in order.
func TestSlowReader(t *testing.T) {
	if testing.Short() {
		t.Skip("a flood of stream events: skipped with -short")
	}
	const (
		chunk         = 64 << 10 // bytes of text per event
		slowBytes     = 72 << 20 // read slowly after the stall
		slowPause     = 2 * time.Millisecond
		rssAllowance  = 24 << 20 // the gateway's memory over its idle baseline
		socketBuffers = 48 << 20 // what the sockets between backend and caller can hold
		stallRequired = time.Second
	)
	f := newFault(t, "slow reader on a long stream (1.0 caller, 0.2.5 backend)")
	fl := newFlood(chunk)
	floodServer := httptest.NewServer(fl)
	t.Cleanup(floodServer.Close)
	be := startBackends(t)
	cfg := be.config()
	cfg.legacyURL = floodServer.URL + "/"
	g := startGateway(t, cfg.yaml())
	baseline, err := g.rss()
	if err != nil {
		t.Fatal(err)
	}
	watch := watchRSS(g, 50*time.Millisecond)

	cl := newClient(t, g.url, 1)
	tg := target{legacyPath, callers[1]}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := cl.openStream(ctx, tg, "flood", dialect.SendStreamingMessage, tg.c.sendParams("m-flood", "flood"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	next := 0 // the artifact chunk expected next
	events := 0
	read := func() (done bool) {
		t.Helper()
		r, err := s.next()
		if errors.Is(err, io.EOF) {
			return true
		}
		if err != nil {
			t.Fatalf("after %d events: %v", events, err)
		}
		events++
		kind, ev := eventKind(tg.c, r)
		switch {
		case events == 1 && kind == kindTask:
		case kind == kindArtifact:
			seq, ok := floodSeq(ev.Get("artifact.parts.0.text").Str)
			if !ok || seq != next {
				t.Fatalf("event %d: artifact chunk %d, want %d", events, seq, next)
			}
			if n := len(ev.Get("artifact.parts.0.text").Str); n != chunk+9 {
				t.Fatalf("artifact chunk %d has %d bytes of text, want %d", seq, n, chunk+9)
			}
			next++
		case finalCompleted(tg.c, r):
		default:
			t.Fatalf("event %d: unexpected %.200s", events, r.Raw)
		}
		return false
	}
	read()
	read()

	// The caller stops reading. The backend must end up blocked in a write.
	stallWait := eventually(t, 30*time.Second, "the backend's writes to block", func() bool {
		return fl.blockedFor() >= stallRequired
	})
	stalledAt := fl.written.Load()
	t.Logf("the backend blocked after writing %s (%s after the caller stopped reading)", mib(stalledAt), stallWait.Round(time.Millisecond))
	f.saw("backend blocked in a write for %s after sending %s while the caller did not read", stallRequired, mib(stalledAt))

	// The caller reads slowly; the backend only ever gets as far ahead as
	// the buffers between them allow.
	aheadMax := int64(0)
	for s.read < slowBytes {
		if read() {
			t.Fatal("the stream ended early")
		}
		aheadMax = max(aheadMax, fl.written.Load()-s.read)
		time.Sleep(slowPause) // the caller is slow on purpose
	}
	close(fl.finish)
	for !read() {
	}
	total := fl.written.Load()
	if err := <-fl.ended; err != nil {
		t.Fatalf("the backend's stream ended with %v", err)
	}
	peak, err := watch.halt()
	if err != nil {
		t.Fatal(err)
	}
	f.saw("all %d events in order (%d chunks, %s), last the completed status, then a clean end", events, next, mib(s.read))
	f.saw("gateway RSS peak %s over an idle %s; backend at most %s ahead of the caller", mib(peak-baseline), mib(baseline), mib(aheadMax))
	t.Logf("backend wrote %s in all; the caller read %s; the gateway's RSS: idle %s, peak %s; the backend was at most %s ahead",
		mib(total), mib(s.read), mib(baseline), mib(peak), mib(aheadMax))

	if total < 3*rssAllowance {
		t.Errorf("the backend sent only %s: too little to tell a queue from the buffers", mib(total))
	}
	if peak-baseline > rssAllowance {
		t.Errorf("the gateway's memory grew by %s (allowed %s) while the caller read slowly: it queues", mib(peak-baseline), mib(rssAllowance))
	}
	if stalledAt > socketBuffers || aheadMax > socketBuffers {
		t.Errorf("the backend got %s ahead of the caller (%s when it blocked), more than the sockets' buffers (%s) hold: something queues", mib(aheadMax), mib(stalledAt), mib(socketBuffers))
	}
}
