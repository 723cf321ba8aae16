package proxy

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/testnet"
	"github.com/a2agate/gateway/internal/testredis"
	"github.com/a2agate/gateway/store"
)

// The tests here hold the gateway to the task index's limits (issue 22):
// a send the index cannot take never reaches the backend, and a task the
// backend made is never withheld from its caller for the index's sake.

// countingBackend counts the JSON-RPC calls (POSTs) that reach h; before,
// when set, runs first on each.
type countingBackend struct {
	h      http.Handler
	posts  atomic.Int64
	before func()
}

func (b *countingBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		b.posts.Add(1)
		if b.before != nil {
			b.before()
		}
	}
	b.h.ServeHTTP(w, r)
}

// TestOwnerShareRefusedBeforeForwarding: past a caller's share of
// unfinished tasks, its send is refused in its dialect, naming the setting,
// without reaching the backend; another caller is not affected.
func TestOwnerShareRefusedBeforeForwarding(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backendKind) {
		for _, c := range callers {
			t.Run(c.d.String(), func(t *testing.T) {
				tasks := store.NewMemory(store.MemoryConfig{MaxTasksPerOwner: 2})
				t.Cleanup(func() { tasks.Close() })
				backend := &countingBackend{h: b.handler(t, nil)}
				g := newGatewayOpts(t, backend, b.version, Options{Tasks: tasks}, withAuth(t))
				alice, bob := g.as(token(t, "alice")), g.as(token(t, "bob"))
				for i := range 2 {
					c.task(t, mustResult(t, alice.call(fmt.Sprint(i), c.method(dialect.SendMessage), c.send(fmt.Sprint("m", i), c.text("input please"), ""))))
				}
				before := backend.posts.Load()
				for _, op := range []dialect.Op{dialect.SendMessage, dialect.SendStreamingMessage} {
					_, _, body := alice.post(rpc(c.method(op), c.send("m-over", c.text("input please"), "")), alice.hdr(c.d)...)
					if !strings.Contains(string(body), "-32603") || !strings.Contains(string(body), "store.memory.max_tasks_per_owner") ||
						!strings.Contains(string(body), "wait for some to finish") {
						t.Fatalf("%s past the share: %s", op, body)
					}
				}
				if n := backend.posts.Load(); n != before {
					t.Fatalf("the backend saw %d calls refused before forwarding", n-before)
				}
				c.task(t, mustResult(t, bob.call("9", c.method(dialect.SendMessage), c.send("m-bob", c.text("input please"), ""))))
			})
		}
	})
}

// redisIndex opens the Redis task index of cfg, closed when t ends.
func redisIndex(t *testing.T, cfg store.RedisConfig) *store.Redis {
	t.Helper()
	s, err := store.NewRedis(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// relayedIndex opens a Redis index under prefix reached through relay,
// with timeouts short enough that a cut relay fails calls quickly.
func relayedIndex(t *testing.T, relay *testnet.Relay, prefix string) store.Store {
	t.Helper()
	s := redisIndex(t, store.RedisConfig{Address: relay.Addr, KeyPrefix: prefix, TTL: time.Hour,
		DialTimeout: time.Second, ReadTimeout: 500 * time.Millisecond, WriteTimeout: 500 * time.Millisecond})
	if err := s.Ping(context.Background()); err != nil {
		t.Fatalf("Redis through the relay: %v", err)
	}
	return s
}

// relayedRedis opens a Redis index reached through a relay the test can
// cut.
func relayedRedis(t *testing.T) (store.Store, *testnet.Relay) {
	relay := testnet.NewRelay(t, testredis.Addr(t))
	return relayedIndex(t, relay, fmt.Sprintf("a2agw-test-%d:", time.Now().UnixNano())), relay
}

// TestSendRefusedWhileIndexDown: with the index out of reach, a send and a
// stream are refused before the backend sees them, in the caller's dialect.
func TestSendRefusedWhileIndexDown(t *testing.T) {
	tasks, relay := relayedRedis(t)
	b := backends[0]
	backend := &countingBackend{h: b.handler(t, nil)}
	g := newGatewayOpts(t, backend, b.version, Options{Tasks: tasks}, withAuth(t))
	alice := g.as(token(t, "alice"))
	relay.Cut()
	before := backend.posts.Load()
	for _, c := range callers {
		for _, op := range []dialect.Op{dialect.SendMessage, dialect.SendStreamingMessage} {
			_, _, body := alice.post(rpc(c.method(op), c.send("m1", c.text("charge my card $100"), "")), alice.hdr(c.d)...)
			if !strings.Contains(string(body), "-32603") || !strings.Contains(string(body), "task index cannot be reached") {
				t.Fatalf("%s/%s with the index down: %s", c.d, op, body)
			}
		}
	}
	if n := backend.posts.Load(); n != before {
		t.Fatalf("the backend saw %d sends while the index was down", n-before)
	}
}

// TestTaskDeliveredWhenRecordingFails: the index goes away after the send
// was admitted, while the backend runs it: the caller still gets its task,
// and the write is retried until the index is back.
func TestTaskDeliveredWhenRecordingFails(t *testing.T) {
	tasks, relay := relayedRedis(t)
	b := backends[0]
	var cut atomic.Bool
	backend := &countingBackend{h: b.handler(t, nil)}
	backend.before = func() {
		if cut.Load() {
			relay.Cut()
		}
	}
	g := newGatewayOpts(t, backend, b.version, Options{Tasks: tasks}, withAuth(t))
	alice := g.as(token(t, "alice"))
	for i, c := range callers {
		cut.Store(true)
		task := c.task(t, mustResult(t, alice.call(fmt.Sprint(i), c.method(dialect.SendMessage), c.send(fmt.Sprint("m", i), c.text("input please"), ""))))
		cut.Store(false)
		relay.Restore()
		id := task.Get("id").Str
		deadline := time.Now().Add(15 * time.Second)
		for {
			got, err := tasks.Get(context.Background(), "test", id)
			if err == nil {
				if got.Owner == "" {
					t.Fatalf("recorded without its owner: %+v", got)
				}
				break
			}
			if !errors.Is(err, store.ErrNotFound) && !errors.Is(err, store.ErrUnavailable) {
				t.Fatal(err)
			}
			if time.Now().After(deadline) {
				t.Fatalf("task %s was never recorded after the index came back: %v", id, err)
			}
			time.Sleep(50 * time.Millisecond) // polling a real reconnect and a backoff, not synchronising
		}
		mustResult(t, alice.call("10", c.method(dialect.GetTask), `{"id":"`+id+`"}`))
	}
}
