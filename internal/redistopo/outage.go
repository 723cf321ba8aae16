package redistopo

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// Outage follows a load run across a topology change: while the topology
// changes calls may fail, but only closed; before and after it, for at
// most Max; any other wrong answer is a violation. The load's workers
// share it.
//
// How long the change itself takes is the topology's own business (a
// sentinel's down-after and election, gossip), which its starter bounds:
// on a busy machine it alone can outlast Max, so it is not counted.
type Outage struct {
	// Max bounds how long calls may fail outside the change.
	Max time.Duration

	mu         sync.Mutex
	violations []string
	failures   int
	firstFail  time.Time
	lastFail   time.Time
	samples    []string    // some failures, for the log
	changing   time.Time   // when the change began
	changed    time.Time   // when the topology reported it done
	okSince    map[int]int // successes after each mark
	mark       int
	succeeded  chan struct{} // signaled on a success, for waitOK
}

// Violate notes a wrong answer (the first 20 are kept).
func (o *Outage) Violate(format string, args ...any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.violations) < 20 {
		o.violations = append(o.violations, fmt.Sprintf(format, args...))
	}
}

// OK counts a call that succeeded.
func (o *Outage) OK() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.okSince == nil {
		o.okSince = map[int]int{}
	}
	o.okSince[o.mark]++
	select {
	case o.successSignal() <- struct{}{}:
	default: // waitOK has a signal pending already
	}
}

// successSignal is the channel OK signals; o.mu is held.
func (o *Outage) successSignal() chan struct{} {
	if o.succeeded == nil {
		o.succeeded = make(chan struct{}, 1)
	}
	return o.succeeded
}

// FailedClosed notes a call that failed as it should while the topology
// changes; what describes it for the log.
func (o *Outage) FailedClosed(what string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	now := time.Now()
	if o.failures < 3 || o.failures%10 == 0 {
		o.samples = append(o.samples, now.Format("15:04:05.000")+" "+what)
	}
	if o.failures == 0 {
		o.firstFail = now
	}
	o.failures++
	o.lastFail = now
}

// Across waits for before calls to succeed, runs change, and waits for
// after calls to succeed since: the load recovered by itself.
func (o *Outage) Across(t testing.TB, before int, change func(), after int) {
	t.Helper()
	o.waitOK(t, before)
	o.mu.Lock()
	o.changing = time.Now()
	o.mu.Unlock()
	change()
	o.mu.Lock()
	o.changed = time.Now()
	o.mark++
	o.mu.Unlock()
	o.waitOK(t, after)
}

// waitOK waits for n calls to succeed since the last mark. How long that
// takes is the load's pace, which a loaded machine slows: what is bounded
// is a stall, Max without any call succeeding.
func (o *Outage) waitOK(t testing.TB, n int) {
	t.Helper()
	stalled := time.NewTimer(o.Max)
	defer stalled.Stop()
	for {
		o.mu.Lock()
		ok := o.okSince[o.mark]
		succeeded := o.successSignal()
		o.mu.Unlock()
		if ok >= n {
			return
		}
		select {
		case <-succeeded:
			stalled.Reset(o.Max)
		case <-stalled.C:
			t.Fatalf("no call succeeded for %s (%d of %d since the change)", o.Max, ok, n)
		}
	}
}

// Check fails t for every violation and for failures spread over more
// than Max outside the change. Call it once the load has stopped.
func (o *Outage) Check(t testing.TB) {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, v := range o.violations {
		t.Error(v)
	}
	if o.failures > 0 {
		outage := o.lastFail.Sub(o.firstFail)
		during := max(0, earlier(o.lastFail, o.changed).Sub(later(o.firstFail, o.changing)))
		t.Logf("%d calls failed closed over %s, %s of it while the change (%s) ran, for instance:\n%s", o.failures,
			outage.Round(time.Millisecond), during.Round(time.Millisecond), o.changed.Sub(o.changing).Round(time.Millisecond), strings.Join(o.samples, "\n"))
		if outside := outage - during; outside > o.Max {
			t.Errorf("calls failed for %s outside the change, want at most %s", outside, o.Max)
		}
	}
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
