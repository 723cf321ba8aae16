package proxy

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/redistopo"
)

// clusterMaxOutage bounds how long calls may fail around a topology change.
const clusterMaxOutage = 15 * time.Second

// clusterLoad is the report of callers of two owners and both dialects
// making tasks through one gateway and reading them through the other.
type clusterLoad struct {
	redistopo.Outage
	mu    sync.Mutex
	acked map[string]string // task id -> owner
	// unrecorded counts owners' reads that found an acknowledged task
	// not yet known to the other gateway (see runClusterLoad).
	unrecorded int
}

// failedClosed notes a call that failed: -32603 (the index cannot be
// reached) is closed; anything else is a violation.
func (l *clusterLoad) failedClosed(op string, reply gjson.Result) {
	if reply.Get("error.code").Int() != -32603 || !strings.Contains(reply.Get("error.message").Str, "task index cannot be reached") {
		l.Violate("%s: %s, want -32603 (task index cannot be reached)", op, reply.Raw)
		return
	}
	l.FailedClosed(op + ": " + reply.Raw)
}

// loadCall posts one JSON-RPC call as the holder of tok, in d's dialect.
// Transport errors are violations: the gateway must answer, bounded.
func loadCall(client *http.Client, g *testGateway, tok string, d dialect.ID, body string) (gjson.Result, error) {
	req, err := http.NewRequest(http.MethodPost, g.url, strings.NewReader(body))
	if err != nil {
		return gjson.Result{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+tok)
	if d == dialect.V10 {
		req.Header.Set("A2A-Version", "1.0")
	}
	res, err := client.Do(req)
	if err != nil {
		return gjson.Result{}, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return gjson.Result{}, err
	}
	if res.StatusCode != http.StatusOK {
		return gjson.Result{}, fmt.Errorf("HTTP %d: %s", res.StatusCode, b)
	}
	return gjson.ParseBytes(b), nil
}

// runClusterLoad runs workers until ctx is done. Each makes a task through
// one gateway as its owner, reads it as that owner through the other, and
// tries it there as the other owner.
func runClusterLoad(ctx context.Context, gws [2]*testGateway, tokens map[string]string, l *clusterLoad, workers int) *sync.WaitGroup {
	client := &http.Client{Timeout: 10 * time.Second}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			owners := [2]string{"alice", "bob"}
			owner, other := owners[w%2], owners[(w+1)%2]
			cl := callers[(w/2)%len(callers)]
			for i := 0; ctx.Err() == nil; i++ {
				from, to := gws[i%2], gws[(i+1)%2]
				r, err := loadCall(client, from, tokens[owner], cl.d, rpc(cl.method(dialect.SendMessage), cl.send(fmt.Sprintf("w%d-%d", w, i), cl.text("input please"), "")))
				if err != nil {
					l.Violate("send: %v", err)
					continue
				}
				if !r.Get("result").Exists() {
					l.failedClosed("send", r)
					continue
				}
				task := r.Get("result")
				if cl.d == dialect.V10 {
					task = task.Get("task")
				}
				id := task.Get("id").Str
				l.mu.Lock()
				l.acked[id] = owner
				l.mu.Unlock()
				l.OK()

				get := rpc(cl.method(dialect.GetTask), `{"id":"`+id+`"}`)
				switch r, err := loadCall(client, to, tokens[owner], cl.d, get); {
				case err != nil:
					l.Violate("get by its owner: %v", err)
				case r.Get("result").Exists():
					if got := r.Get("result.id").Str; got != id {
						l.Violate("get %s by its owner answered task %q", id, got)
					}
				case r.Get("error.code").Int() == -32001:
					// A record the slot's move made fail is written by the
					// gateway's background retry: until then the other
					// gateway does not know the task. Lost is what is still
					// unknown once the change is over (checked below).
					l.mu.Lock()
					l.unrecorded++
					l.mu.Unlock()
				default:
					l.failedClosed("get by its owner", r)
				}
				switch r, err := loadCall(client, to, tokens[other], cl.d, get); {
				case err != nil:
					l.Violate("get by another: %v", err)
				case r.Get("result").Exists():
					l.Violate("get %s of %s answered %s: %s", id, owner, other, r.Raw)
				case r.Get("error.code").Int() != -32001:
					l.failedClosed("get by another", r)
				}
			}
		})
	}
	return &wg
}

// underClusterLoad runs change while the load runs through two gateways
// sharing c, waits for calls to succeed again without restarting either,
// and checks that no acknowledged task was lost or shown to another.
func underClusterLoad(t *testing.T, c *redistopo.Cluster, change func(slot int)) {
	b := backends[0]
	retries := &recordRetries{}
	backend, prefix := b.handler(t, nil), clusterPrefix()
	open := func() *testGateway {
		return newGatewayOpts(t, backend, b.version, Options{Tasks: openClusterStore(t, c, prefix), Logger: slog.New(retries)}, withAuth(t))
	}
	gws := [2]*testGateway{open(), open()}
	tokens := map[string]string{"alice": token(t, "alice"), "bob": token(t, "bob")}
	// The agent's keys share its hash tag (README, "Redis key layout").
	slot := c.Slot("{4:test}")

	l := &clusterLoad{Outage: redistopo.Outage{Max: clusterMaxOutage}, acked: map[string]string{}}
	ctx, stop := context.WithCancel(context.Background())
	wg := runClusterLoad(ctx, gws, tokens, l, 4)
	defer func() {
		stop()
		wg.Wait()
	}()
	// 20 sends show the load running; 50 after the change, that it
	// recovered without a restart.
	l.Across(t, 20, func() { change(slot) }, 50)
	stop()
	wg.Wait()
	l.Check(t)
	// A record the change made fail is the background retry's until it
	// ends: only then is a task the index does not know lost.
	started := retries.wait(t)

	client := &http.Client{Timeout: 10 * time.Second}
	lost := 0
	for id, owner := range l.acked {
		other := map[string]string{"alice": "bob", "bob": "alice"}[owner]
		for _, g := range gws {
			get := rpc("GetTask", `{"id":"`+id+`"}`)
			r, err := loadCall(client, g, tokens[owner], dialect.V10, get)
			if err != nil || r.Get("result.id").Str != id {
				if lost++; lost <= 5 {
					t.Errorf("acknowledged task %s of %s: %s %v", id, owner, r.Raw, err)
				}
			}
			if r, err := loadCall(client, g, tokens[other], dialect.V10, get); err != nil || r.Get("error.code").Int() != -32001 {
				t.Errorf("task %s of %s, asked by %s: %s %v", id, owner, other, r.Raw, err)
			}
		}
	}
	t.Logf("%d tasks acknowledged, %d lost; %d reads found one not yet recorded; %d writes retried in the background", len(l.acked), lost, l.unrecorded, started)
}

// recordRetries is the gateways' log handler: it follows their background
// retries of task writes, each logged when it starts and when it ends
// (recorded, found another's, or given up).
type recordRetries struct {
	mu      sync.Mutex
	started int
	running sync.WaitGroup
}

func (h *recordRetries) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordRetries) Handle(_ context.Context, r slog.Record) error {
	switch {
	case strings.HasSuffix(r.Message, "the write is retried"):
		h.mu.Lock()
		h.started++
		h.mu.Unlock()
		h.running.Add(1)
	case strings.HasPrefix(r.Message, "a task write retried in the background"),
		strings.HasPrefix(r.Message, "a task write was given up"):
		h.running.Done()
	}
	return nil
}
func (h *recordRetries) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *recordRetries) WithGroup(string) slog.Handler      { return h }

// wait returns once every retry started has ended, and how many started.
// The retries bound themselves; the guard is against a hang, far past that.
func (h *recordRetries) wait(t *testing.T) int {
	t.Helper()
	ended := make(chan struct{})
	go func() {
		h.running.Wait()
		close(ended)
	}()
	select {
	case <-ended:
	case <-time.After(2 * time.Minute):
		t.Fatal("the gateways' background retries of task writes did not end")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.started
}

// TestClusterGatewaysUnderLoad changes the cluster while two gateways
// serve calls over it: the agent's slot moves to another primary, or the
// replica of the agent's primary is promoted (CLUSTER FAILOVER).
func TestClusterGatewaysUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("starts six-node Redis Clusters; skipped in -short mode")
	}
	t.Parallel()
	changes := map[string]func(t *testing.T, c *redistopo.Cluster, slot int){
		"SlotMigration": func(t *testing.T, c *redistopo.Cluster, slot int) {
			before := c.PrimaryOf(slot)
			c.MigrateSlot(slot)
			if c.PrimaryOf(slot) == before {
				t.Fatalf("slot %d did not move", slot)
			}
		},
		"Failover": func(t *testing.T, c *redistopo.Cluster, slot int) {
			before := c.PrimaryOf(slot)
			if c.Failover(slot) == before {
				t.Fatalf("slot %d's primary was not replaced", slot)
			}
		},
	}
	for name, change := range changes {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := redistopo.StartCluster(t)
			underClusterLoad(t, c, func(slot int) { change(t, c, slot) })
		})
	}
}
