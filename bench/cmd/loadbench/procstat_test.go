package main

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseStatCPU(t *testing.T) {
	// The command name may hold spaces and parentheses.
	stat := []byte("4242 (gate way) (x)) S 1 4242 4242 0 -1 4194560 1200 0 0 0 250 75 0 0 20 0 9 0 123 456 789\n")
	got, err := parseStatCPU(stat)
	if err != nil {
		t.Fatal(err)
	}
	if want := 3250 * time.Millisecond; got != want {
		t.Fatalf("cpu %s, want %s", got, want)
	}
	for _, bad := range []string{"4242 no name", "1 (x) S 1 2", "1 (x) S 1 2 3 4 5 6 7 8 9 u s 0"} {
		if _, err := parseStatCPU([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestProcCPUAndMemoryOfThisProcess(t *testing.T) {
	if _, err := procCPU(os.Getpid()); err != nil {
		t.Fatal(err)
	}
	rss, peak, err := procMemory(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if rss <= 0 || peak < rss {
		t.Fatalf("rss %d peak %d", rss, peak)
	}
}

func TestParseStatusMemory(t *testing.T) {
	status := []byte("Name:\tgateway\nVmPeak:\t  900 kB\nVmHWM:\t    2048 kB\nVmRSS:\t    1024 kB\nThreads:\t7\n")
	rss, peak, err := parseStatusMemory(status)
	if err != nil {
		t.Fatal(err)
	}
	if rss != 1<<20 || peak != 2<<20 {
		t.Fatalf("rss %d peak %d", rss, peak)
	}
	if _, _, err := parseStatusMemory([]byte("VmRSS:\t1 kB\n")); err == nil {
		t.Fatal("VmHWM missing: no error")
	}
	if _, _, err := parseStatusMemory([]byte("VmRSS:\t1 MB\nVmHWM:\t1 kB\n")); err == nil {
		t.Fatal("unknown unit: no error")
	}
}

func TestParseMachineCPU(t *testing.T) {
	m, err := parseMachineCPU([]byte("cpu  100 5 30 800 40 1 2 3 7 0\ncpu0 1 2 3 4 5 6 7 8\n"))
	if err != nil {
		t.Fatal(err)
	}
	// busy: user nice system irq softirq steal; idle and iowait are not.
	if m.busy != ticks(141) || m.total != ticks(981) {
		t.Fatalf("busy %s total %s", m.busy, m.total)
	}
	if _, err := parseMachineCPU([]byte("intr 1 2 3\n")); err == nil {
		t.Fatal("no cpu line: no error")
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
