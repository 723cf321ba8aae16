package store

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A node that refuses connections, or breaks them, is counted by its
// address; one that serves is listed at zero.
func TestRedisNodeErrorsNameTheNode(t *testing.T) {
	t.Parallel()
	s, proxy, _ := openBehindFaultProxy(t, RedisConfig{
		DialTimeout: 300 * time.Millisecond, ReadTimeout: 300 * time.Millisecond, WriteTimeout: 300 * time.Millisecond})
	ctx := context.Background()
	mustPut(t, s, Task{ID: "t", Owner: "o", Agent: "a", State: working})
	if got := s.NodeErrors(); len(got) != 1 || got[proxy.addr] != 0 {
		t.Fatalf("NodeErrors while Redis serves = %v; want %s at 0", got, proxy.addr)
	}
	var last uint64
	for _, mode := range []faultMode{reset, refuse, blackhole} {
		proxy.setMode(mode)
		if _, err := s.Get(ctx, "a", "t"); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("%s: Get = %v; want ErrUnavailable", mode, err)
		}
		got := s.NodeErrors()
		if len(got) != 1 || got[proxy.addr] <= last {
			t.Fatalf("%s: NodeErrors = %v; want more failures of %s than %d", mode, got, proxy.addr, last)
		}
		last = got[proxy.addr]
		proxy.setMode(forward)
	}
}
