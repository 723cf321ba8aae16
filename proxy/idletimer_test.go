package proxy

import (
	"testing"
	"testing/synctest"
	"time"
)

// TestIdleTimerFires: the timer fires its timeout after the last activity,
// or after its start when there was none.
func TestIdleTimerFires(t *testing.T) {
	for _, tc := range []struct {
		name    string
		timeout time.Duration
		active  []time.Duration // activity at these times after the start
		want    time.Duration
	}{
		{"WithoutActivity", 3 * time.Second, nil, 3 * time.Second},
		// Silence from 9 s, so it fires at 19 s.
		{"AfterTimeoutOfSilence", 10 * time.Second, []time.Duration{4 * time.Second, 9 * time.Second}, 19 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				fired := make(chan time.Duration, 1)
				it := startIdleTimer(tc.timeout, func() { fired <- time.Since(start) })
				defer it.stop()
				for _, at := range tc.active {
					time.Sleep(time.Until(start.Add(at)))
					it.activeAt(time.Now())
				}
				if got := <-fired; got != tc.want {
					t.Fatalf("fired after %s, want %s (%s after the last activity)", got, tc.want, tc.timeout)
				}
			})
		})
	}
}

func TestIdleTimerStopped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		calls := 0
		it := startIdleTimer(time.Second, func() { calls++ })
		time.Sleep(500 * time.Millisecond)
		it.activeAt(time.Now())
		it.stop()
		time.Sleep(time.Hour)
		synctest.Wait()
		if calls != 0 {
			t.Fatalf("a stopped idle timer fired %d times", calls)
		}
	})
}
