package main

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestProcOfThisProcess reads this process's CPU time and memory, finds it
// by its command name, and reads the machine's CPU times: what a
// measurement samples of each process under test.
func TestProcOfThisProcess(t *testing.T) {
	cpu, err := procCPU(os.Getpid())
	if err != nil || cpu < 0 {
		t.Fatalf("procCPU = %s, %v", cpu, err)
	}
	rss, peak, err := procMemory(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if rss <= 0 || peak < rss {
		t.Fatalf("rss %d peak %d", rss, peak)
	}
	comm, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		t.Fatal(err)
	}
	if pids := processesNamed(strings.TrimSpace(string(comm))); !slices.Contains(pids, os.Getpid()) {
		t.Fatalf("processesNamed(%q) = %v, without this process %d", comm, pids, os.Getpid())
	}
	m, err := readMachineCPU()
	if err != nil {
		t.Fatal(err)
	}
	if m.busy <= 0 || m.total < m.busy {
		t.Fatalf("machine CPU busy %s total %s", m.busy, m.total)
	}
	if _, _, err := procMemory(1 << 30); err == nil {
		t.Fatal("procMemory of a PID that does not exist: no error")
	}
}

func TestQuantile(t *testing.T) {
	l := merge([][]int64{{5, 1, 9}, {3, 7}, nil, {2, 4, 6, 8, 10}})
	for _, tc := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 5}, {0.9, 9}, {0.99, 10}, {0.999, 10}, {0.01, 1}} {
		if got := l.quantile(tc.q); got != tc.want {
			t.Errorf("q%.3f = %d, want %d", tc.q, got, tc.want)
		}
	}
	if got := latencies(nil).quantile(0.99); got != 0 {
		t.Errorf("empty: %d", got)
	}
}

func TestProcessesNamed(t *testing.T) {
	comm, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		t.Skip("no /proc here")
	}
	name := strings.TrimSpace(string(comm))
	if pids := processesNamed(name); !slices.Contains(pids, os.Getpid()) {
		t.Errorf("processesNamed(%q) = %v, without this process (%d)", name, pids, os.Getpid())
	}
	if pids := processesNamed("no-such-process-here"); len(pids) != 0 {
		t.Errorf("a name no process has: %v", pids)
	}
}
