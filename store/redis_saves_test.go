package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"
)

// SaveSend's writes land in the order they were made: another store finds
// every key's last record.
func TestRedisSaveSendWrittenInOrder(t *testing.T) {
	t.Parallel()
	open, clock := sharedIndex(t)
	s := open()
	ctx := context.Background()
	const keys = 300 // more than one pipeline's worth
	for i := range keys {
		key := SendKey{Agent: "a", Owner: "o", Key: strconv.Itoa(i)}
		for _, state := range []string{SendRunning, SendRunning, SendTask} {
			rec := running(clock, "d")
			rec.State, rec.TaskID = state, "t"+strconv.Itoa(i)
			if err := s.SaveSend(ctx, key, rec); err != nil {
				t.Fatalf("SaveSend(%d, %s) = %v", i, state, err)
			}
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	other := open()
	for i := range keys {
		rec, err := other.LoadSend(ctx, SendKey{Agent: "a", Owner: "o", Key: strconv.Itoa(i)}, clock.Now())
		if err != nil || rec.State != SendTask || rec.TaskID != "t"+strconv.Itoa(i) {
			t.Fatalf("key %d from another store after Close = %+v, %v; want its last record, the task", i, rec, err)
		}
	}
}

// Sends saving at once share round trips, and each returns once its own
// record is in Redis: another store reads every one of them at once.
func TestRedisSaveSendGroupCommit(t *testing.T) {
	t.Parallel()
	open, clock := sharedIndex(t)
	s, other := open(), open()
	hook := &countingHook{}
	s.client.AddHook(sentHook{cmd: hook.count, trip: hook.trip})
	const savers = 64
	var wg sync.WaitGroup
	errs := make(chan error, savers)
	for i := range savers {
		wg.Go(func() {
			key := SendKey{Agent: "a", Owner: "o", Key: strconv.Itoa(i)}
			rec := running(clock, "d")
			rec.State, rec.TaskID = SendTask, "t"+strconv.Itoa(i)
			if err := s.SaveSend(context.Background(), key, rec); err != nil {
				errs <- err
				return
			}
			if got, err := other.LoadSend(context.Background(), key, clock.Now()); err != nil || got.TaskID != rec.TaskID {
				errs <- fmt.Errorf("key %d read by another store once saved = %+v, %v", i, got, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// The connections' handshakes are counted too; a save never costs a
	// trip of its own beyond its share of a pipeline.
	trips := hook.trips.Load()
	if trips > savers {
		t.Errorf("%d saves took %d round trips; want at most one each", savers, trips)
	}
	t.Logf("%d saves in %d round trips", savers, trips)
}

// A record that cannot be written fails its SaveSend, closed.
func TestRedisSaveSendFailsClosed(t *testing.T) {
	t.Parallel()
	s, proxy, clock := openBehindFaultProxy(t, RedisConfig{
		DialTimeout: 200 * time.Millisecond, ReadTimeout: 200 * time.Millisecond, WriteTimeout: 200 * time.Millisecond})
	proxy.setMode(refuse)
	if err := s.SaveSend(context.Background(), SendKey{Agent: "a", Owner: "o", Key: "k"}, running(clock, "d")); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("SaveSend with Redis cut off = %v; want ErrUnavailable", err)
	}
}
