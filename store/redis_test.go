package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2agate/gateway/internal/testredis"
)

// testPrefix returns a key prefix of its own for one test, and deletes its
// keys when the test ends.
func testPrefix(t *testing.T) string {
	t.Helper()
	b := make([]byte, 8)
	rand.Read(b)
	prefix := "a2agw-test:" + hex.EncodeToString(b) + ":"
	t.Cleanup(func() {
		admin := adminClient(t)
		ctx := context.Background()
		keys, err := scanKeys(ctx, admin, prefix)
		if err == nil && len(keys) > 0 {
			err = admin.Del(ctx, keys...).Err()
		}
		if err != nil {
			t.Errorf("cleaning up keys under %s: %v", prefix, err)
		}
	})
	return prefix
}

// adminClient is a plain client for inspecting Redis behind a store's back.
func adminClient(t *testing.T) *redis.Client { return clientOf(t, testredis.Addr(t)) }

// clientOf is a client of the Redis at addr, closed when tb ends.
func clientOf(tb testing.TB, addr string) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: addr})
	tb.Cleanup(func() { c.Close() })
	return c
}

func scanKeys(ctx context.Context, c *redis.Client, prefix string) ([]string, error) {
	var keys []string
	iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	return keys, iter.Err()
}

func openRedisStore(t *testing.T, cfg RedisConfig) *Redis {
	t.Helper()
	s, err := NewRedis(cfg)
	if err != nil {
		t.Fatalf("NewRedis() = %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// sharedIndex returns a function opening Redis stores that share one key
// prefix and one fake clock, as gateway replicas share an index, and the
// clock.
func sharedIndex(t *testing.T) (open func() *Redis, clock *fakeClock) {
	t.Helper()
	addr, prefix := testredis.Addr(t), testPrefix(t)
	clock = newFakeClock()
	return func() *Redis { return openRedisStore(t, RedisConfig{Address: addr, KeyPrefix: prefix, now: clock.Now}) }, clock
}

func openRedis(t *testing.T, clock *fakeClock) Store {
	addr := testredis.Addr(t)
	return openRedisStore(t, RedisConfig{Address: addr, KeyPrefix: testPrefix(t), now: clock.Now})
}

func TestRedisConformance(t *testing.T) {
	t.Parallel()
	testredis.Addr(t)
	runConformance(t, openRedis)
}

func TestRedisShareConformance(t *testing.T) {
	t.Parallel()
	addr := testredis.Addr(t)
	runShareConformance(t, func(t *testing.T, clock *fakeClock) Store {
		return openRedisStore(t, RedisConfig{Address: addr, KeyPrefix: testPrefix(t), now: clock.Now, MaxTasksPerOwner: testShare})
	})
}

// TestRedisReplicasRaceOwners plays two gateway replicas sharing one index:
// for every new id, exactly one owner's Put wins.
func TestRedisReplicasRaceOwners(t *testing.T) {
	t.Parallel()
	open, _ := sharedIndex(t)
	replicas := []Store{open(), open()}
	raceOwners(t, replicas, 50, 2)
	for i, r := range replicas {
		if n := mustLen(t, r); n != 50 {
			t.Errorf("replica %d: Len() = %d, want 50", i, n)
		}
	}
}

// TestRedisKeysExpire checks that every key the store writes carries a TTL
// (refreshed by Put), and that purging an expired task deletes its keys
// rather than waiting for Redis to expire them.
func TestRedisKeysExpire(t *testing.T) {
	t.Parallel()
	addr := testredis.Addr(t)
	prefix := testPrefix(t)
	clock := newFakeClock()
	s := openRedisStore(t, RedisConfig{Address: addr, KeyPrefix: prefix, TTL: time.Hour, now: clock.Now})
	ctx := context.Background()
	admin := adminClient(t)
	mustPut(t, s, Task{ID: "t1", ContextID: "c1", Owner: "alice", Agent: "a", State: working})
	mustPut(t, s, Task{ID: "t2", ContextID: "c2", Owner: "bob", Agent: "a", State: submitted})
	mustPut(t, s, Task{ID: "t2", ContextID: "c2", Owner: "bob", Agent: "a", State: completed, Updated: clock.Now().Add(time.Second)})

	keys, err := scanKeys(ctx, admin, prefix)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) < 10 {
		t.Fatalf("only %d keys under the prefix: %q", len(keys), keys)
	}
	for _, k := range keys {
		ttl, err := admin.PTTL(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if ttl <= 0 || ttl > time.Hour+redisTTLGrace {
			t.Errorf("key %q: TTL %v, want in (0, %v]", k, ttl, time.Hour+redisTTLGrace)
		}
	}
	// bob's task joined the final ones, eviction's candidates, when it
	// completed; alice's working task is not among them.
	for owner, want := range map[string]int64{"bob": 1, "alice": 0} {
		fin := redisKeys{prefix}.bucket("a", owner) + ":fin"
		if n, err := admin.ZCard(ctx, fin).Result(); err != nil || n != want {
			t.Errorf("ZCARD of %s's final tasks = %d, %v; want %d", owner, n, err, want)
		}
	}

	clock.Advance(time.Hour)
	mustList(t, s, Query{Agent: "a", Owner: "alice", PageSize: 10})
	mustList(t, s, Query{Agent: "a", Owner: "bob", PageSize: 10})
	if n := mustLen(t, s); n != 0 {
		t.Errorf("Len() after expiry = %d", n)
	}
	keys, err = scanKeys(ctx, admin, prefix)
	if err != nil {
		t.Fatal(err)
	}
	// Only the context owners and the agents set remain, until their own
	// TTL: they hold no task.
	for _, k := range keys {
		if k != prefix+"v2:{1:a}c:c1" && k != prefix+"v2:{1:a}c:c2" && k != prefix+"v2:agents" {
			t.Errorf("key %q survived the purge of its tasks", k)
		}
	}
}

func TestNewRedisConfigErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		cfg  RedisConfig
		want string
	}{
		{"invalid", RedisConfig{Address: "no-port", TTL: -1}, "address"},
		{"missing password file", RedisConfig{PasswordFile: filepath.Join(dir, "absent")}, "password_file"},
		{"unset password env", RedisConfig{PasswordEnv: "A2AGW_TEST_UNSET_PASSWORD_VARIABLE"}, "password_env"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewRedis(tc.cfg)
			if err == nil {
				s.Close()
				t.Fatal("NewRedis() = nil error")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("NewRedis() = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

func TestNewRedisReadsPassword(t *testing.T) {
	file := filepath.Join(t.TempDir(), "password")
	if err := os.WriteFile(file, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("A2AGW_TEST_REDIS_PASSWORD", "from-env")
	for _, tc := range []struct {
		cfg  RedisConfig
		want string
	}{
		{RedisConfig{PasswordFile: file}, "from-file"},
		{RedisConfig{PasswordEnv: "A2AGW_TEST_REDIS_PASSWORD"}, "from-env"},
		{RedisConfig{}, ""},
	} {
		s, err := NewRedis(tc.cfg)
		if err != nil {
			t.Fatalf("NewRedis(%+v) = %v", tc.cfg, err)
		}
		if got := s.client.(*redis.Client).Options().Password; got != tc.want {
			t.Errorf("NewRedis(%+v) password = %q, want %q", tc.cfg, got, tc.want)
		}
		s.Close()
	}
}

func TestRedisErrorsWrapUnavailable(t *testing.T) {
	t.Parallel()
	addr := testredis.Addr(t)
	s := openRedisStore(t, RedisConfig{Address: addr, KeyPrefix: testPrefix(t)})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := s.Put(ctx, Task{ID: "t", Agent: "a"})
	if !errors.Is(err, ErrUnavailable) || !errors.Is(err, context.Canceled) {
		t.Errorf("Put(canceled context) = %v, want ErrUnavailable wrapping context.Canceled", err)
	}
}

// BenchmarkRedisAdmit measures the check a send makes before it is
// forwarded, beside the context-owner read it replaces for a send that
// names a context.
//
//	go test -run '^$' -bench RedisAdmit -benchtime 2000x ./store
func BenchmarkRedisAdmit(b *testing.B) {
	s, err := NewRedis(RedisConfig{Address: testredis.Addr(b), KeyPrefix: fmt.Sprintf("a2agw-bench-%d:", time.Now().UnixNano()), TTL: time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	for i := range 50 {
		if err := s.Put(ctx, Task{ID: fmt.Sprint("t", i), ContextID: "c", Owner: "o", Agent: "a", State: "TASK_STATE_WORKING"}); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("Admit", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.Admit(ctx, Admission{Agent: "a", Owner: "o", ContextID: "c"}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ContextOwner", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.ContextOwner(ctx, "a", "c"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestRedisSendScriptsPipelined: a send's scripts go through the
// autopipeliner (a pipeline, for the client's hooks) while pipelineFrom or
// more are in flight, and alone as commands of their own; either way an
// ended context is refused.
func TestRedisSendScriptsPipelined(t *testing.T) {
	t.Parallel()
	s := openRedisStore(t, RedisConfig{Address: testredis.Addr(t), KeyPrefix: testPrefix(t)})
	ctx := context.Background()
	key := SendKey{Agent: "a", Owner: "o", Key: "m1"}
	rec := SendRecord{Digest: "d", State: SendRunning, Expires: time.Now().Add(time.Hour)}
	// A connection opened and the scripts loaded first, alone.
	if _, _, _, err := s.ClaimSend(ctx, Admission{Agent: "a", Owner: "o"}, SendKey{Agent: "a", Owner: "o", Key: "warm"}, rec, time.Now()); !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
	mustPut(t, s, Task{ID: "warm", Agent: "a", Owner: "o"})
	hook := &countingHook{}
	s.client.AddHook(sentHook{cmd: hook.count, trip: hook.trip})

	if _, _, claimed, err := s.ClaimSend(ctx, Admission{Agent: "a", Owner: "o"}, key, rec, time.Now()); !claimed || !errors.Is(err, ErrNotFound) {
		t.Fatalf("lone ClaimSend = %v, %v; want claimed", claimed, err)
	}
	if trips, commands := hook.trips.Load(), hook.commands.Load(); trips != 1 || commands != 1 {
		t.Fatalf("lone ClaimSend sent %d commands in %d round trips, want 1 in 1", commands, trips)
	}
	if hook.pipelines.Load() != 0 {
		t.Fatal("a lone script went through a pipeline")
	}

	s.inFlight.Add(pipelineFrom - 1) // as if other sends' scripts were in flight
	defer s.inFlight.Add(-(pipelineFrom - 1))
	rec.State, rec.TaskID = SendTask, "t1"
	if err := s.PutSend(ctx, Task{ID: "t1", Agent: "a", Owner: "o", State: "TASK_STATE_COMPLETED"}, key, rec); err != nil {
		t.Fatal(err)
	}
	if hook.pipelines.Load() == 0 {
		t.Fatal("a script among others in flight was not pipelined")
	}
	if got, err := s.LoadSend(ctx, key, time.Now()); err != nil || got.TaskID != "t1" {
		t.Fatalf("LoadSend after a pipelined PutSend = %+v, %v", got, err)
	}

	ended, cancel := context.WithCancel(ctx)
	cancel()
	_, _, _, err := s.ClaimSend(ended, Admission{Agent: "a", Owner: "o"}, SendKey{Agent: "a", Owner: "o", Key: "m2"}, rec, time.Now())
	if !errors.Is(err, ErrUnavailable) || !errors.Is(err, context.Canceled) {
		t.Errorf("pipelined ClaimSend(canceled context) = %v, want ErrUnavailable wrapping context.Canceled", err)
	}
	if err := s.Put(ended, Task{ID: "t2", Agent: "a", Owner: "o"}); !errors.Is(err, ErrUnavailable) || !errors.Is(err, context.Canceled) {
		t.Errorf("pipelined Put(canceled context) = %v, want ErrUnavailable wrapping context.Canceled", err)
	}
}

// TestRedisFirstLayoutNotRead plays a rolling upgrade: the keys a replica
// of the first layout wrote (no version segment) are not this layout's, so
// its task is unknown here (a call about it is refused, never served as
// someone's), while its send records, whose key and format both layouts
// share, are found.
func TestRedisFirstLayoutNotRead(t *testing.T) {
	t.Parallel()
	addr, prefix := testredis.Addr(t), testPrefix(t)
	clock := newFakeClock()
	s := openRedisStore(t, RedisConfig{Address: addr, KeyPrefix: prefix, now: clock.Now})
	ctx := context.Background()
	admin := adminClient(t)
	exp := micros(clock.Now().Add(time.Hour))
	old := map[string]any{"id": "t1", "agent": "a", "owner": "mallory", "backend": "b", "ctx": "c1", "state": working, "upd": micros(clock.Now()), "exp": exp}
	if err := admin.HSet(ctx, prefix+"{1:a}t:t1", old).Err(); err != nil {
		t.Fatal(err)
	}
	if err := admin.HSet(ctx, prefix+"{1:a}c:c1", "owner", "mallory", "exp", exp).Err(); err != nil {
		t.Fatal(err)
	}
	rec := running(clock, "d")
	val, err := encodeSend(rec)
	if err != nil {
		t.Fatal(err)
	}
	if err := admin.Set(ctx, prefix+"{1:a}r:5:alice:k", val, time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	wantNotFound(t, s, "a", "t1")
	if _, err := s.ContextOwner(ctx, "a", "c1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("ContextOwner of the first layout's context = %v, want ErrNotFound", err)
	}
	mustPut(t, s, Task{ID: "t1", ContextID: "c1", Owner: "alice", Agent: "a", State: working})
	if got := mustGet(t, s, "a", "t1"); got.Owner != "alice" {
		t.Errorf("Get(t1) = %+v, want alice's", got)
	}
	if got, err := s.LoadSend(ctx, SendKey{Agent: "a", Owner: "alice", Key: "k"}, clock.Now()); err != nil || got.State != SendRunning {
		t.Errorf("LoadSend of the first layout's record = %+v, %v; want it", got, err)
	}
	if owner, err := admin.HGet(ctx, prefix+"{1:a}t:t1", "owner").Result(); err != nil || owner != "mallory" {
		t.Errorf("the first layout's task = %q, %v; want it untouched", owner, err)
	}
}
