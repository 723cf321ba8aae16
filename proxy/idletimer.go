package proxy

import (
	"sync/atomic"
	"time"
)

// idleTimer calls fire once nothing has been reported active for timeout.
// A stream reports activity on every event, thousands of times a second on
// a busy gateway, and resetting a timer each time takes the timer heap's
// lock: here activity is a clock read and an atomic store, and the timer,
// when it goes off, re-arms itself for what is left of the timeout since
// the last activity.
type idleTimer struct {
	start   time.Time
	timeout time.Duration
	last    atomic.Int64 // time.Duration since start of the last activity
	stopped atomic.Bool
	timer   *time.Timer
	fire    func()
}

func startIdleTimer(timeout time.Duration, fire func()) *idleTimer {
	t := &idleTimer{start: time.Now(), timeout: timeout, fire: fire}
	// Armed only once t.timer is set, which check reads.
	t.timer = time.AfterFunc(time.Duration(1<<63-1), t.check)
	t.timer.Reset(timeout)
	return t
}

// activeAt reports activity at now: the timeout starts again from then.
func (t *idleTimer) activeAt(now time.Time) { t.last.Store(int64(now.Sub(t.start))) }

func (t *idleTimer) check() {
	if t.stopped.Load() {
		return
	}
	if left := t.timeout - (time.Since(t.start) - time.Duration(t.last.Load())); left > 0 {
		t.timer.Reset(left)
		return
	}
	t.fire()
}

// stop ends the watch; fire is not called after it returns, unless it was
// running already.
func (t *idleTimer) stop() {
	t.stopped.Store(true)
	t.timer.Stop()
}
