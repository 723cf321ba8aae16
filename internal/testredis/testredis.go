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
	"bufio"
	"fmt"
	"net"
	"os"
	"testing"
	"time"
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
	if err := ping(addr); err != nil {
		t.Fatalf("needs Redis at %s: %v\nstart one with scripts/ensure-redis.sh, point A2AGW_REDIS_ADDR=host:port at yours, or set A2AGW_SKIP_REDIS=1 to skip the Redis tests", addr, err)
	}
	return addr
}

// ping checks that a Redis server, not just any listener, answers at addr.
func ping(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(2 * time.Second)); err != nil {
		return err
	}
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if line != "+PONG\r\n" {
		return fmt.Errorf("PING answered %q", line)
	}
	return nil
}
