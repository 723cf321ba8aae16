package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/a2agate/gateway/internal/redistopo"
)

// The failover tests change a topology under load: a slot moving between
// cluster primaries, a cluster replica promoted, a Sentinel failover. Calls
// may fail meanwhile, but only closed (ErrUnavailable), for a bounded time;
// the store recovers without being reopened; no acknowledged task is lost
// and no call ever answers with, or hands over, another owner's task.

// loadAgents are the agents of the load; each hashes to its own slot.
var loadAgents = []string{"moved", "steady"}

// maxOutage bounds how long calls may fail around a topology change.
const maxOutage = 15 * time.Second

type loadReport struct {
	redistopo.Outage
	mu    sync.Mutex
	acked map[[2]string]string // agent, id -> owner
}

// result notes one call's error: nil, or one that fails closed.
func (l *loadReport) result(op string, err error) bool {
	switch {
	case err == nil:
		l.OK()
		return true
	case !errors.Is(err, ErrUnavailable):
		l.Violate("%s: %v, want ErrUnavailable", op, err)
	default:
		l.FailedClosed(fmt.Sprintf("%s: %v", op, err))
	}
	return false
}

// runLoad runs workers of two owners putting tasks, reading them back and
// trying to take each other's over, until ctx is done.
func runLoad(ctx context.Context, s Store, l *loadReport, workers int) *sync.WaitGroup {
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			owners := [2]string{"alice", "bob"}
			for i := 0; ctx.Err() == nil; i++ {
				agent, owner, other := loadAgents[i%len(loadAgents)], owners[w%2], owners[(w+1)%2]
				id := fmt.Sprintf("w%d-%d", w, i)
				call, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				err := s.Put(call, Task{ID: id, Agent: agent, Owner: owner, State: "TASK_STATE_WORKING"})
				if l.result("Put", err) {
					l.mu.Lock()
					l.acked[[2]string{agent, id}] = owner
					l.mu.Unlock()
				}
				got, err := s.Get(call, agent, id)
				switch {
				case errors.Is(err, ErrNotFound):
					// Only a task whose Put failed may be missing.
				case l.result("Get", err) && got.Owner != owner:
					l.Violate("Get(%s, %s) answered owner %q, want %q", agent, id, got.Owner, owner)
				}
				// The other owner must never take the task over.
				if err := s.Put(call, Task{ID: id, Agent: agent, Owner: other}); err == nil {
					l.mu.Lock()
					_, acked := l.acked[[2]string{agent, id}]
					l.mu.Unlock()
					if acked {
						l.Violate("Put(%s, %s) by %s succeeded over %s's task", agent, id, other, owner)
					}
				} else if !errors.Is(err, ErrOwnerConflict) {
					l.result("Put by another owner", err)
				}
				cancel()
			}
		})
	}
	return &wg
}

// underLoad runs change while the load runs, then waits for calls to
// succeed again, and checks the report.
func underLoad(t *testing.T, s Store, change func()) {
	l := &loadReport{Outage: redistopo.Outage{Max: maxOutage}, acked: map[[2]string]string{}}
	ctx, stop := context.WithCancel(context.Background())
	wg := runLoad(ctx, s, l, 4)
	defer func() {
		stop()
		wg.Wait()
	}()
	// 50 calls show the load running; 200 after the change, that it
	// recovered without reopening the store.
	l.Across(t, 50, change, 200)
	stop()
	wg.Wait()
	l.Check(t)

	lost := 0
	for key, owner := range l.acked {
		got, err := s.Get(context.Background(), key[0], key[1])
		if err != nil || got.Owner != owner {
			lost++
			if lost <= 5 {
				t.Errorf("acknowledged task %s of %s: Get = %+v, %v", key[1], key[0], got, err)
			}
		}
	}
	t.Logf("%d tasks acknowledged, %d lost", len(l.acked), lost)
}

func openTopologyStore(t *testing.T, cfg RedisConfig) *Redis {
	cfg.KeyPrefix = freshPrefix()
	cfg.DialTimeout, cfg.ReadTimeout, cfg.WriteTimeout = 500*time.Millisecond, 500*time.Millisecond, 500*time.Millisecond
	return openRedisStore(t, cfg)
}

func TestRedisClusterSlotMigrationUnderLoad(t *testing.T) {
	t.Parallel()
	c := redistopo.StartCluster(t)
	s := openTopologyStore(t, RedisConfig{Mode: RedisCluster, Addresses: c.Addrs(), TLS: tlsConfigOf(c.Env)})
	slot := c.Slot(s.keys.task(loadAgents[0], "x"))
	if slot == c.Slot(s.keys.task(loadAgents[1], "x")) {
		t.Fatal("the load's agents share a slot")
	}
	underLoad(t, s, func() {
		before := c.PrimaryOf(slot)
		c.MigrateSlot(slot)
		if c.PrimaryOf(slot) == before {
			t.Fatalf("slot %d did not move", slot)
		}
	})
}

func TestRedisClusterFailoverUnderLoad(t *testing.T) {
	t.Parallel()
	c := redistopo.StartCluster(t)
	s := openTopologyStore(t, RedisConfig{Mode: RedisCluster, Addresses: c.Addrs(), TLS: tlsConfigOf(c.Env)})
	slot := c.Slot(s.keys.task(loadAgents[0], "x"))
	underLoad(t, s, func() { c.Failover(slot) })
}

// TestRedisSentinelFailoverUnderLoad kills the primary: with
// min_replica_acks 1, every acknowledged task is on a replica, and the
// sentinels promote the replica that is furthest ahead.
func TestRedisSentinelFailoverUnderLoad(t *testing.T) {
	t.Parallel()
	sn := redistopo.StartSentinel(t)
	s := openTopologyStore(t, RedisConfig{Mode: RedisSentinel, Addresses: sn.Addrs(), MasterName: redistopo.MasterName, TLS: tlsConfigOf(sn.Env), MinReplicaAcks: 1})
	// A crash, not SENTINEL FAILOVER: a primary demoted alive keeps taking
	// writes (acknowledged by its replicas) until the sentinels reach it,
	// and loses them then, whatever the client does.
	underLoad(t, s, func() {
		sn.Primary.Kill()
		sn.Failover()
	})
}

// TestRedisClusterReadinessFollows loses a whole shard, primary and
// replica: Ping (readiness) fails as soon as the cluster reports slots
// uncovered, and calls fail closed.
func TestRedisClusterReadinessFollows(t *testing.T) {
	t.Parallel()
	c := redistopo.StartFailFastCluster(t)
	s := openTopologyStore(t, RedisConfig{Mode: RedisCluster, Addresses: c.Addrs(), TLS: tlsConfigOf(c.Env)})
	ctx := context.Background()
	if err := s.Ping(ctx); err != nil {
		t.Fatalf("Ping() of a healthy cluster = %v", err)
	}
	primary, replica := c.Shard(c.Slot(s.keys.task(loadAgents[0], "x")))
	primary.Kill()
	replica.Kill()
	deadline := time.Now().Add(maxOutage)
	for s.Ping(ctx) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("Ping() still succeeds %s after a shard was lost", maxOutage)
		}
		time.Sleep(50 * time.Millisecond) // polling the cluster's failure detection
	}
	if err := s.Ping(ctx); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Ping() = %v, want ErrUnavailable", err)
	}
	if err := s.Put(ctx, Task{ID: "t", Agent: loadAgents[0], Owner: "alice"}); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Put() into the lost shard = %v, want ErrUnavailable", err)
	}
	// The metric names the node that failed, by the address the cluster
	// gave it.
	if errs := s.NodeErrors(); errs[primary.Addr] == 0 {
		t.Errorf("NodeErrors() = %v; want failures of the lost primary %s", errs, primary.Addr)
	}
}
