// Package testredis gives every package's tests the one Redis server they
// share, so that the whole suite finds it, or skips it, the same way.
//
//	A2AGW_REDIS_ADDR=host:port   the server (default 127.0.0.1:6379)
//	A2AGW_SKIP_REDIS=1           skip the tests that need it
//
// Without A2AGW_SKIP_REDIS=1 a test that needs Redis fails when none
// answers: a suite that passes must have run them.
package testredis

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultAddr is where scripts/ensure-redis.sh starts Redis.
const DefaultAddr = "127.0.0.1:6379"

// Addr returns the address of the Redis server for tests. It skips t when
// A2AGW_SKIP_REDIS=1 and fails it when no Redis answers PING there.
func Addr(t testing.TB) string {
	t.Helper()
	addr := os.Getenv("A2AGW_REDIS_ADDR")
	if addr == "" {
		addr = DefaultAddr
	}
	if os.Getenv("A2AGW_SKIP_REDIS") == "1" {
		t.Skipf("needs Redis; A2AGW_SKIP_REDIS=1 skips it")
	}
	if err := Ping(addr); err != nil {
		t.Fatalf("needs Redis at %s: %v\nstart one with scripts/ensure-redis.sh, point A2AGW_REDIS_ADDR=host:port at yours, or set A2AGW_SKIP_REDIS=1 to skip the Redis tests", addr, err)
	}
	return addr
}

// Ping checks that a Redis server, not just any listener, answers PING at
// addr within a couple of seconds. The load benchmark asks it too, before
// its Redis case.
func Ping(addr string) error {
	c := redis.NewClient(&redis.Options{
		Addr: addr, DialTimeout: 2 * time.Second, ReadTimeout: 2 * time.Second, WriteTimeout: 2 * time.Second,
		MaxRetries: -1, Protocol: 2, DisableIdentity: true,
	})
	defer c.Close()
	return c.Ping(context.Background()).Err()
}
