package store

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/a2agate/gateway/internal/testrace"
	"github.com/a2agate/gateway/internal/testredis"
)

// redisSendAllocs is the allocation budget of one first send on Redis
// from a lone caller (TestRedisSendAllocs): the claim, then the task with
// the send's outcome, through go-redis's client. It is the figure measured
// when it was set, with no slack: AllocsPerRun's average over its runs
// does not move with the machine, and one allocation more is a regression
// to see. Lower it when a change saves allocations.
const redisSendAllocs = 14

// TestRedisSendAllocs holds a send's allocations on Redis, the store's and
// go-redis's for its two scripts, to a budget, so that a regression fails.
// It runs without t.Parallel: AllocsPerRun counts the whole process's.
func TestRedisSendAllocs(t *testing.T) {
	if testrace.Enabled {
		t.Skip("the race detector allocates: budgets hold without it")
	}
	if testing.Short() {
		t.Skip("allocation budgets run without -short")
	}
	s := openRedisStore(t, RedisConfig{Address: testredis.Addr(t), KeyPrefix: testPrefix(t)})
	ctx := context.Background()
	const runs = 200
	type send struct {
		a    Admission
		key  SendKey
		task Task
	}
	// Built beforehand, so that only the store's allocations are counted.
	sends := make([]send, runs+2)
	for i := range sends {
		n := strconv.Itoa(i)
		sends[i] = send{
			a:    Admission{Agent: "a", Owner: "https://issuer.example|caller-1", ContextID: "ctx-" + n},
			key:  SendKey{Agent: "a", Owner: "https://issuer.example|caller-1", Key: "msg-" + n},
			task: Task{ID: "task-" + n, ContextID: "ctx-" + n, Owner: "https://issuer.example|caller-1", Agent: "a", Backend: "b", State: "TASK_STATE_COMPLETED"},
		}
	}
	now := time.Now()
	running := SendRecord{Digest: "9c5d1e0f3b7a2c64", State: SendRunning, Holder: "gw-3f9a1c", Lease: now.Add(30 * time.Second), Expires: now.Add(10 * time.Minute)}
	next := 0
	var failed error
	sendOne := func() {
		c := sends[next]
		next++
		if _, _, claimed, err := s.ClaimSend(ctx, c.a, c.key, running, now); !claimed || !errors.Is(err, ErrNotFound) {
			failed = errors.Join(failed, err, errors.New("not claimed"))
			return
		}
		done := SendRecord{Digest: running.Digest, State: SendTask, TaskID: c.task.ID, Expires: running.Expires}
		failed = errors.Join(failed, s.PutSend(ctx, c.task, c.key, done))
	}
	sendOne() // the connection opened, the scripts loaded
	got := testing.AllocsPerRun(runs, sendOne)
	if failed != nil {
		t.Fatal(failed)
	}
	t.Logf("%.1f allocations per send (budget %d)", got, redisSendAllocs)
	if got > redisSendAllocs {
		t.Errorf("%.1f allocations per send, over the budget of %d", got, redisSendAllocs)
	}
}
