package reliability

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2agate/gateway/dialect"
)

// Kinds of call a load run makes.
const (
	callSend   = "send"   // blocking SendMessage, checked for the completed task
	callGet    = "get"    // GetTask of the task just created
	callStream = "stream" // SendStreamingMessage, read and checked to the end
)

// load is a set of workers calling a gateway back to back, each call a
// unary send and get or a stream, round-robin over the four dialect pairs.
type load struct {
	cl     *client
	opts   loadOptions
	stop   chan struct{}
	halted sync.Once
	wg     sync.WaitGroup
	res    *loadResult
}

// loadResult is what the callers of a load run received.
type loadResult struct {
	mu       sync.Mutex
	ok       map[string]int
	failed   int
	failures []loadFailure // the first ones, in detail
	latency  map[string][]time.Duration
	start    time.Time
	end      time.Time
	// byError counts the failures by what the caller received.
	byError map[string]int
	// firstFailure is when the first failed call was answered;
	// lastFailure is when the last failed call was sent: a call sent before
	// an outage ended may fail after it, one sent after may not.
	firstFailure, lastFailure time.Time
	waiters                   []loadWaiter
}

// loadWaiter is told when its condition holds.
type loadWaiter struct {
	cond func(r *loadResult) bool // called with mu held
	ch   chan struct{}
}

// loadFailure is one call that did not get a valid success.
type loadFailure struct {
	kind   string
	target target
	text   string // the message text, for the backends' record
	at     time.Time
	err    error
}

func (f loadFailure) String() string {
	return fmt.Sprintf("%s %s %q at %s: %v", f.kind, f.target, f.text, f.at.Format(timeFormat), f.err)
}

const keptFailures = 200

// timeFormat shows the moments of a run in failure messages.
const timeFormat = "15:04:05.000"

// loadOptions shape a load run.
type loadOptions struct {
	workers int
	// prefix starts every message text, so the backends' record tells the
	// runs apart.
	prefix string
	// stopOnNoAnswer ends a worker at its first call that got no answer at
	// all, as when the gateway stops accepting.
	stopOnNoAnswer bool
	// warm is how many calls must succeed (unless one fails first) before
	// startLoad returns.
	warm int
}

// startLoad starts workers calling through cl and returns once opts.warm
// calls succeeded, or one failed.
func startLoad(t *testing.T, cl *client, opts loadOptions) *load {
	t.Helper()
	l := &load{cl: cl, opts: opts, stop: make(chan struct{}), res: &loadResult{
		ok: map[string]int{}, latency: map[string][]time.Duration{}, byError: map[string]int{}, start: time.Now(),
	}}
	for w := range opts.workers {
		l.wg.Go(func() { l.work(w) })
	}
	t.Cleanup(func() { l.halt() }) // a test that stops early stops its load
	l.progress(t, opts.warm)
	return l
}

// progress waits until n more calls succeeded, or one more failed.
func (l *load) progress(t *testing.T, n int) {
	t.Helper()
	l.res.mu.Lock()
	ok, failed := l.res.succeededLocked(), l.res.failed
	l.res.mu.Unlock()
	l.await(t, fmt.Sprintf("%d more calls", n), func(r *loadResult) bool {
		return r.succeededLocked() >= ok+n || r.failed > failed
	})
}

// await waits, up to a minute, until cond holds for the calls so far.
func (l *load) await(t *testing.T, what string, cond func(r *loadResult) bool) {
	t.Helper()
	r := l.res
	r.mu.Lock()
	w := loadWaiter{cond: cond, ch: make(chan struct{})}
	if cond(r) {
		close(w.ch)
	} else {
		r.waiters = append(r.waiters, w)
	}
	r.mu.Unlock()
	select {
	case <-w.ch:
	case <-time.After(time.Minute):
		t.Fatalf("the load did not get %s in a minute: %s", what, r.summary())
	}
}

// halt stops the workers once their calls in flight are answered.
func (l *load) halt() *loadResult {
	l.halted.Do(func() {
		close(l.stop)
		l.wg.Wait()
		l.res.end = time.Now()
	})
	return l.res
}

func (l *load) work(w int) {
	for n := 0; ; n++ {
		select {
		case <-l.stop:
			return
		default:
		}
		if !l.call(w, n) && l.opts.stopOnNoAnswer {
			return
		}
	}
}

// call makes worker w's n-th call and reports whether it got an answer.
func (l *load) call(w, n int) (answered bool) {
	tg := targets[(w+n)%len(targets)]
	text := fmt.Sprintf("%s-%d-%d", l.opts.prefix, w, n)
	// The message id is the retry key: unique across the loads of a run.
	id := fmt.Sprintf("%s-%d-%d", l.opts.prefix, w, n)
	// The calls are not canceled when the run stops: a call in flight is
	// answered, and its answer counts.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if n%3 == 2 {
		d, err := l.cl.streamAndCheck(ctx, tg, id, text)
		l.res.note(callStream, tg, text, d, err)
		return !isTransport(err)
	}
	start := time.Now()
	task, err := l.cl.sendAndCheck(ctx, tg, id, text)
	l.res.note(callSend, tg, text, time.Since(start), err)
	if err != nil {
		return !isTransport(err)
	}
	start = time.Now()
	r, err := l.cl.call(ctx, tg, id+"g", dialect.GetTask, `{"id":"`+task.Get("id").Str+`"}`)
	if err == nil {
		_, err = completedTask(tg.c, r, text)
	}
	l.res.note(callGet, tg, text, time.Since(start), err)
	return !isTransport(err)
}

func (r *loadResult) note(kind string, tg target, text string, d time.Duration, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err == nil {
		r.ok[kind]++
		r.latency[kind] = append(r.latency[kind], d)
	} else {
		r.failed++
		r.byError[errorClass(err)]++
		if r.firstFailure.IsZero() {
			r.firstFailure = time.Now()
		}
		if sent := time.Now().Add(-d); sent.After(r.lastFailure) {
			r.lastFailure = sent
		}
	}
	r.waiters = slices.DeleteFunc(r.waiters, func(w loadWaiter) bool {
		if w.cond(r) {
			close(w.ch)
			return true
		}
		return false
	})
	if err == nil {
		return
	}
	if len(r.failures) < keptFailures {
		r.failures = append(r.failures, loadFailure{kind: kind, target: tg, text: text, at: time.Now(), err: err})
	}
}

// succeeded is the number of calls that got a valid success.
func (r *loadResult) succeeded() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.succeededLocked()
}

func (r *loadResult) succeededLocked() int {
	n := 0
	for _, v := range r.ok {
		n += v
	}
	return n
}

// percentile returns the p-th percentile latency of kind's successes.
// The caller holds mu.
func (r *loadResult) percentile(kind string, p float64) time.Duration {
	d := slices.Clone(r.latency[kind])
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	i := int(float64(len(d))*p/100+0.5) - 1
	return d[min(max(i, 0), len(d)-1)]
}

// summary describes the run so far, for logs and the fault summary.
func (r *loadResult) summary() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	end := r.end
	if end.IsZero() {
		end = time.Now()
	}
	ok := r.succeededLocked()
	return fmt.Sprintf("%d calls ok (%d sends, %d gets, %d streams, %.0f/s), %d failed",
		ok, r.ok[callSend], r.ok[callGet], r.ok[callStream], float64(ok)/end.Sub(r.start).Seconds(), r.failed)
}

// latencies describes the latency percentiles of each kind.
func (r *loadResult) latencies() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var parts []string
	round := func(d time.Duration) time.Duration { return d.Round(10 * time.Microsecond) }
	for _, k := range []string{callSend, callGet, callStream} {
		if len(r.latency[k]) > 0 {
			parts = append(parts, fmt.Sprintf("%s p50 %s p99 %s max %s", k,
				round(r.percentile(k, 50)), round(r.percentile(k, 99)), round(r.percentile(k, 100))))
		}
	}
	return strings.Join(parts, ", ")
}

// failureList describes the kept failures, for a failing test.
func (r *loadResult) failureList() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	for i, f := range r.failures {
		if i == 20 {
			fmt.Fprintf(&b, "  ... %d more\n", r.failed-20)
			break
		}
		fmt.Fprintf(&b, "  %s\n", f)
	}
	return b.String()
}

// errorClass is what a failed call received, without what varies from call
// to call (ids, addresses), so the failures of a run can be counted by it.
func errorClass(err error) string {
	var e rpcError
	switch {
	case errors.As(err, &e):
		return e.Error()
	case isTransport(err):
		return "no answer"
	}
	s := err.Error()
	if len(s) > 120 {
		s = s[:120]
	}
	return s
}

// isTransport reports whether a failure got no HTTP answer at all.
func isTransport(err error) bool { return errors.Is(err, errTransport) }
