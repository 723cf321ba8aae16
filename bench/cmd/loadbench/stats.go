package main

import (
	"math"
	"slices"
	"time"
)

// latencies are durations in nanoseconds, sorted once they are all in.
type latencies []int64

func merge(parts [][]int64) latencies {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	all := make(latencies, 0, n)
	for _, p := range parts {
		all = append(all, p...)
	}
	slices.Sort(all)
	return all
}

// quantile returns the q-quantile (0 < q <= 1) of sorted l by the
// nearest-rank method: the smallest value with at least q of the samples at
// or below it. Zero for no samples.
func (l latencies) quantile(q float64) time.Duration {
	if len(l) == 0 {
		return 0
	}
	rank := int(math.Ceil(q*float64(len(l)))) - 1
	rank = max(0, min(rank, len(l)-1))
	return time.Duration(l[rank])
}

// millis is d in milliseconds, for reports.
func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func millisList(ds []time.Duration) []float64 {
	out := make([]float64, len(ds))
	for i, d := range ds {
		out[i] = millis(d)
	}
	return out
}

// micros is d in microseconds, for reports.
func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// mib is n bytes in MiB.
func mib(n int64) float64 { return float64(n) / (1 << 20) }
