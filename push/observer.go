package push

import (
	"net/http"
	"time"
)

// Outcome is how a delivery ended, from a closed set fit for a metric label.
type Outcome string

const (
	// Delivered: the receiver answered 2xx.
	Delivered Outcome = "delivered"
	// Rejected: the receiver answered a status that retrying does not change
	// (4xx other than 408 and 429, or a 3xx redirect, which is not followed).
	Rejected Outcome = "rejected"
	// Failed: every attempt failed on a retryable error, or a TLS
	// certificate did not verify.
	Failed Outcome = "failed"
	// DroppedQueueFull: Enqueue refused it because the queue was full.
	DroppedQueueFull Outcome = "dropped_queue_full"
	// RefusedPolicy: the URL, or an address it resolved to, is refused by
	// the Policy.
	RefusedPolicy Outcome = "refused_policy"
	// AbandonedShutdown: the queue closed before it went out.
	AbandonedShutdown Outcome = "abandoned_shutdown"
)

// Outcomes lists every Outcome, for pre-creating metric series.
var Outcomes = []Outcome{Delivered, Rejected, Failed, DroppedQueueFull, RefusedPolicy, AbandonedShutdown}

// Attempt is one POST of a delivery.
type Attempt struct {
	// N counts attempts from 1.
	N int
	// Status is the receiver's HTTP status, 0 when none came.
	Status int
	// Err is why the attempt failed without a status; it names no token
	// or credential.
	Err error
	// Latency is from sending the request to the end of the response.
	Latency time.Duration
	// Wait is how long the sender waits before the next attempt; 0 when
	// there is none.
	Wait time.Duration
}

// Result is how a delivery ended.
type Result struct {
	Outcome Outcome
	// Attempts is how many POSTs were made (0 when none was).
	Attempts int
	// Status is the last HTTP status received, 0 when none came.
	Status int
	// Err says what went wrong when the outcome is not Delivered.
	Err error
	// Latency is from Enqueue (or Send) to the outcome, waits included.
	Latency time.Duration
}

// Observer is told about every attempt and every outcome, for metrics,
// logs and traces; the package itself logs nothing. Any func may be nil. They are
// called from the delivering goroutines, so they must be safe for concurrent
// use, return quickly, and not call back into the Queue. Queue depth is read
// with Queue.Len (a Prometheus GaugeFunc fits).
type Observer struct {
	// StartAttempt is called before each attempt is sent, n counting from
	// 1, with the attempt's request headers, to which it may add (the
	// trace context: a span per attempt). The func it returns, when not
	// nil, is called once when the attempt ended, with the outcome it
	// gave the delivery: "" when another attempt follows.
	StartAttempt func(d *Delivery, n int, h http.Header) (end func(a Attempt, outcome Outcome))
	// OnAttempt is called after each attempt.
	OnAttempt func(d *Delivery, a Attempt)
	// OnOutcome is called exactly once for each delivery given to Enqueue
	// or EnqueueAll (and each Send), whatever happened.
	OnOutcome func(d *Delivery, r Result)
}

func (o Observer) startAttempt(d *Delivery, n int, h http.Header) func(Attempt, Outcome) {
	if o.StartAttempt == nil {
		return nil
	}
	return o.StartAttempt(d, n, h)
}

func (o Observer) attempt(d *Delivery, a Attempt) {
	if o.OnAttempt != nil {
		o.OnAttempt(d, a)
	}
}

func (o Observer) outcome(d *Delivery, r Result) {
	if o.OnOutcome != nil {
		o.OnOutcome(d, r)
	}
}

// Delivery is one notification to send: the body already in the caller's
// dialect and the headers prepared by the caller (see Headers).
type Delivery struct {
	// TaskID orders deliveries: those for one task and one URL go out one
	// at a time, in Enqueue order.
	TaskID string
	// URL is the caller's webhook.
	URL string
	// Header is sent as is; it carries the token and credentials, so the
	// package never puts it in an error.
	Header http.Header
	// Body is POSTed as is.
	Body []byte
	// Meta is handed back to the Observer untouched: the edge's labels for
	// metrics and logs (agent, config id, dialect).
	Meta any
}
