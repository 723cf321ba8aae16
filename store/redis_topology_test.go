package store

import (
	"crypto/rand"
	"encoding/hex"
	"testing"

	"github.com/a2agate/gateway/internal/redistopo"
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
