package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/a2agate/gateway/internal/redistopo"
	"github.com/a2agate/gateway/internal/testlog"
	"github.com/a2agate/gateway/internal/testnet"
)

// The topology tests run the conformance suite against Redis started by the
// test: one server, a cluster of three primaries with a replica each, and a
// Sentinel-managed primary, each TLS-only with mutual TLS. They are skipped
// in -short mode and where redis-server is not installed.

func tlsConfigOf(e *redistopo.Env) RedisTLSConfig {
	return RedisTLSConfig{Enabled: true, CAFile: e.TLS.CA, CertFile: e.TLS.ClientCert, KeyFile: e.TLS.ClientKey}
}

// freshPrefix is a key prefix of a test's own on a server that the test's
// process owns and kills at its end: nothing to clean up.
func freshPrefix() string {
	b := make([]byte, 8)
	rand.Read(b)
	return "a2agw-topo-" + hex.EncodeToString(b) + ":"
}

// topologyOpener opens stores of base, each with its own prefix.
func topologyOpener(base RedisConfig, share int) opener {
	return func(t *testing.T, clock *fakeClock) Store {
		cfg := base
		cfg.KeyPrefix, cfg.now, cfg.MaxTasksPerOwner = freshPrefix(), clock.Now, share
		return openRedisStore(t, cfg)
	}
}

func runTopologyConformance(t *testing.T, base RedisConfig) {
	t.Run("Store", func(t *testing.T) {
		t.Parallel()
		runConformance(t, topologyOpener(base, 0))
	})
	t.Run("Share", func(t *testing.T) {
		t.Parallel()
		runShareConformance(t, topologyOpener(base, testShare))
	})
	t.Run("Replicas", func(t *testing.T) {
		t.Parallel()
		testTopologyReplicas(t, base)
	})
}

// testTopologyReplicas plays two gateway replicas sharing one index: a
// task put through one is its owner's through the other, across agents in
// different slots, and for every new id exactly one owner's Put wins.
func testTopologyReplicas(t *testing.T, base RedisConfig) {
	clock := newFakeClock()
	base.KeyPrefix, base.now = freshPrefix(), clock.Now
	a, b := openRedisStore(t, base), openRedisStore(t, base)
	ctx := context.Background()
	for _, agent := range []string{"alpha", "beta", "gamma"} {
		mustPut(t, a, Task{ID: "t1", ContextID: "c1", Agent: agent, Owner: "alice", State: working})
		if got := mustGet(t, b, agent, "t1"); got.Owner != "alice" {
			t.Errorf("replica b: Get(%s, t1).Owner = %q, want alice", agent, got.Owner)
		}
		if err := b.Put(ctx, Task{ID: "t1", Agent: agent, Owner: "bob"}); !errors.Is(err, ErrOwnerConflict) {
			t.Errorf("replica b: Put by bob of alice's task = %v, want ErrOwnerConflict", err)
		}
		if owner, err := b.ContextOwner(ctx, agent, "c1"); err != nil || owner != "alice" {
			t.Errorf("replica b: ContextOwner(%s, c1) = %q, %v", agent, owner, err)
		}
	}
	if known, err := b.Known(ctx, "t1"); err != nil || !known {
		t.Errorf("replica b: Known(t1) = %v, %v", known, err)
	}
	if n := mustLen(t, b); n != 3 {
		t.Errorf("replica b: Len() = %d, want 3", n)
	}
	raceOwners(t, []Store{a, b}, 30, 2)
}

func TestRedisSingleTLSConformance(t *testing.T) {
	t.Parallel()
	e, n := redistopo.StartSingle(t)
	runTopologyConformance(t, RedisConfig{Address: n.Addr, TLS: tlsConfigOf(e)})
}

func TestRedisClusterTLSConformance(t *testing.T) {
	t.Parallel()
	c := redistopo.StartCluster(t)
	runTopologyConformance(t, RedisConfig{Mode: RedisCluster, Addresses: c.Addrs(), TLS: tlsConfigOf(c.Env)})
}

func TestRedisSentinelTLSConformance(t *testing.T) {
	t.Parallel()
	s := redistopo.StartSentinel(t)
	runTopologyConformance(t, RedisConfig{Mode: RedisSentinel, Addresses: s.Addrs(), MasterName: redistopo.MasterName, TLS: tlsConfigOf(s.Env)})
}

// TestRedisLogsUnreachableNode checks that a node that refuses connections,
// or whose certificate does not match, is named in the log, once per
// interval. (A server refusing the client's certificate is not: under TLS
// 1.3 the handshake completes first, and the refusal fails the command.)
func TestRedisLogsUnreachableNode(t *testing.T) {
	t.Parallel()
	e, n := redistopo.StartSingle(t)
	var buf testlog.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	ctx := context.Background()

	closed := testnet.RefusedAddr(t)
	refused := openRedisStore(t, RedisConfig{Address: closed, KeyPrefix: freshPrefix(), log: log})
	wrongName := openRedisStore(t, RedisConfig{Address: n.Addr, TLS: RedisTLSConfig{Enabled: true, CAFile: e.TLS.CA,
		CertFile: e.TLS.ClientCert, KeyFile: e.TLS.ClientKey, ServerName: "redis.example"}, KeyPrefix: freshPrefix(), log: log})
	for range 3 {
		for _, s := range []Store{refused, wrongName} {
			if err := s.Ping(ctx); !errors.Is(err, ErrUnavailable) {
				t.Fatalf("Ping() = %v, want ErrUnavailable", err)
			}
		}
	}
	out := buf.String()
	for _, addr := range []string{closed, n.Addr} {
		if got := strings.Count(out, "node="+addr); got != 1 {
			t.Errorf("the log names %s %d times, want once:\n%s", addr, got, out)
		}
	}
	if !strings.Contains(out, "redis.example") {
		t.Errorf("the log does not say which name did not match:\n%s", out)
	}
}
