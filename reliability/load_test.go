package reliability

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
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
	prefix string
	stop   chan struct{}
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
	return fmt.Sprintf("%s %s %q at %s: %v", f.kind, f.target, f.text, f.at.Format("15:04:05.000"), f.err)
}

const keptFailures = 200

// startLoad starts workers calling through cl. Message texts start with
// prefix, so the backends' record tells the runs apart.
func startLoad(cl *client, workers int, prefix string) *load {
	l := &load{cl: cl, prefix: prefix, stop: make(chan struct{}), res: &loadResult{
		ok: map[string]int{}, latency: map[string][]time.Duration{}, start: time.Now(),
	}}
	for w := range workers {
		l.wg.Go(func() { l.work(w) })
	}
	return l
}

// halt stops the workers once their calls in flight are answered.
func (l *load) halt() *loadResult {
	close(l.stop)
	l.wg.Wait()
	l.res.end = time.Now()
	return l.res
}

func (l *load) work(w int) {
	for n := 0; ; n++ {
		select {
		case <-l.stop:
			return
		default:
		}
		tg := targets[(w+n)%len(targets)]
		text := fmt.Sprintf("%s-%d-%d", l.prefix, w, n)
		id := fmt.Sprintf("%d-%d", w, n)
		// The calls are not canceled when the run stops: a call in flight
		// is answered, and its answer counts.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		if n%3 == 2 {
			d, err := l.cl.streamAndCheck(ctx, tg, id, text)
			l.res.note(callStream, tg, text, d, err)
		} else {
			start := time.Now()
			task, err := l.cl.sendAndCheck(ctx, tg, id, text)
			l.res.note(callSend, tg, text, time.Since(start), err)
			if err == nil {
				start = time.Now()
				r, err := l.cl.call(ctx, tg, id+"g", dialect.GetTask, `{"id":"`+task.Get("id").Str+`"}`)
				if err == nil {
					_, err = completedTask(tg.c, r, text)
				}
				l.res.note(callGet, tg, text, time.Since(start), err)
			}
		}
		cancel()
	}
}

func (r *loadResult) note(kind string, tg target, text string, d time.Duration, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err == nil {
		r.ok[kind]++
		r.latency[kind] = append(r.latency[kind], d)
		return
	}
	r.failed++
	if len(r.failures) < keptFailures {
		r.failures = append(r.failures, loadFailure{kind: kind, target: tg, text: text, at: time.Now(), err: err})
	}
}

// succeeded is the number of calls that got a valid success.
func (r *loadResult) succeeded() int {
	n := 0
	for _, v := range r.ok {
		n += v
	}
	return n
}

// percentile returns the p-th percentile latency of kind's successes.
func (r *loadResult) percentile(kind string, p float64) time.Duration {
	d := slices.Clone(r.latency[kind])
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	i := int(float64(len(d))*p/100+0.5) - 1
	return d[min(max(i, 0), len(d)-1)]
}

// summary describes the run for logs and the fault summary.
func (r *loadResult) summary() string {
	var b strings.Builder
	secs := r.end.Sub(r.start).Seconds()
	fmt.Fprintf(&b, "%d calls ok (%d sends, %d gets, %d streams, %.0f/s), %d failed",
		r.succeeded(), r.ok[callSend], r.ok[callGet], r.ok[callStream], float64(r.succeeded())/secs, r.failed)
	return b.String()
}

// latencies describes the latency percentiles of each kind.
func (r *loadResult) latencies() string {
	var parts []string
	for _, k := range []string{callSend, callGet, callStream} {
		if len(r.latency[k]) > 0 {
			parts = append(parts, fmt.Sprintf("%s p50 %s p99 %s max %s", k,
				r.percentile(k, 50).Round(10*time.Microsecond), r.percentile(k, 99).Round(10*time.Microsecond), r.percentile(k, 100).Round(10*time.Microsecond)))
		}
	}
	return strings.Join(parts, ", ")
}

// failureList describes the kept failures, for a failing test.
func (r *loadResult) failureList() string {
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

// isTransport reports whether a failure got no HTTP answer at all.
func isTransport(err error) bool { return errors.Is(err, errTransport) }
