package store

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// sendSaves writes the send records SaveSend is given behind the caller's
// back: a send's outcome is written after the backend answered and before
// the caller gets the answer, and only a retry reads it, so the answer need
// not wait a round trip for it. One goroutine writes the records queued
// meanwhile in one pipeline, in the order they were saved, which keeps a
// claim's renewal from landing after the outcome that ends it. This
// replica's own reads of a key see a record still queued (LoadSend returns
// it, ClaimSend waits for its write); another replica's read may find the
// claim it replaces for the moment of the write, which a retry polls past.
// The ownership rule is untouched: tasks are written by Put, which waits.
type sendSaves struct {
	client redis.UniversalClient
	log    *slog.Logger
	// timeout bounds one pipeline's write and reply.
	timeout time.Duration

	queue chan *queuedSave
	// gate orders save's check of closed and its queueing before close,
	// so that no record is queued once the writer may have stopped.
	gate   sync.RWMutex
	closed bool
	mu     sync.Mutex
	// latest is each key's last record queued and not yet written.
	latest  map[string]*queuedSave
	closing chan struct{}
	stopped chan struct{}
	once    sync.Once
}

type queuedSave struct {
	key, val string
	ttl      time.Duration
	// written is closed once the write ended, well or not.
	written chan struct{}
}

// sendSaveQueue bounds the records queued: past it SaveSend waits, within
// its caller's deadline, for the writer to catch up.
const sendSaveQueue = 4096

// sendSaveBatch bounds the records one pipeline writes.
const sendSaveBatch = 256

func newSendSaves(client redis.UniversalClient, log *slog.Logger, timeout time.Duration) *sendSaves {
	s := &sendSaves{client: client, log: log, timeout: timeout,
		queue: make(chan *queuedSave, sendSaveQueue), latest: map[string]*queuedSave{},
		closing: make(chan struct{}), stopped: make(chan struct{})}
	go s.run()
	return s
}

// save queues a record. It fails once the store is closing, or when the
// queue stays full past ctx.
func (s *sendSaves) save(ctx context.Context, key, val string, ttl time.Duration) error {
	q := &queuedSave{key: key, val: val, ttl: ttl, written: make(chan struct{})}
	s.gate.RLock()
	defer s.gate.RUnlock()
	if s.closed {
		return redis.ErrClosed
	}
	// latest is set before the record is queued, and under the lock the
	// writer takes to clear it, so that no read misses a record between
	// the two.
	s.mu.Lock()
	s.latest[key] = q
	s.mu.Unlock()
	select {
	case s.queue <- q:
		return nil
	case <-ctx.Done():
		s.forget(q)
		return ctx.Err()
	}
}

func (s *sendSaves) forget(q *queuedSave) {
	s.mu.Lock()
	if s.latest[q.key] == q {
		delete(s.latest, q.key)
	}
	s.mu.Unlock()
	close(q.written)
}

// pending returns the last record of key queued and not yet written, none
// once the store is closing (its reads fail then).
func (s *sendSaves) pending(key string) (*queuedSave, bool) {
	select {
	case <-s.closing:
		return nil, false
	default:
	}
	s.mu.Lock()
	q, ok := s.latest[key]
	s.mu.Unlock()
	return q, ok
}

// await waits, within ctx, until the records of key queued so far are
// written (well or not).
func (s *sendSaves) await(ctx context.Context, key string) error {
	q, ok := s.pending(key)
	if !ok {
		return nil
	}
	select {
	case <-q.written:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *sendSaves) run() {
	defer close(s.stopped)
	batch := make([]*queuedSave, 0, sendSaveBatch)
	for {
		select {
		case q := <-s.queue:
			batch = append(batch[:0], q)
		case <-s.closing:
			// Save refuses new records by now; write those queued.
			for {
				select {
				case q := <-s.queue:
					batch = append(batch[:0], q)
					s.drain(&batch)
					s.write(batch)
				default:
					return
				}
			}
		}
		s.drain(&batch)
		s.write(batch)
	}
}

// drain adds to batch the records queued meanwhile, without waiting.
func (s *sendSaves) drain(batch *[]*queuedSave) {
	for len(*batch) < sendSaveBatch {
		select {
		case q := <-s.queue:
			*batch = append(*batch, q)
		default:
			return
		}
	}
}

func (s *sendSaves) write(batch []*queuedSave) {
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	_, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, q := range batch {
			p.Set(ctx, q.key, q.val, q.ttl)
		}
		return nil
	})
	cancel()
	if err != nil {
		s.log.Error("task index: send outcomes could not be written: retries of these sends wait out their claims' leases",
			"records", len(batch), "error", err)
	}
	for _, q := range batch {
		s.forget(q)
	}
}

// close writes the records queued and stops the writer, within ctx.
func (s *sendSaves) close(ctx context.Context) {
	s.once.Do(func() {
		s.gate.Lock()
		s.closed = true
		s.gate.Unlock()
		close(s.closing)
	})
	select {
	case <-s.stopped:
	case <-ctx.Done():
	}
}
