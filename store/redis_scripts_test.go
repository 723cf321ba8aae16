package store

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2agate/gateway/internal/redistopo"
)

// evalHook counts the scripts sent in full (EVAL), which a Redis that
// lacks one of them (NOSCRIPT) is sent.
type evalHook struct{ evals atomic.Int64 }

func (h *evalHook) count(cmd redis.Cmder) {
	if cmd.Name() == "eval" {
		h.evals.Add(1)
	}
}

func (h *evalHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *evalHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.count(cmd)
		return next(ctx, cmd)
	}
}

func (h *evalHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			h.count(cmd)
		}
		return next(ctx, cmds)
	}
}

// TestRedisSendAfterScriptFlush: a Redis that lost the scripts (SCRIPT
// FLUSH, as after a restart or a failover to a node that never ran them)
// still serves the next send, whichever way its scripts go (alone, through
// the autopipeliner, in GetClaimSend's pipeline): each is sent in full once,
// then by its SHA again. The test has a Redis of its own: a flush of the
// shared one would cost other tests' counted round trips.
func TestRedisSendAfterScriptFlush(t *testing.T) {
	t.Parallel()
	node := redistopo.StartPlain(t)
	admin := redis.NewClient(&redis.Options{Addr: node.Addr})
	t.Cleanup(func() { admin.Close() })
	s := openRedisStore(t, RedisConfig{Address: node.Addr, KeyPrefix: freshPrefix()})
	hook := &evalHook{}
	s.client.AddHook(hook)
	ctx := context.Background()
	send := func(n string) {
		t.Helper()
		key := SendKey{Agent: "a", Owner: "o", Key: "k" + n}
		rec := SendRecord{Digest: "d", State: SendRunning, Expires: time.Now().Add(time.Hour)}
		if _, _, claimed, err := s.ClaimSend(ctx, Admission{Agent: "a", Owner: "o", ContextID: "c" + n}, key, rec, time.Now()); !claimed || !errors.Is(err, ErrNotFound) {
			t.Fatalf("ClaimSend(%s) = %v, %v; want claimed, ErrNotFound", n, claimed, err)
		}
		rec.State, rec.TaskID = SendTask, "t"+n
		if err := s.PutSend(ctx, Task{ID: "t" + n, ContextID: "c" + n, Agent: "a", Owner: "o", State: "TASK_STATE_COMPLETED"}, key, rec); err != nil {
			t.Fatalf("PutSend(%s) = %v", n, err)
		}
		if got, err := s.LoadSend(ctx, key, time.Now()); err != nil || got.TaskID != "t"+n {
			t.Fatalf("LoadSend(%s) = %+v, %v", n, got, err)
		}
		again := SendKey{Agent: "a", Owner: "o", Key: "again" + n}
		if task, _, claimed, err := s.GetClaimSend(ctx, "a", "t"+n, again, rec, time.Now()); err != nil || !claimed || task.ContextID != "c"+n {
			t.Fatalf("GetClaimSend(%s) = %+v, %v, %v; want the task, claimed", n, task, claimed, err)
		}
	}
	flush := func() {
		t.Helper()
		if err := admin.ScriptFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
	}
	evals := func(want int64, when string) {
		t.Helper()
		if got := hook.evals.Swap(0); got != want {
			t.Errorf("%s: %d scripts sent in full, want %d", when, got, want)
		}
	}

	send("0")
	evals(3, "first send") // the scripts were never loaded
	send("1")
	evals(0, "second send")
	flush()
	send("2")
	evals(3, "send after SCRIPT FLUSH")
	send("3")
	evals(0, "send after the reload")

	s.inFlight.Add(pipelineFrom - 1) // as if other sends' scripts were in flight
	defer s.inFlight.Add(-(pipelineFrom - 1))
	flush()
	send("4")
	evals(3, "pipelined send after SCRIPT FLUSH")
	send("5")
	evals(0, "pipelined send after the reload")
}
