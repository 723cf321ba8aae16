package store

import (
	"context"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// sendSaves writes the send records SaveSend is given by group commit: one
// goroutine writes the records of the callers waiting meanwhile in one
// pipeline, so that at load one round trip carries many sends' outcomes
// instead of one each (the system calls of a round trip, on both sides, are
// most of what it costs). Each caller still waits for its own write, so a
// record is in Redis once SaveSend returned: a retry on another replica
// finds it as soon as the first caller has its answer. Records are written
// in the order they were saved, which keeps a claim's renewal from landing
// after the outcome that ends it.
type sendSaves struct {
	client redis.UniversalClient
	// timeout bounds one pipeline's write and reply.
	timeout time.Duration

	queue chan *queuedSave
	// gate orders save's check of closed and its queueing before close,
	// so that no record is queued once the writer may have stopped.
	gate    sync.RWMutex
	closed  bool
	closing chan struct{}
	stopped chan struct{}
	once    sync.Once
}

// queuedSave is one record to write, and to count in its owner's index
// (redisKeys) by member and score when share is not 0. It holds its SET's
// and ZADD's arguments, built by SaveSend pointing at its fields (as a
// script's call does, redis_call.go), and the record's encoding.
type queuedSave struct {
	key, index, member string
	val                wireBytes
	ttl                int64 // ms
	score              float64
	share              int
	err                error
	// written is closed once the write ended, with err set.
	written chan struct{}

	set  [5]any
	add  [4]any
	wire sendWire
}

// args builds q's SET and ZADD arguments.
func (q *queuedSave) args() {
	q.set = [5]any{"set", &q.key, &q.val, "px", &q.ttl}
	q.add = [4]any{"zadd", &q.index, &q.score, &q.member}
}

// sendSaveQueue bounds the records waiting: past it SaveSend waits, within
// its caller's deadline, for a place.
const sendSaveQueue = 4096

// sendSaveBatch bounds the records one pipeline writes.
const sendSaveBatch = 256

func newSendSaves(client redis.UniversalClient, timeout time.Duration) *sendSaves {
	s := &sendSaves{client: client, timeout: timeout, queue: make(chan *queuedSave, sendSaveQueue),
		closing: make(chan struct{}), stopped: make(chan struct{})}
	go s.run()
	return s
}

// save writes a record and returns once it is written, or failed to be, or
// ctx ended (the write may land all the same, as a timed-out command's may).
func (s *sendSaves) save(ctx context.Context, q *queuedSave) error {
	q.written = make(chan struct{})
	if err := s.enqueue(ctx, q); err != nil {
		return err
	}
	select {
	case <-q.written:
		return q.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *sendSaves) enqueue(ctx context.Context, q *queuedSave) error {
	s.gate.RLock()
	defer s.gate.RUnlock()
	if s.closed {
		return redis.ErrClosed
	}
	select {
	case s.queue <- q:
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
			// enqueue refuses new records by now; write those waiting.
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
	defer cancel()
	sets := make([]*redis.StatusCmd, len(batch))
	adds := make([]*redis.IntCmd, len(batch))
	_, _ = s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, q := range batch {
			sets[i] = redis.NewStatusCmd(ctx, q.set[:]...)
			sets[i].SetFirstKeyPos(1)
			_ = p.Process(ctx, sets[i])
			if q.share > 0 {
				adds[i] = redis.NewIntCmd(ctx, q.add[:]...)
				adds[i].SetFirstKeyPos(1)
				_ = p.Process(ctx, adds[i])
			}
		}
		return nil
	})
	// A record new to its owner's index (written without a claim, or
	// dropped for the share meanwhile) is counted there by a script of
	// its own, rare enough not to cost the others a script each.
	counts := make([]*redis.Cmd, len(batch))
	var uncounted []int
	for i, q := range batch {
		q.err = sets[i].Err()
		if q.err == nil && adds[i] != nil {
			if q.err = adds[i].Err(); q.err == nil && adds[i].Val() == 1 {
				uncounted = append(uncounted, i)
			}
		}
	}
	if len(uncounted) > 0 {
		_, _ = s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, i := range uncounted {
				q := batch[i]
				counts[i] = countSendScript.Eval(ctx, p, []string{q.index, q.key}, q.member, q.share, q.ttl)
			}
			return nil
		})
		for _, i := range uncounted {
			batch[i].err = counts[i].Err()
		}
	}
	for _, q := range batch {
		close(q.written)
	}
}

// close writes the records waiting and stops the writer, within ctx.
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
