package reliability

import (
	"fmt"
	"os"
	"testing"
	"time"
)

// soakWorkers is the number of callers calling back to back: enough to
// keep a 2-core machine's gateway saturated.
const soakWorkers = 16

// soakDuration is how long the soak runs: SOAK_DURATION (scripts/soak.sh
// sets it), else 15s.
func soakDuration(t *testing.T) time.Duration {
	if v := os.Getenv("SOAK_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			t.Fatalf("SOAK_DURATION=%q is not a positive duration", v)
		}
		return d
	}
	return 15 * time.Second
}

// rssSample is the gateway's resident memory at one moment.
type rssSample struct {
	at  time.Duration // since the load started
	rss int64
}

// TestSoak runs unary calls and streams in both dialects against both
// backends at saturation. Every answer must be a valid success, the
// gateway's own metrics must agree, and its memory must stay flat once warm.
func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("the soak: skipped with -short")
	}
	duration := soakDuration(t)
	build := "production build"
	if gatewayRace {
		build = "race-enabled build"
	}
	f := newFault(t, fmt.Sprintf("load and soak (%s, %d callers, both dialects to both backends, %s)", duration, soakWorkers, build))
	be := startBackends(t)
	cfg := be.config()
	// The index is a bounded cache; a small bound fills during warm-up, so
	// what grows after it is a leak, not the cache.
	cfg.store = "store:\n  type: memory\n  memory:\n    max_tasks: 2000\n"
	g := startGateway(t, cfg.yaml())
	cl := newClient(t, g.url, soakWorkers)
	goroutinesBefore, err := g.metric("go_goroutines")
	if err != nil {
		t.Fatal(err)
	}

	l := startLoad(t, cl, loadOptions{workers: soakWorkers, prefix: "soak"})
	var samples []rssSample
	tick := time.NewTicker(500 * time.Millisecond)
	for end := time.After(duration); ; {
		select {
		case <-tick.C:
			rss, err := g.rss()
			if err != nil {
				t.Fatalf("reading the gateway's memory: %v", err)
			}
			samples = append(samples, rssSample{at: time.Since(l.res.start), rss: rss})
			continue
		case <-end:
		}
		break
	}
	tick.Stop()
	res := l.halt()
	cl.close()

	t.Logf("soak: %s", res.summary())
	t.Logf("soak latency: %s", res.latencies())
	f.saw("%s; %s", res.summary(), res.latencies())
	if res.failed > 0 {
		t.Errorf("%d calls did not get a valid success:\n%s", res.failed, res.failureList())
	}
	for _, k := range []string{callSend, callGet, callStream} {
		if res.ok[k] == 0 {
			t.Errorf("no %s call succeeded", k)
		}
	}

	// The gateway's count of what it answered, and how.
	served, err := g.metric("a2a_gateway_requests_total")
	if err != nil {
		t.Fatal(err)
	}
	servedOK, _ := g.metric("a2a_gateway_requests_total", `outcome="ok"`)
	f.saw("gateway metrics: %.0f calls served, %.0f not ok", served, served-servedOK)
	if served != servedOK {
		t.Errorf("the gateway counted %.0f calls that were not ok", served-servedOK)
	}
	if int(served) != res.succeeded()+res.failed {
		t.Errorf("the gateway served %.0f calls, the callers made %d", served, res.succeeded()+res.failed)
	}

	checkFlatMemory(t, f, samples, duration)

	// Calls leave nothing running behind them. Idle keep-alive connections
	// to the backends remain (two goroutines each, up to one per caller).
	var goroutinesAfter float64
	eventually(t, 10*time.Second, "the gateway's goroutines to settle", func() bool {
		goroutinesAfter, err = g.metric("go_goroutines")
		return err == nil && goroutinesAfter <= goroutinesBefore+4*soakWorkers+20
	})
	f.saw("goroutines %.0f before, %.0f after", goroutinesBefore, goroutinesAfter)
}

// checkFlatMemory checks the gateway's resident memory after warm-up (the
// first third of the run) stays within 20% (at least 16 MiB) of where it
// was when warm. A race-enabled gateway gets 32 MiB: the race detector's
// own bookkeeping grows with every goroutine the calls start.
func checkFlatMemory(t *testing.T, f *fault, samples []rssSample, duration time.Duration) {
	t.Helper()
	warm := duration / 3
	var after []rssSample
	for _, s := range samples {
		if s.at >= warm {
			after = append(after, s)
		}
	}
	if len(after) < 3 {
		t.Fatalf("only %d memory samples after warm-up", len(after))
	}
	first, last, peak := after[0].rss, after[len(after)-1].rss, int64(0)
	for _, s := range after {
		peak = max(peak, s.rss)
	}
	slack := max(first/5, 16<<20)
	if gatewayRace {
		slack = max(slack, 32<<20)
	}
	f.saw("RSS after warm-up: first %s, last %s, max %s", mib(first), mib(last), mib(peak))
	t.Logf("soak memory: %d samples, warm at %s: first %s, last %s, max %s (start %s)",
		len(samples), warm.Round(100*time.Millisecond), mib(first), mib(last), mib(peak), mib(samples[0].rss))
	if last > first+slack || peak > first+2*slack {
		t.Errorf("memory grows after warm-up: first %s, last %s, max %s (allowed: last up to %s)", mib(first), mib(last), mib(peak), mib(first+slack))
	}
}
