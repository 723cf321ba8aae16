package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2agate/gateway/internal/redistopo"
	"github.com/a2agate/gateway/internal/testredis"
)

// evalHook counts the scripts sent in full (EVAL), which a Redis that
// lacks one of them (NOSCRIPT) is sent.
type evalHook struct{ evals atomic.Int64 }

func (h *evalHook) count(cmd redis.Cmder) {
	if cmd.Name() == "eval" {
		h.evals.Add(1)
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
	admin := clientOf(t, node.Addr)
	s := openRedisStore(t, RedisConfig{Address: node.Addr, KeyPrefix: freshPrefix()})
	hook := &evalHook{}
	s.client.AddHook(sentHook{cmd: hook.count})
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

// scriptKeysHook records the keys of each script a client sends.
type scriptKeysHook struct {
	mu   sync.Mutex
	keys [][]string
}

func (h *scriptKeysHook) record(cmd redis.Cmder) {
	if name := cmd.Name(); name != "evalsha" && name != "eval" {
		return
	}
	args := cmd.Args()
	n, _ := args[2].(int)
	keys := make([]string, n)
	for i := range keys {
		switch k := args[3+i].(type) {
		case string:
			keys[i] = k
		case *string:
			keys[i] = *k
		default:
			keys[i] = fmt.Sprintf("%T", k)
		}
	}
	h.mu.Lock()
	h.keys = append(h.keys, keys)
	h.mu.Unlock()
}

func (h *scriptKeysHook) take() [][]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	k := h.keys
	h.keys = nil
	return k
}

// TestRedisCallKeys: the keys a send's scripts are sent with, written into
// one buffer per call, are those redisKeys names (which the other calls,
// the scripts and the layout's readers use), for names of any length and
// with the layout's separators in them.
func TestRedisCallKeys(t *testing.T) {
	t.Parallel()
	prefix := testPrefix(t)
	s := openRedisStore(t, RedisConfig{Address: testredis.Addr(t), KeyPrefix: prefix})
	ctx := context.Background()
	// A Redis that never ran a script answers its EVALSHA with NOSCRIPT,
	// and the script is sent again in full: loaded first, each call is one
	// send, whichever tests ran on the shared Redis before.
	for _, script := range []*luaScript{admitScript, putScript, claimSendScript} {
		if err := s.client.ScriptLoad(ctx, script.src).Err(); err != nil {
			t.Fatal(err)
		}
	}
	hook := &scriptKeysHook{}
	s.client.AddHook(sentHook{cmd: hook.record})
	k := redisKeys{prefix: prefix}
	agent, owner, id, contextID := "agent:with}colons{0123456789", "https://issuer.example|a:b", "task:1", "ctx:1"
	ak := k.agent(agent)
	key := SendKey{Agent: agent, Owner: owner, Key: "msg:1:" + strings.Repeat("k", 120)}
	rec := SendRecord{Digest: "d", State: SendRunning, Expires: time.Now().Add(time.Hour)}
	task := Task{ID: id, ContextID: contextID, Agent: agent, Owner: owner, State: "TASK_STATE_WORKING"}
	taskKey, bucket := k.task(agent, id), k.bucket(agent, owner)
	sendKey, sends := k.sendKey(key), ak.sends(owner)
	exp, fin := ak.expIndex(owner), bucket+":fin"

	for _, c := range []struct {
		name string
		call func() error
		want []string
	}{
		{"Admit", func() error { _, err := s.Admit(ctx, Admission{Agent: agent, Owner: owner}); return err },
			[]string{exp, fin, exp, exp, exp}},
		{"Admit with a context", func() error {
			_, err := s.Admit(ctx, Admission{Agent: agent, Owner: owner, ContextID: contextID})
			return err
		}, []string{exp, fin, k.context(agent, contextID), exp, exp}},
		{"ClaimSend", func() error {
			_, _, _, err := s.ClaimSend(ctx, Admission{Agent: agent, Owner: owner}, key, rec, time.Now())
			return err
		}, []string{exp, fin, exp, sendKey, sends}},
		{"ClaimSend with a context", func() error {
			_, _, _, err := s.ClaimSend(ctx, Admission{Agent: agent, Owner: owner, ContextID: contextID}, key, rec, time.Now())
			return err
		}, []string{exp, fin, k.context(agent, contextID), sendKey, sends}},
		{"Put", func() error { return s.Put(ctx, task) },
			[]string{taskKey, bucket, ak.owners(), taskKey, taskKey, k.agents()}},
		{"PutSend", func() error { return s.PutSend(ctx, task, key, rec) },
			[]string{taskKey, bucket, ak.owners(), sendKey, sends, k.agents()}},
		{"GetClaimSend", func() error {
			_, _, _, err := s.GetClaimSend(ctx, agent, id, key, rec, time.Now())
			return err
		}, []string{sendKey, sends}},
	} {
		if err := c.call(); err != nil && !errors.Is(err, ErrNotFound) {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := hook.take()
		if len(got) != 1 || !slices.Equal(got[0], c.want) {
			t.Errorf("%s sent scripts with keys\n%q\nwant one with\n%q", c.name, got, c.want)
		}
	}
}
