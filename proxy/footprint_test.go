package proxy

import (
	"runtime"
	"testing"

	"github.com/a2agate/gateway/bench/canned"
)

// BenchmarkRetainedPerSend reports the heap a gateway keeps per unary send
// once the send is answered, with the default in-memory index: the task it
// records and the record its retries are matched against, as under load,
// where they grow with every send until the index's bound. Each iteration
// is 20,000 sends, each with a message id and task of its own.
//
//	go test -run '^$' -bench RetainedPerSend -benchtime 1x ./proxy
func BenchmarkRetainedPerSend(b *testing.B) {
	const sends = 20000
	for _, bc := range []benchCase{
		{op: canned.Send, caller: canned.V10, backend: canned.V10},
		{op: canned.Send, caller: canned.V03, backend: canned.V10},
	} {
		b.Run(bc.name(), func(b *testing.B) {
			for b.Loop() {
				h := newBenchHarness(b, bc)
				h.check(b)
				before := heapAfterGC()
				for range sends {
					h.serve()
				}
				b.ReportMetric(float64(heapAfterGC()-before)/sends, "retained-B/send")
				runtime.KeepAlive(h)
			}
		})
	}
}

func heapAfterGC() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
