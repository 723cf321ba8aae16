package testredis

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/a2agate/gateway/internal/testnet"
)

// recorder is a testing.TB that records whether it was skipped or failed,
// and how, and ends its goroutine as the testing package does.
type recorder struct {
	testing.TB
	skipped, failed bool
	msg             string
}

func (r *recorder) Helper() {}
func (r *recorder) Skipf(format string, args ...any) {
	r.skipped, r.msg = true, fmt.Sprintf(format, args...)
	runtime.Goexit()
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed, r.msg = true, fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// addr runs Addr with A2AGW_SKIP_REDIS=skip and A2AGW_REDIS_ADDR=address,
// with a recorder in a goroutine of its own, which a skip or a failure ends.
func addr(t *testing.T, skip, address string) *recorder {
	t.Setenv("A2AGW_SKIP_REDIS", skip)
	t.Setenv("A2AGW_REDIS_ADDR", address)
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Addr(r)
	}()
	<-done
	return r
}

// TestSkipWins: A2AGW_SKIP_REDIS=1 skips, whatever the address.
func TestSkipWins(t *testing.T) {
	r := addr(t, "1", testnet.RefusedAddr(t))
	if !r.skipped || r.failed {
		t.Fatalf("skipped %v, failed %v; want skipped", r.skipped, r.failed)
	}
}

// TestUnreachableFails: without A2AGW_SKIP_REDIS a missing Redis fails the
// test and says how to start or skip it.
func TestUnreachableFails(t *testing.T) {
	r := addr(t, "", testnet.RefusedAddr(t))
	if !r.failed || r.skipped {
		t.Fatalf("skipped %v, failed %v; want failed", r.skipped, r.failed)
	}
	for _, want := range []string{"scripts/ensure-redis.sh", "A2AGW_REDIS_ADDR", "A2AGW_SKIP_REDIS=1"} {
		if !strings.Contains(r.msg, want) {
			t.Errorf("the failure does not name %s: %q", want, r.msg)
		}
	}
}

// TestNotRedisFails: a listener that does not answer PING is not Redis.
func TestNotRedisFails(t *testing.T) {
	ln := testnet.Listen(t)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("HTTP/1.1 400 Bad Request\r\n\r\n"))
			c.Close()
		}
	}()
	if err := Ping(ln.Addr().String()); err == nil {
		t.Fatal("an HTTP server passed for Redis")
	}
}
