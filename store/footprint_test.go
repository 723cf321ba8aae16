package store

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"
)

// BenchmarkMemoryFootprint fills an index to its default bound, as a
// gateway under steady load does, and reports the heap it holds per task
// and how long a full garbage collection takes with it alive.
//
//	go test -run '^$' -bench MemoryFootprint -benchtime 1x ./store
func BenchmarkMemoryFootprint(b *testing.B) {
	ctx := context.Background()
	for b.Loop() {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		m := NewMemory(MemoryConfig{})
		n := m.maxTasks
		for i := range n {
			// Ids and context ids as the backends make them: UUIDs.
			id := fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i)
			// Spread over enough principals that none fills its share.
			owner := fmt.Sprintf("issuer|subject-%d", i%(n/m.maxPerOwner+1))
			if err := m.Put(ctx, Task{ID: id, ContextID: "c" + id, Owner: owner, Agent: "agent", Backend: "agent", State: working}); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		start := time.Now()
		runtime.GC()
		gc := time.Since(start)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(n), "heap-B/task")
		b.ReportMetric(float64(gc.Microseconds()), "full-GC-µs")
		runtime.KeepAlive(m)
		m.Close()
	}
}
