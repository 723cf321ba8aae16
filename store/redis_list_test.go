package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/a2agate/gateway/internal/redistopo"
	"github.com/redis/go-redis/v9"
)

// poisonTasks rewrites the hashes of the ids to name context ctx, behind
// the indexes' back: a list by ctx that reads one of them (rather than
// ctx's own index) shows it. A script that meets a key of another type
// skips it (WRONGTYPE would fail every list of the owner), so a string
// would prove nothing.
func poisonTasks(t *testing.T, admin *redis.Client, s *Redis, agent, ctx string, ids ...string) {
	t.Helper()
	for _, id := range ids {
		if err := admin.HSet(context.Background(), s.keys.task(agent, id), "ctx", ctx).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRedisListContextReadsOnlyItsTasks checks that a list by context, with
// or without a state filter, reads no task of another context: their
// hashes are made to name the context listed, and must not be shown.
func TestRedisListContextReadsOnlyItsTasks(t *testing.T) {
	t.Parallel()
	admin := adminClient(t)
	clock := newFakeClock()
	s := openRedisStore(t, RedisConfig{Address: admin.Options().Addr, KeyPrefix: testPrefix(t), now: clock.Now})
	var others []string
	for i := range 20 {
		id := "o" + strconv.Itoa(i)
		mustPut(t, s, Task{ID: id, ContextID: "other" + strconv.Itoa(i%3), Owner: "alice", Agent: "a", State: working})
		others = append(others, id)
	}
	mustPut(t, s, Task{ID: "t1", ContextID: "c1", Owner: "alice", Agent: "a", State: working})
	mustPut(t, s, Task{ID: "t2", ContextID: "c1", Owner: "alice", Agent: "a", State: completed, Updated: clock.Now().Add(time.Second)})
	mustPut(t, s, Task{ID: "t3", ContextID: "c1", Owner: "alice", Agent: "a", State: working, Updated: clock.Now().Add(2 * time.Second)})
	poisonTasks(t, admin, s, "a", "c1", others...)

	for _, tc := range []struct {
		q     Query
		want  []string
		total int
	}{
		{Query{PageSize: 100, Agent: "a", Owner: "alice", ContextID: "c1"}, []string{"t3", "t2", "t1"}, 3},
		{Query{PageSize: 100, Agent: "a", Owner: "alice", ContextID: "c1", State: working}, []string{"t3", "t1"}, 2},
		{Query{Agent: "a", Owner: "alice", ContextID: "c1", PageSize: 1}, []string{"t3"}, 3},
	} {
		p := mustList(t, s, tc.q)
		if got := fmt.Sprint(taskIDs(p.Tasks)); got != fmt.Sprint(tc.want) || p.TotalSize != tc.total {
			t.Errorf("List(%+v) = %s of %d, want %v of %d", tc.q, got, p.TotalSize, tc.want, tc.total)
		}
	}
	// The check has teeth: a list that reads the other contexts fails.
	if p := mustList(t, s, Query{PageSize: 100, Agent: "a", Owner: "alice", State: working}); len(p.Tasks) != len(others)+2 {
		t.Errorf("List by state alone = %d tasks, want the %d poisoned and t3, t1: the test proves nothing", len(p.Tasks), len(others))
	}
}

// TestRedisListContextDropsStale checks that a context's index entry whose
// task is gone (reclaimed by Redis before its owner's purge) or another
// owner's is neither counted nor shown, and is dropped from the index.
func TestRedisListContextDropsStale(t *testing.T) {
	t.Parallel()
	admin := adminClient(t)
	clock := newFakeClock()
	s := openRedisStore(t, RedisConfig{Address: admin.Options().Addr, KeyPrefix: testPrefix(t), now: clock.Now})
	ctx := context.Background()
	for i := range 5 {
		mustPut(t, s, Task{ID: "t" + strconv.Itoa(i), ContextID: "c1", Owner: "alice", Agent: "a", State: working,
			Updated: clock.Now().Add(time.Duration(i) * time.Second)})
	}
	if err := admin.Del(ctx, s.keys.task("a", "t3")).Err(); err != nil {
		t.Fatal(err)
	}
	if err := admin.HSet(ctx, s.keys.task("a", "t1"), "owner", "mallory").Err(); err != nil {
		t.Fatal(err)
	}
	index := s.keys.bucket("a", "alice") + ":c:c1"
	q := Query{Agent: "a", Owner: "alice", ContextID: "c1", PageSize: 2}
	var seen []string
	for {
		p := mustList(t, s, q)
		seen = append(seen, taskIDs(p.Tasks)...)
		if p.NextPageToken == "" {
			break
		}
		q.PageToken = p.NextPageToken
	}
	if got := fmt.Sprint(seen); got != "[t4 t2 t0]" {
		t.Errorf("pages = %s, want [t4 t2 t0]", got)
	}
	if n := admin.ZCard(ctx, index).Val(); n != 3 {
		t.Errorf("ZCARD of the context's index = %d after the pages, want 3", n)
	}
	if p := mustList(t, s, Query{PageSize: 100, Agent: "a", Owner: "alice", ContextID: "c1"}); p.TotalSize != 3 {
		t.Errorf("TotalSize = %d, want 3", p.TotalSize)
	}
}

// TestRedisListStateBound checks that a state filter checks at most
// max_tasks_per_owner tasks in one call, also for the tasks of
// authentication off (owner "", no share), and refuses past it with
// ErrListTooBroad, while a filter by context narrows it back within.
func TestRedisListStateBound(t *testing.T) {
	t.Parallel()
	admin := adminClient(t)
	clock := newFakeClock()
	s := openRedisStore(t, RedisConfig{Address: admin.Options().Addr, KeyPrefix: testPrefix(t), now: clock.Now, MaxTasksPerOwner: 3})
	for i := range 5 {
		mustPut(t, s, Task{ID: "t" + strconv.Itoa(i), ContextID: "c" + strconv.Itoa(i%2), Owner: "", Agent: "a", State: working,
			Updated: clock.Now().Add(time.Duration(i) * time.Second)})
	}
	_, err := s.List(context.Background(), Query{PageSize: 100, Agent: "a", Owner: "", State: working})
	var limit *LimitError
	if !errors.Is(err, ErrListTooBroad) || !errors.As(err, &limit) || limit.Limit != 3 || limit.Setting != "store.redis.max_tasks_per_owner" {
		t.Fatalf("List by state over 5 tasks, bound 3 = %v, want ErrListTooBroad naming the bound", err)
	}
	if p := mustList(t, s, Query{PageSize: 100, Agent: "a", Owner: "", State: working, UpdatedAfter: clock.Now().Add(2 * time.Second)}); p.TotalSize != 3 {
		t.Errorf("List by state from t2 on (3 tasks, the bound): TotalSize = %d, want 3", p.TotalSize)
	}
	if p := mustList(t, s, Query{PageSize: 100, Agent: "a", Owner: "", State: working, ContextID: "c0"}); fmt.Sprint(taskIDs(p.Tasks)) != "[t4 t2 t0]" {
		t.Errorf("List by state in c0 = %v, want [t4 t2 t0]", taskIDs(p.Tasks))
	}
	if p := mustList(t, s, Query{PageSize: 100, Agent: "a", Owner: ""}); p.TotalSize != 5 {
		t.Errorf("List unfiltered: TotalSize = %d, want 5", p.TotalSize)
	}
	for i := 5; i < 9; i++ {
		mustPut(t, s, Task{ID: "t" + strconv.Itoa(i), ContextID: "c0", Owner: "", Agent: "a", State: working})
	}
	if p := mustList(t, s, Query{Agent: "a", Owner: "", ContextID: "c0", PageSize: 2}); p.TotalSize != 7 || len(p.Tasks) != 2 {
		t.Errorf("List by context over 7 tasks, bound 3 = %d of %d, want 2 of 7: a context alone needs no check", len(p.Tasks), p.TotalSize)
	}
}

// BenchmarkRedisListFiltered measures a filtered ListTasks of one owner
// holding 10k tasks in 1k contexts, on a Redis of its own: the commands
// Redis runs and its CPU per list.
//
//	go test -run '^$' -bench RedisListFiltered -benchtime 200x ./store
func BenchmarkRedisListFiltered(b *testing.B) {
	node := redistopo.StartPlain(b)
	admin := clientOf(b, node.Addr)
	s := openBenchRedis(b, node.Addr)
	const tasks, contexts = 10000, 1000
	ctx := context.Background()
	for i := range tasks {
		st := working
		if i%2 == 0 {
			st = completed
		}
		if err := s.Put(ctx, Task{ID: "t" + strconv.Itoa(i), ContextID: "c" + strconv.Itoa(i%contexts), Owner: "o", Agent: "a", State: st}); err != nil {
			b.Fatal(err)
		}
	}
	for _, q := range []struct {
		name string
		q    Query
	}{
		{"Context", Query{Agent: "a", Owner: "o", ContextID: "c7", PageSize: 50}},
		{"ContextState", Query{Agent: "a", Owner: "o", ContextID: "c7", State: working, PageSize: 50}},
		{"State", Query{Agent: "a", Owner: "o", State: working, PageSize: 50}},
	} {
		b.Run(q.name, func(b *testing.B) {
			calls, cpu := redisCalls(b, admin), redisCPU(b, admin)
			b.ResetTimer()
			for range b.N {
				if _, err := s.List(ctx, q.q); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(redisCalls(b, admin)-calls-1)/float64(b.N), "redis-cmds/op")
			b.ReportMetric((redisCPU(b, admin)-cpu)*1e6/float64(b.N), "redis-cpu-us/op")
		})
	}
}
