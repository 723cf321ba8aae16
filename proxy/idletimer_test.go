package proxy

import (
	"testing"
	"testing/synctest"
	"time"
)

func TestIdleTimerFiresAfterTimeoutOfSilence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		fired := make(chan time.Duration, 1)
		it := startIdleTimer(10*time.Second, func() { fired <- time.Since(start) })
		defer it.stop()
		// Activity at 4 s and 9 s: silence from 9 s, so it fires at 19 s.
		time.Sleep(4 * time.Second)
		it.activeAt(time.Now())
		time.Sleep(5 * time.Second)
		it.activeAt(time.Now())
		if got := <-fired; got != 19*time.Second {
			t.Fatalf("fired after %s, want 19s (10s after the last activity)", got)
		}
	})
}

func TestIdleTimerFiresWithoutActivity(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		fired := make(chan time.Duration, 1)
		it := startIdleTimer(3*time.Second, func() { fired <- time.Since(start) })
		defer it.stop()
		if got := <-fired; got != 3*time.Second {
			t.Fatalf("fired after %s, want 3s", got)
		}
	})
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
