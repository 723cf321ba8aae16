package store

import (
	"context"
	"testing"
	"time"

	"github.com/a2agate/gateway/internal/testredis"
)

// TestRedisLenOwners: Len sums the owners set, which a put joins as it
// renews its owner's indexes, not on every put. Len takes out an owner
// only once its indexes are gone: one whose tasks expired unpurged stays,
// so that its next put, which finds its indexes renewed, is counted.
func TestRedisLenOwners(t *testing.T) {
	t.Parallel()
	addr, prefix := testredis.Addr(t), testPrefix(t)
	clock := newFakeClock()
	s := openRedisStore(t, RedisConfig{Address: addr, KeyPrefix: prefix, TTL: time.Hour, now: clock.Now})
	ctx := context.Background()
	admin := adminClient(t)
	owners := redisKeys{prefix}.agent("a").owners()
	isOwner := func(owner string) bool {
		t.Helper()
		in, err := admin.SIsMember(ctx, owners, owner).Result()
		if err != nil {
			t.Fatal(err)
		}
		return in
	}

	mustPut(t, s, Task{ID: "t1", Owner: "alice", Agent: "a", State: working})
	mustPut(t, s, Task{ID: "t2", Owner: "bob", Agent: "a", State: working})
	if n := mustLen(t, s); n != 2 {
		t.Fatalf("Len() = %d, want 2", n)
	}

	// Both tasks expire; bob's are purged (his indexes go), alice's not.
	clock.Advance(time.Hour)
	mustList(t, s, Query{Agent: "a", Owner: "bob", PageSize: 10})
	if n := mustLen(t, s); n != 0 {
		t.Fatalf("Len() after expiry = %d, want 0", n)
	}
	if isOwner("bob") {
		t.Error("bob, whose indexes are gone, is still in the owners set")
	}
	if !isOwner("alice") {
		t.Fatal("alice, whose indexes are still there, left the owners set")
	}

	// alice's indexes were renewed within the window (by Redis's clock):
	// her put does not add her again, and is counted all the same; bob's
	// makes his indexes anew and adds him back.
	mustPut(t, s, Task{ID: "t3", Owner: "alice", Agent: "a", State: working})
	mustPut(t, s, Task{ID: "t4", Owner: "bob", Agent: "a", State: working})
	if n := mustLen(t, s); n != 2 {
		t.Errorf("Len() after the owners' new tasks = %d, want 2", n)
	}
	if ttl, err := admin.PTTL(ctx, owners).Result(); err != nil || ttl <= 0 || ttl > time.Hour+redisTTLGrace {
		t.Errorf("owners set TTL = %v, %v; want in (0, %v]", ttl, err, time.Hour+redisTTLGrace)
	}
}

// TestRedisContextKeepsLaterExpiry: a put whose clock lags another
// replica's, in a context that replica's task holds longer, leaves the
// context its later expiry (the put's SET ... GET writes it back).
func TestRedisContextKeepsLaterExpiry(t *testing.T) {
	t.Parallel()
	addr, prefix := testredis.Addr(t), testPrefix(t)
	ahead, behind := newFakeClock(), newFakeClock()
	ahead.Advance(10 * time.Minute)
	sAhead := openRedisStore(t, RedisConfig{Address: addr, KeyPrefix: prefix, TTL: time.Hour, now: ahead.Now})
	sBehind := openRedisStore(t, RedisConfig{Address: addr, KeyPrefix: prefix, TTL: time.Hour, now: behind.Now})
	mustPut(t, sAhead, Task{ID: "t1", ContextID: "c1", Owner: "alice", Agent: "a", State: working})
	mustPut(t, sBehind, Task{ID: "t2", ContextID: "c1", Owner: "alice", Agent: "a", State: working})
	// Past t2's expiry, within t1's.
	behind.Advance(time.Hour + 5*time.Minute)
	if got, err := sBehind.ContextOwner(context.Background(), "a", "c1"); err != nil || got != "alice" {
		t.Errorf("ContextOwner(c1) while t1 lives = %q, %v; want alice", got, err)
	}
	ttl, err := adminClient(t).PTTL(context.Background(), redisKeys{prefix}.agent("a").context("c1")).Result()
	if err != nil || ttl <= time.Hour+redisTTLGrace || ttl > time.Hour+redisTTLGrace+10*time.Minute {
		t.Errorf("context's TTL = %v, %v; want its writer's, about %v", ttl, err, time.Hour+redisTTLGrace+10*time.Minute)
	}
}
