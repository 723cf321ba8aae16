package push

import (
	"context"
	"errors"
	"sync"
	"time"
)

var (
	// ErrQueueFull is returned by Enqueue when QueueSize deliveries, or
	// QueueBytes of their bodies, are waiting or in flight.
	ErrQueueFull = errors.New("push delivery queue is full")
	// ErrClosed is returned by Enqueue once Close has begun.
	ErrClosed = errors.New("push delivery queue is closed")
)

// Queue delivers an agent's notifications: a bounded number waiting, a
// bounded number in flight, one at a time per task and URL.
type Queue struct {
	sender   *Sender
	observer Observer
	size     int
	maxBytes int64
	// laneSize and laneBytes bound one lane (one task's deliveries to one
	// URL): its deliveries go out one at a time, so a slow receiver drains
	// it at one attempt's pace, and a lane that could hold the whole queue
	// would have every other task's deliveries refused meanwhile. The
	// queue is shared by at least as many lanes as there are workers, or,
	// when queue_size is under twice workers, by half as many lanes as it
	// has places: a lane holds at least 2, so that a task's next delivery
	// can wait behind the one in flight rather than be refused.
	laneSize  int
	laneBytes int64

	mu        sync.Mutex
	cond      *sync.Cond
	lanes     map[laneKey]*lane
	ready     []*lane // lanes with a delivery to start, oldest first
	depth     int     // deliveries waiting or in flight
	bytes     int64   // their bodies
	closing   bool
	abandoned int

	run    context.Context // ends when Close gives up waiting
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

type laneKey struct{ task, url string }

// lane holds one task's deliveries to one URL; items[0] is in flight or
// next. A lane exists while it has items, and is in ready exactly when no
// worker holds it.
type lane struct {
	key   laneKey
	items []queued
	bytes int64 // their bodies
}

type queued struct {
	d        Delivery
	enqueued time.Time
}

// NewQueue starts c.Workers delivering goroutines; Close stops them.
func NewQueue(c *Config, s *Sender, o Observer) *Queue {
	workers := max(c.Workers, 1)
	q := &Queue{sender: s, observer: o, size: c.QueueSize, maxBytes: c.QueueBytes, lanes: map[laneKey]*lane{},
		laneSize: max(c.QueueSize/workers, min(c.QueueSize, 2)), laneBytes: max(c.QueueBytes/int64(workers), c.MaxBodyBytes)}
	q.cond = sync.NewCond(&q.mu)
	q.run, q.cancel = context.WithCancel(context.Background())
	for range c.Workers {
		q.wg.Add(1)
		go q.work()
	}
	return q
}

// Enqueue queues d and returns at once. It returns ErrQueueFull when the
// queue is full and ErrClosed when it is closing; either way d will not be
// sent, and the Observer has seen its outcome.
func (q *Queue) Enqueue(d Delivery) error {
	return q.EnqueueAll([]Delivery{d})
}

// EnqueueAll queues every one of ds, or none: a notification fanned out to
// several webhooks is refused whole when the queue lacks room for all of
// them, so that the backend's retry of it reaches none twice. A fan-out
// larger than the whole queue, in count or bytes, is taken when the queue
// is empty, so that it is not refused forever. Refused, each of ds is observed, as by Enqueue.
func (q *Queue) EnqueueAll(ds []Delivery) error {
	if len(ds) == 0 {
		return nil
	}
	var n int64
	for i := range ds {
		n += int64(len(ds[i].Body))
	}
	q.mu.Lock()
	var err error
	switch {
	case q.closing:
		err = ErrClosed
	case q.depth > 0 && (q.depth+len(ds) > q.size || q.bytes+n > q.maxBytes):
		err = ErrQueueFull
	case q.laneFull(ds):
		err = ErrQueueFull
	default:
		now := time.Now()
		for _, d := range ds {
			q.add(d, now)
		}
	}
	q.mu.Unlock()
	var refused Outcome
	switch err {
	case ErrClosed:
		refused = AbandonedShutdown
	case ErrQueueFull:
		refused = DroppedQueueFull
	default:
		return nil
	}
	for i := range ds {
		q.observer.outcome(&ds[i], Result{Outcome: refused, Err: err})
	}
	return err
}

// laneFull reports whether one of ds would take its lane past laneSize
// or laneBytes. An empty lane takes one delivery whatever its size, as an
// empty queue does. The caller holds q.mu.
func (q *Queue) laneFull(ds []Delivery) bool {
	for i := range ds {
		l := q.lanes[laneKey{ds[i].TaskID, ds[i].URL}]
		if l == nil {
			continue
		}
		if len(l.items)+1 > q.laneSize || l.bytes+int64(len(ds[i].Body)) > q.laneBytes {
			return true
		}
	}
	return false
}

// add queues d in its lane. The caller holds q.mu.
func (q *Queue) add(d Delivery, enqueued time.Time) {
	q.depth++
	q.bytes += int64(len(d.Body))
	key := laneKey{d.TaskID, d.URL}
	l := q.lanes[key]
	if l == nil {
		l = &lane{key: key}
		q.lanes[key] = l
	}
	l.items = append(l.items, queued{d: d, enqueued: enqueued})
	l.bytes += int64(len(d.Body))
	if len(l.items) == 1 {
		q.ready = append(q.ready, l)
		q.cond.Signal()
	}
}

// Len reports the deliveries waiting or in flight.
func (q *Queue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.depth
}

// Close stops accepting deliveries and waits until every queued one went out
// or ctx ends; then the ones in flight are cancelled and the rest dropped,
// each observed as AbandonedShutdown. It returns how many were abandoned,
// and ctx's error when it ended first. Call it once.
func (q *Queue) Close(ctx context.Context) (abandoned int, err error) {
	q.mu.Lock()
	q.closing = true
	q.cond.Broadcast()
	q.mu.Unlock()

	stopped := make(chan struct{})
	go func() {
		q.wg.Wait()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-ctx.Done():
		err = ctx.Err()
		q.mu.Lock()
		q.cancel()
		q.cond.Broadcast()
		q.mu.Unlock()
		<-stopped // attempts and waits end with q.run
	}
	q.cancel()

	q.mu.Lock()
	var left []queued
	for _, l := range q.lanes {
		left = append(left, l.items...)
	}
	q.lanes, q.ready = map[laneKey]*lane{}, nil
	q.depth -= len(left)
	for _, it := range left {
		q.bytes -= int64(len(it.d.Body))
	}
	q.abandoned += len(left)
	abandoned = q.abandoned
	q.mu.Unlock()
	for _, it := range left {
		q.observer.outcome(&it.d, Result{Outcome: AbandonedShutdown, Err: errShutdown, Latency: time.Since(it.enqueued)})
	}
	return abandoned, err
}

func (q *Queue) work() {
	defer q.wg.Done()
	for {
		q.mu.Lock()
		for len(q.ready) == 0 && q.run.Err() == nil && !(q.closing && q.depth == 0) {
			q.cond.Wait()
		}
		if len(q.ready) == 0 || q.run.Err() != nil {
			q.mu.Unlock()
			return
		}
		l := q.ready[0]
		q.ready = q.ready[1:]
		it := l.items[0]
		q.mu.Unlock()

		r := q.sender.send(q.run, &it.d, q.observer)
		r.Latency = time.Since(it.enqueued)

		q.mu.Lock()
		l.items[0] = queued{} // the body is not kept by the lane's array
		l.items = l.items[1:]
		q.depth--
		q.bytes -= int64(len(it.d.Body))
		l.bytes -= int64(len(it.d.Body))
		if len(l.items) > 0 {
			q.ready = append(q.ready, l)
			q.cond.Signal()
		} else {
			delete(q.lanes, l.key)
		}
		if r.Outcome == AbandonedShutdown {
			q.abandoned++
		}
		if q.closing && q.depth == 0 {
			q.cond.Broadcast()
		}
		q.mu.Unlock()
		q.observer.outcome(&it.d, r)
	}
}
