package store

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"
)

// BenchmarkMemoryFootprint fills an index to its default bound as a gateway
// under steady load does: every send creates a task, and leaves the record
// its retries are matched against. It reports the heap each task holds in
// the task index, what each send's record adds beside it (for final tasks:
// a full index of unfinished ones admits no send), and how long a full
// garbage collection takes with both alive. The noauth case is final tasks
// recorded with authentication off (owner ""), as loadbench's gateway
// cases record them.
//
//	go test -run '^$' -bench MemoryFootprint -benchtime 1x ./store
func BenchmarkMemoryFootprint(b *testing.B) {
	for _, c := range []struct {
		state string
		auth  bool
	}{{working, true}, {completed, true}, {completed, false}} {
		name := strings.ToLower(strings.TrimPrefix(c.state, "TASK_STATE_"))
		if !c.auth {
			name += "-noauth"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				measureFootprint(b, c.state, c.auth)
			}
		})
	}
}

func measureFootprint(b *testing.B, state string, auth bool) {
	ctx := context.Background()
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	start := heap()
	m := NewMemory(MemoryConfig{})
	defer m.Close()
	n := m.maxTasks
	// Ids as the backends make them (UUIDs), each a string of its own as
	// the gateway clones it from a reply; the agent, backend and state
	// strings are the gateway's own, shared by every call.
	id := func(kind string, i int) string { return fmt.Sprintf("%08x-%s-4000-8000-%012x", i, kind, i) }
	// Spread over enough principals that none fills its share; each call
	// has its owner in a string of its own, as a verified token gives it:
	// the issuer and a JWT subject.
	owner := func(i int) string {
		if !auth {
			return ""
		}
		return fmt.Sprintf("https://login.example.com/|auth0|%024x", i%(n/m.maxPerOwner+1))
	}
	const agent = "travel-planner"
	now := time.Now()
	for i := range n {
		if err := m.Put(ctx, Task{ID: id("0000", i), ContextID: id("c000", i), Owner: owner(i), Agent: agent, Backend: "travel-backend", State: state}); err != nil {
			b.Fatal(err)
		}
	}
	indexed := heap()
	b.ReportMetric(float64(indexed-start)/float64(n), "index-B/task")
	if !finalState(state) {
		// A full index of unfinished tasks admits no send.
		return
	}
	for i := range n {
		key := SendKey{Agent: agent, Owner: owner(i), Key: id("5e4d", i)}
		digest := fmt.Sprintf("%016x", xxhash.Sum64String(key.Key)) // the form of normalize.AppendSendDigest
		claim := SendRecord{Digest: digest, State: SendRunning, Holder: "0123456789abcdef", Lease: now.Add(15 * time.Second), Expires: now.Add(10 * time.Minute)}
		if _, _, _, err := m.ClaimSend(ctx, Admission{Agent: key.Agent, Owner: key.Owner}, key, claim, now); err != nil && err != ErrNotFound {
			b.Fatal(err)
		}
		done := SendRecord{Digest: digest, State: SendTask, TaskID: id("0000", i), Expires: claim.Expires}
		if err := m.SaveSend(ctx, key, done); err != nil {
			b.Fatal(err)
		}
	}
	sent := heap()
	gcStart := time.Now()
	runtime.GC()
	gc := time.Since(gcStart)
	b.ReportMetric(float64(sent-indexed)/float64(n), "retry-B/send")
	b.ReportMetric(float64(gc.Microseconds()), "full-GC-µs")
	runtime.KeepAlive(m)
}
