package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func sampleReport() report {
	r := report{Settings: settings{Conns: []int{1, 32, 256}, Streams: 10, StreamEvents: 5}}
	add := func(name, kind string, conns int, rps, p99, cpu, idle, peak float64) {
		r.Unary = append(r.Unary, unaryRow{Case: name, Kind: kind, Conns: conns, RPS: rps, P99Ms: p99, CPUPer10k: cpu, RSSIdleMiB: idle, RSSPeakMiB: peak})
	}
	add("backend direct", kindDirect, 32, 30000, 1, 0.1, 8, 9)
	add("Go httputil.ReverseProxy", kindPlain, 1, 5000, 0.40, 0.5, 8, 9)
	add("Go httputil.ReverseProxy", kindPlain, 32, 9000, 3, 0.5, 8, 9)
	add("nginx", kindPlain, 1, 6000, 0.30, 0.2, 8, 9)
	add("nginx", kindPlain, 32, 10000, 2, 0.2, 8, 9)
	add("gateway 1.0→1.0", kindGateway, 1, 4000, 0.55, 1, 12, 20)
	add("gateway 1.0→1.0", kindGateway, 32, 9600, 4, 1, 12, 20)
	add("gateway 1.0→1.0", kindGateway, 256, 9000, 30, 1, 12, 70)
	add("gateway 0.3→1.0", kindGateway, 1, 4000, 0.70, 1, 31, 20)
	add("gateway 0.3→1.0", kindGateway, 32, 8400, 4, 1, 31, 20)
	r.Unary = append(r.Unary, unaryRow{Case: "gateway 0.3→1.0 +JWT +memory index", Kind: kindGateway, Skipped: "skipped: not supported by this build"})
	r.Streams = []streamRow{
		{Case: "backend direct", Kind: kindDirect, Mode: "paced", Streams: 1000, IntervalMs: 100, P50Us: 50, P99Us: 400},
		{Case: "Go httputil.ReverseProxy", Kind: kindPlain, Mode: "paced", Streams: 1000, IntervalMs: 100, P50Us: 55, P99Us: 420},
		{Case: "nginx", Kind: kindPlain, Mode: "paced", Streams: 1000, IntervalMs: 100, P50Us: 60, P99Us: 450},
		{Case: "gateway 1.0→1.0", Kind: kindGateway, Mode: "paced", Streams: 1000, IntervalMs: 100, P50Us: 120, P99Us: 480},
		{Case: "gateway 0.3→1.0", Kind: kindGateway, Mode: "paced", Streams: 1000, IntervalMs: 100, P50Us: 150, P99Us: 700},
		// A lighter pace, measured without nginx: compared with its own
		// direct row only.
		{Case: "backend direct", Kind: kindDirect, Mode: "paced", Streams: 1000, IntervalMs: 250, P50Us: 40, P99Us: 700},
		{Case: "gateway 1.0→1.0", Kind: kindGateway, Mode: "paced", Streams: 1000, IntervalMs: 250, P50Us: 100, P99Us: 760},
	}
	r.Idle = &idleRow{Case: "gateway 0.3→1.0", Streams: 100, KiBPerStream: 50}
	r.finish()
	return r
}

func TestReportRatiosAreToTheBestPlainProxyAt32Conns(t *testing.T) {
	r := sampleReport()
	if r.BestPlain != "nginx" || r.RefConns != 32 {
		t.Fatalf("best plain %q at %d", r.BestPlain, r.RefConns)
	}
	gw := r.row("gateway 1.0→1.0", 32)
	if gw.Ratio != 0.96 || gw.CPURatio != 0.2 {
		t.Fatalf("ratio %v CPU ratio %v", gw.Ratio, gw.CPURatio)
	}
	if u := r.row("gateway 1.0→1.0", 256); u.Ratio != 0 {
		t.Fatalf("no plain proxy at 256 conns, yet ratio %v", u.Ratio)
	}
	if s := r.Streams[4]; s.AddedP50Us != 100 || s.AddedP99Us != 300 {
		t.Fatalf("added %v / %v", s.AddedP50Us, s.AddedP99Us)
	}
}

func TestReportTargets(t *testing.T) {
	r := sampleReport()
	got := map[string]string{}
	for _, tg := range r.Targets {
		got[tg.Name] = tg.Result
	}
	want := map[string]string{
		"throughput of gateway 1.0→1.0 at 32 conns":                    "PASS", // 0.96
		"throughput of gateway 0.3→1.0 at 32 conns":                    "MISS", // 0.84
		"throughput of gateway 1.0→0.3 at 32 conns":                    "SKIP",
		"throughput of gateway 0.3→1.0 +JWT +memory index at 32 conns": "SKIP",
		"added p99 latency of gateway 1.0→1.0 at 1 conn":               "PASS", // +0.25 over nginx
		"added p99 latency of gateway 0.3→1.0 at 1 conn":               "MISS", // +0.40
		"gateway RSS idle":              "MISS", // 31
		"gateway peak RSS at 256 conns": "MISS", // 70
		"added p99 latency per stream event, gateway 1.0→1.0 (paced, 10,000 events/s)": "PASS", // +80
		"added p99 latency per stream event, gateway 0.3→1.0 (paced, 10,000 events/s)": "MISS", // +300
		"added p99 latency per stream event, gateway 1.0→1.0 (paced, 4,000 events/s)":  "PASS", // +60 over its own pace's direct row
		"gateway memory per idle open stream (100 streams)":                            "PASS",
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: %s, want %s", name, got[name], w)
		}
	}
	for _, tg := range r.Targets {
		if !strings.HasPrefix(tg.Name, "added p99 latency per stream event") {
			continue
		}
		named := strings.Contains(tg.Got, "; Go httputil.ReverseProxy, no translation, adds +20 µs (p50 +5 µs); nginx, no translation, adds +50 µs (p50 +10 µs)")
		if measured := strings.Contains(tg.Name, "10,000 events/s"); named != measured {
			t.Errorf("%s: got %q; the plain proxies measured at this pace: %v", tg.Name, tg.Got, measured)
		}
	}
}

func TestReportFiles(t *testing.T) {
	r := sampleReport()
	dir := t.TempDir()
	if err := r.writeFiles(dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "latest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var back report
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Unary) != len(r.Unary) || back.BestPlain != "nginx" || len(back.Targets) != len(r.Targets) {
		t.Fatalf("JSON does not round-trip: %s", b)
	}
	md, err := os.ReadFile(filepath.Join(dir, "latest.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| gateway 1.0→1.0 | 32 | 9600 | 0.96x | 0.20x |",
		"| gateway 0.3→1.0 +JWT +memory index | | skipped: not supported by this build |",
		"| throughput of gateway 0.3→1.0 at 32 conns | >= 0.85x best plain proxy | 0.84x",
		"**50.0 KiB per stream**",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
}

func TestBoundBy(t *testing.T) {
	for _, tc := range []struct {
		u      unaryRow
		pinned bool
		want   string
	}{
		{unaryRow{Kind: kindGateway, SUTCPU: 97, LoadgenCPU: 40, BackendCPU: 30}, true, "sut"},
		{unaryRow{Kind: kindPlain, SUTCPU: 40, LoadgenCPU: 58, BackendCPU: 38}, true, "client"},
		{unaryRow{Kind: kindPlain, SUTCPU: 40, LoadgenCPU: 58, BackendCPU: 38}, false, ""},
		{unaryRow{Kind: kindDirect, SUTCPU: 80, LoadgenCPU: 95}, true, "client"},
		{unaryRow{Kind: kindGateway, SUTCPU: 60, LoadgenCPU: 20, BackendCPU: 20}, true, ""},
	} {
		if got := boundBy(tc.u, tc.pinned); got != tc.want {
			t.Errorf("%+v pinned %v: %q, want %q", tc.u, tc.pinned, got, tc.want)
		}
	}
}

func TestStreamLatencyIsNotJudgedAboveTheFloor(t *testing.T) {
	r := sampleReport()
	r.Streams[0].P99Us = 16000
	r.Streams[1].P99Us = 15500
	r.finish()
	for _, tg := range r.Targets {
		if !strings.HasPrefix(tg.Name, "added p99 latency per stream event") {
			continue
		}
		// Each pace is judged against its own direct row's floor.
		want := "PASS"
		if strings.Contains(tg.Name, "10,000 events/s") {
			want = "SKIP"
		}
		if tg.Result != want {
			t.Errorf("%s: %s (%s), want %s", tg.Name, tg.Result, tg.Got, want)
		}
	}
}

// TestBestRound: a case measured in rounds is reported as its round with
// the most req/s, whole, with every round's req/s beside it.
func TestBestRound(t *testing.T) {
	rows := []unaryRow{
		{RPS: 200, P99Ms: 2}, {RPS: 300, P99Ms: 3}, {Skipped: "failed: x"}, {RPS: 100, P99Ms: 1},
	}
	got := bestRound(rows)
	if got.RPS != 300 || got.P99Ms != 3 || got.Rounds != 3 || got.RPSMin != 100 || !slices.Equal(got.RPSRounds, []float64{200, 300, 100}) {
		t.Errorf("best of 200, 300, 100 (and a failed round): %+v", got)
	}
	if got := bestRound([]unaryRow{{RPS: 7}}); got.RPS != 7 || got.Rounds != 0 || got.RPSRounds != nil {
		t.Errorf("one round: %+v, want it as it is, without the rounds", got)
	}
	if got := bestRound([]unaryRow{{Skipped: "failed: x"}}); got.Skipped == "" {
		t.Errorf("every round failed: %+v, want the failure", got)
	}

	paced := []streamRow{
		{Case: "g", Mode: "paced", IntervalMs: 100, P99Us: 900, EventsPerSec: 9000},
		{Case: "g", Mode: "paced", IntervalMs: 100, P99Us: 300, Errors: 2},
		{Case: "g", Mode: "paced", IntervalMs: 100, P99Us: 500, EventsPerSec: 8000},
	}
	if got := bestStreamRound(paced); got.P99Us != 500 || got.Rounds != 2 || !slices.Equal(got.P99Rounds, []float64{900, 500}) {
		t.Errorf("paced: %+v, want the lowest p99 of the rounds without failed streams", got)
	}
	maxed := []streamRow{{Case: "g", Mode: "max", EventsPerSec: 5, P99Us: 1}, {Case: "g", Mode: "max", EventsPerSec: 9, P99Us: 2}}
	if got := bestStreamRound(maxed); got.EventsPerSec != 9 {
		t.Errorf("max: %+v, want the most events/s", got)
	}
	if got := bestStreamRound(paced[1:2]); got.Errors != 2 {
		t.Errorf("every round had failures: %+v, want one of them", got)
	}
	byMode := bestStreamRounds([][]streamRow{{maxed[0], paced[0]}, {maxed[1], paced[2]}})
	if len(byMode) != 2 || byMode[0].Mode != "max" || byMode[0].EventsPerSec != 9 || byMode[1].P99Us != 500 {
		t.Errorf("two rounds of two modes: %+v", byMode)
	}

	failed := sampleReport()
	failed.Failures = []string{"stream nginx (paced 250ms): 1 of 1000 streams failed, first: unexpected EOF"}
	var fmd strings.Builder
	failed.markdown(&fmd)
	if !strings.Contains(fmd.String(), "## Failed measurements\n\n- stream nginx (paced 250ms): 1 of 1000") {
		t.Errorf("Markdown hides a failed measurement:\n%s", fmd.String())
	}

	r := sampleReport()
	r.Settings.Rounds = 3
	r.Unary[0].Rounds, r.Unary[0].RPSMin = 3, r.Unary[0].RPS-10
	var md strings.Builder
	r.markdown(&md)
	want := fmt.Sprintf("| %s | %d | %.0f (low %.0f) |", r.Unary[0].Case, r.Unary[0].Conns, r.Unary[0].RPS, r.Unary[0].RPSMin)
	if !strings.Contains(md.String(), want) || !strings.Contains(md.String(), "Rounds: every case measured 3 times") {
		t.Errorf("Markdown lacks the rounds (%q):\n%s", want, md.String())
	}
}
