package store

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a2agate/gateway/internal/testlog"
	"github.com/a2agate/gateway/internal/testredis"
)

// SaveSend's writes land behind the caller's back, in the order they were
// made, and Close writes those still queued: another store reading the
// same keys afterwards finds every key's last record.
func TestRedisSaveSendWrittenInOrderByClose(t *testing.T) {
	t.Parallel()
	addr, prefix := testredis.Addr(t), testPrefix(t)
	clock := newFakeClock()
	s := openRedisStore(t, RedisConfig{Address: addr, KeyPrefix: prefix, now: clock.Now})
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
		// This replica reads its own records at once, written or not.
		if rec, err := s.LoadSend(ctx, key, clock.Now()); err != nil || rec.State != SendTask {
			t.Fatalf("LoadSend(%d) right after SaveSend = %+v, %v; want the task record", i, rec, err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	other := openRedisStore(t, RedisConfig{Address: addr, KeyPrefix: prefix, now: clock.Now})
	for i := range keys {
		rec, err := other.LoadSend(ctx, SendKey{Agent: "a", Owner: "o", Key: strconv.Itoa(i)}, clock.Now())
		if err != nil || rec.State != SendTask || rec.TaskID != "t"+strconv.Itoa(i) {
			t.Fatalf("key %d from another store after Close = %+v, %v; want its last record, the task", i, rec, err)
		}
	}
}

// A claim sees this replica's record still queued: a send found not
// accepted is claimed over, not taken for the running claim it replaced.
func TestRedisClaimSeesQueuedSave(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	s := openRedisStore(t, RedisConfig{Address: testredis.Addr(t), KeyPrefix: testPrefix(t), now: clock.Now})
	ctx := context.Background()
	for i := range 50 {
		key := SendKey{Agent: "a", Owner: "o", Key: strconv.Itoa(i)}
		if _, _, claimed, _ := s.ClaimSend(ctx, Admission{Agent: "a", Owner: "o"}, key, running(clock, "d"), clock.Now()); !claimed {
			t.Fatalf("first claim of %d not made", i)
		}
		failed := running(clock, "d")
		failed.State = SendNotAccepted
		if err := s.SaveSend(ctx, key, failed); err != nil {
			t.Fatal(err)
		}
		_, prior, claimed, err := s.ClaimSend(ctx, Admission{Agent: "a", Owner: "o"}, key, running(clock, "d"), clock.Now())
		if !claimed || prior.State != SendNotAccepted || err != ErrNotFound {
			t.Fatalf("claim of %d after its send was not accepted = %+v, %v, %v; want claimed over the not-accepted record", i, prior, claimed, err)
		}
	}
}

// A record that cannot be written is logged: its send's retries wait out
// the claim's lease, and the operator learns why.
func TestRedisSaveSendFailureLogged(t *testing.T) {
	t.Parallel()
	proxy := startFaultProxy(t, testredis.Addr(t))
	var logs testlog.Buffer
	clock := newFakeClock()
	s := openRedisStore(t, RedisConfig{Address: proxy.addr, KeyPrefix: testPrefix(t), now: clock.Now,
		DialTimeout: 200 * time.Millisecond, ReadTimeout: 200 * time.Millisecond, WriteTimeout: 200 * time.Millisecond,
		log: slog.New(slog.NewTextHandler(&logs, nil))})
	proxy.setMode(refuse)
	if err := s.SaveSend(context.Background(), SendKey{Agent: "a", Owner: "o", Key: "k"}, running(clock, "d")); err != nil {
		t.Fatalf("SaveSend = %v; want it queued", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "send outcomes could not be written") {
		t.Fatalf("log after a failed write = %q; want the failure", logs.String())
	}
}
