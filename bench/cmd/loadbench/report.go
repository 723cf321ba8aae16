package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// report is one run's results, written as JSON and Markdown so that runs
// can be compared.
type report struct {
	Started  string   `json:"started"`
	Machine  machine  `json:"machine"`
	Settings settings `json:"settings"`
	// BestPlain is the plain proxy with the most requests per second at
	// RefConns connections, the reference of every ratio.
	BestPlain string      `json:"best_plain_proxy"`
	RefConns  int         `json:"reference_conns"`
	Unary     []unaryRow  `json:"unary"`
	Streams   []streamRow `json:"streams"`
	Idle      *idleRow    `json:"idle_streams,omitempty"`
	Targets   []target    `json:"targets"`
	// Failures are the measurements that went wrong, whether or not a
	// row shows them (a round that is not its case's best does not).
	Failures []string `json:"failures,omitempty"`
}

type machine struct {
	CPUs     int    `json:"cpus"`
	CPUModel string `json:"cpu_model"`
	Kernel   string `json:"kernel"`
	Go       string `json:"go"`
	Nginx    string `json:"nginx,omitempty"`
}

type settings struct {
	Smoke             bool      `json:"smoke"`
	WarmupS           float64   `json:"warmup_s"`
	MeasureS          float64   `json:"measure_s"`
	Conns             []int     `json:"conns"`
	Streams           int       `json:"streams"`
	StreamEvents      int       `json:"stream_events"`
	StreamIntervalMs  float64   `json:"stream_interval_ms"` // the first of StreamIntervalsMs
	StreamIntervalsMs []float64 `json:"stream_intervals_ms,omitempty"`
	IdleStreams       int       `json:"idle_streams"`
	IndexMaxTasks     int       `json:"index_max_tasks,omitempty"`
	QuietWaitS        float64   `json:"quiet_wait_s,omitempty"`
	Retries           int       `json:"retries,omitempty"`
	Rounds            int       `json:"rounds,omitempty"`
	Pinned            bool      `json:"pinned"`
	LoadgenGOMAXPROCS int       `json:"loadgen_gomaxprocs"`
}

// unaryRow is one case at one number of connections.
type unaryRow struct {
	Case       string  `json:"case"`
	Kind       string  `json:"kind"`
	Conns      int     `json:"conns,omitempty"`
	Skipped    string  `json:"skipped,omitempty"`
	Requests   int     `json:"requests,omitempty"`
	Errors     int     `json:"errors,omitempty"`
	FirstError string  `json:"first_error,omitempty"`
	RPS        float64 `json:"rps,omitempty"`
	// Rounds, when more than one, is how many times the case was measured:
	// the row is the round with the most req/s, RPSRounds the req/s of
	// every round in the order measured, RPSMin the lowest.
	Rounds    int       `json:"rounds,omitempty"`
	RPSRounds []float64 `json:"rps_rounds,omitempty"`
	RPSMin    float64   `json:"rps_min,omitempty"`
	// Ratio is RPS over the best plain proxy's at the same connections.
	Ratio float64 `json:"ratio_to_best_plain,omitempty"`
	// CPURatio is the best plain proxy's CPU per request over this one's:
	// the throughput ratio if each were held back by its own CPU alone.
	CPURatio float64 `json:"cpu_ratio_to_best_plain,omitempty"`
	// Bound names what held the throughput back: "sut" when the system
	// under test used its whole core, "client" when the load generator and
	// the backend used theirs (pinned runs), "" when neither did.
	Bound      string  `json:"bound,omitempty"`
	P50Ms      float64 `json:"p50_ms,omitempty"`
	P99Ms      float64 `json:"p99_ms,omitempty"`
	P999Ms     float64 `json:"p999_ms,omitempty"`
	CPUPer10k  float64 `json:"cpu_s_per_10k,omitempty"`
	RSSIdleMiB float64 `json:"rss_idle_mib,omitempty"`
	RSSPeakMiB float64 `json:"rss_peak_mib,omitempty"`
	// CPU use in percent of one core over the window: the system under
	// test, the load generator, the backend, and everything else on the
	// machine (other users of a shared machine).
	SUTCPU     float64 `json:"sut_cpu_pct,omitempty"`
	LoadgenCPU float64 `json:"loadgen_cpu_pct,omitempty"`
	BackendCPU float64 `json:"backend_cpu_pct,omitempty"`
	// ServicesCPU is Redis's, in the Redis index case.
	ServicesCPU float64 `json:"services_cpu_pct,omitempty"`
	OtherCPU    float64 `json:"other_cpu_pct,omitempty"`
}

// streamRow is one stream case in one mode.
type streamRow struct {
	Case            string  `json:"case"`
	Kind            string  `json:"kind"`
	Mode            string  `json:"mode,omitempty"` // max or paced
	Skipped         string  `json:"skipped,omitempty"`
	Streams         int     `json:"streams,omitempty"`
	EventsPerStream int     `json:"events_per_stream,omitempty"`
	IntervalMs      float64 `json:"interval_ms,omitempty"`
	Events          int     `json:"events,omitempty"`
	Errors          int     `json:"errors,omitempty"`
	FirstError      string  `json:"first_error,omitempty"`
	Seconds         float64 `json:"seconds,omitempty"`
	EventsPerSec    float64 `json:"events_per_s,omitempty"`
	P50Us           float64 `json:"p50_us,omitempty"`
	P99Us           float64 `json:"p99_us,omitempty"`
	P999Us          float64 `json:"p999_us,omitempty"`
	// Added latency over the backend read directly in the same mode.
	AddedP50Us float64 `json:"added_p50_us,omitempty"`
	AddedP99Us float64 `json:"added_p99_us,omitempty"`
	// The gateway's own part of an event's latency, after the warm-up,
	// from its relay time histogram (read from the backend to flushed to
	// the caller): the upper bounds of the buckets that hold the p50 and
	// the p99 (-1: above every bucket), and the share of events within
	// the 100 µs budget.
	RelayEvents         uint64  `json:"relay_events,omitempty"`
	RelayP50UsMax       float64 `json:"relay_p50_us_max,omitempty"`
	RelayP99UsMax       float64 `json:"relay_p99_us_max,omitempty"`
	RelayWithin100UsPct float64 `json:"relay_within_100us_pct,omitempty"`
	CPUPer10kEvents     float64 `json:"cpu_s_per_10k_events,omitempty"`
	// Rounds measured, when more than one, and the p99 of every round in
	// the order measured (the row is the best round's).
	Rounds     int       `json:"rounds,omitempty"`
	P99Rounds  []float64 `json:"p99_us_rounds,omitempty"`
	RSSPeakMiB float64   `json:"rss_peak_mib,omitempty"`
	SUTCPU     float64   `json:"sut_cpu_pct,omitempty"`
	LoadgenCPU float64   `json:"loadgen_cpu_pct,omitempty"`
	BackendCPU float64   `json:"backend_cpu_pct,omitempty"`
	OtherCPU   float64   `json:"other_cpu_pct,omitempty"`
}

// idleRow is the gateway's memory with many open, idle streams.
type idleRow struct {
	Case         string  `json:"case"`
	Skipped      string  `json:"skipped,omitempty"`
	Streams      int     `json:"streams"`
	Failed       int     `json:"failed,omitempty"`
	RSSBeforeMiB float64 `json:"rss_before_mib,omitempty"`
	RSSAfterMiB  float64 `json:"rss_after_mib,omitempty"`
	KiBPerStream float64 `json:"kib_per_stream,omitempty"`
}

// target is one goal the gateway is held to, as measured in this run.
type target struct {
	Name   string `json:"name"`
	Want   string `json:"want"`
	Got    string `json:"got"`
	Result string `json:"result"` // PASS, MISS or SKIP (not measured, or not judgeable)
}

// finish computes the ratios, the added latencies and the targets.
func (r *report) finish() {
	r.RefConns = referenceConns(r.Settings.Conns)
	best := r.bestPlain(r.RefConns)
	if best != nil {
		r.BestPlain = best.Case
	}
	for i := range r.Unary {
		u := &r.Unary[i]
		if ref := r.row(r.BestPlain, u.Conns); ref != nil && ref.RPS > 0 && u.Skipped == "" {
			u.Ratio = u.RPS / ref.RPS
			if u.CPUPer10k > 0 {
				u.CPURatio = ref.CPUPer10k / u.CPUPer10k
			}
		}
	}
	for i := range r.Streams {
		s := &r.Streams[i]
		if s.Kind == kindDirect || s.Skipped != "" {
			continue
		}
		for _, d := range r.Streams {
			if d.Kind == kindDirect && d.Mode == s.Mode && d.IntervalMs == s.IntervalMs && d.Skipped == "" {
				s.AddedP50Us, s.AddedP99Us = s.P50Us-d.P50Us, s.P99Us-d.P99Us
			}
		}
	}
	r.Targets = r.evaluate()
}

// referenceConns is 32 connections when measured, else the most measured.
func referenceConns(conns []int) int {
	ref := 0
	for _, n := range conns {
		if n == 32 {
			return 32
		}
		ref = max(ref, n)
	}
	return ref
}

func (r *report) bestPlain(conns int) *unaryRow {
	var best *unaryRow
	for i := range r.Unary {
		u := &r.Unary[i]
		if u.Kind == kindPlain && u.Conns == conns && u.Skipped == "" && u.Errors == 0 && (best == nil || u.RPS > best.RPS) {
			best = u
		}
	}
	return best
}

func (r *report) row(name string, conns int) *unaryRow {
	for i := range r.Unary {
		if u := &r.Unary[i]; u.Case == name && u.Conns == conns && u.Skipped == "" {
			return u
		}
	}
	return nil
}

func passOrMiss(ok bool) string {
	if ok {
		return "PASS"
	}
	return "MISS"
}

// streamFloorUs is the direct stream p99 above which the added p99 per
// event is not judged: the load generator's and the backend's own tail
// (they share a core when pinned) is then ten times the 100 µs target.
const streamFloorUs = 1000

// evaluate holds the run against the targets of issues 8 and 3.
func (r *report) evaluate() []target {
	var out []target
	ratio := func(name string, want float64) {
		t := target{Name: "throughput of " + name + " at " + itoa(r.RefConns) + " conns", Want: fmt.Sprintf(">= %.2fx best plain proxy", want)}
		u := r.row(name, r.RefConns)
		switch {
		case u == nil || r.BestPlain == "":
			t.Result, t.Got = "SKIP", "not measured"
		default:
			t.Got = fmt.Sprintf("%.2fx (%.0f vs %.0f req/s; CPU ratio %.2fx)", u.Ratio, u.RPS, u.RPS/u.Ratio, u.CPURatio)
			t.Result = passOrMiss(u.Ratio >= want)
		}
		out = append(out, t)
	}
	ratio("gateway 1.0→1.0", 0.95)
	ratio("gateway 0.3→1.0", 0.85)
	ratio("gateway 1.0→0.3", 0.85)
	ratio("gateway 0.3→1.0 +JWT +memory index", 0.80)

	// Tracing every call (issue 26) against the same gateway untraced.
	traced := target{Name: "throughput of gateway 0.3→1.0 +tracing at " + itoa(r.RefConns) + " conns", Want: ">= 0.90x gateway 0.3→1.0 untraced"}
	if u, off := r.row("gateway 0.3→1.0 +tracing", r.RefConns), r.row("gateway 0.3→1.0", r.RefConns); u == nil || off == nil || off.RPS == 0 {
		traced.Result, traced.Got = "SKIP", "not measured"
	} else {
		traced.Got = fmt.Sprintf("%.2fx (%.0f vs %.0f req/s)", u.RPS/off.RPS, u.RPS, off.RPS)
		traced.Result = passOrMiss(u.RPS/off.RPS >= 0.9)
	}
	out = append(out, traced)

	// Added latency is judged with one connection, where nothing queues
	// and the difference is the proxy's own time.
	minConns := 0
	for _, n := range r.Settings.Conns {
		if minConns == 0 || n < minConns {
			minConns = n
		}
	}
	for _, name := range []string{"gateway 1.0→1.0", "gateway 0.3→1.0", "gateway 1.0→0.3"} {
		t := target{Name: "added p99 latency of " + name + " at " + itoa(minConns) + " conn", Want: "<= 0.300 ms over the best plain proxy"}
		u, ref := r.row(name, minConns), r.row(r.BestPlain, minConns)
		if u == nil || ref == nil {
			t.Result, t.Got = "SKIP", "not measured"
		} else {
			added := u.P99Ms - ref.P99Ms
			t.Got = fmt.Sprintf("%+.3f ms (%.3f vs %.3f ms)", added, u.P99Ms, ref.P99Ms)
			t.Result = passOrMiss(added <= 0.3)
		}
		out = append(out, t)
	}

	idle, peak := 0.0, 0.0
	maxConns := 0
	for _, u := range r.Unary {
		maxConns = max(maxConns, u.Conns)
	}
	for _, u := range r.Unary {
		if u.Kind != kindGateway || u.Skipped != "" {
			continue
		}
		idle = max(idle, u.RSSIdleMiB)
		if u.Conns == maxConns {
			peak = max(peak, u.RSSPeakMiB)
		}
	}
	mem := func(name, want string, got, limit float64) {
		t := target{Name: name, Want: want}
		if got == 0 {
			t.Result, t.Got = "SKIP", "not measured"
		} else {
			t.Got = fmt.Sprintf("%.1f MiB (largest of the gateway cases)", got)
			t.Result = passOrMiss(got < limit)
		}
		out = append(out, t)
	}
	mem("gateway RSS idle", "< 30 MiB", idle, 30)
	mem("gateway peak RSS at "+itoa(maxConns)+" conns", "< 60 MiB", peak, 60)

	for _, s := range r.Streams {
		if s.Kind != kindGateway || s.Mode != "paced" || s.Skipped != "" {
			continue
		}
		direct := r.streamRow(kindDirect, s)
		if direct == nil {
			continue
		}
		t := target{
			Name: fmt.Sprintf("added p99 latency per stream event, %s (paced, %s)", s.Case, s.load()), Want: "<= 100 µs over the backend read directly",
			Got: fmt.Sprintf("%+.0f µs (p50 %+.0f µs)", s.AddedP99Us, s.AddedP50Us), Result: passOrMiss(s.AddedP99Us <= 100),
		}
		if s.RelayEvents > 0 {
			t.Got += fmt.Sprintf("; of which in the gateway itself (read from the backend to flushed to the caller, its own histogram): p99 %s µs, %.1f%% of events within 100 µs",
				relayUs(s.RelayP99UsMax), s.RelayWithin100UsPct)
		}
		for _, plain := range r.streamRows(kindPlain, s) {
			t.Got += fmt.Sprintf("; %s, no translation, adds %+.0f µs (p50 %+.0f µs)", plain.Case, plain.AddedP99Us, plain.AddedP50Us)
		}
		if direct.P99Us > streamFloorUs {
			// A difference of two tails far above the target says nothing
			// about the target.
			t.Result = "SKIP"
			t.Got += fmt.Sprintf("; not judged: the backend read directly has a p99 of %.0f µs on this machine", direct.P99Us)
		}
		out = append(out, t)
	}
	if r.Idle != nil && r.Idle.Skipped == "" && r.Idle.KiBPerStream > 0 {
		out = append(out, target{
			Name: fmt.Sprintf("gateway memory per idle open stream (%d streams)", r.Idle.Streams), Want: "< 64 KiB",
			Got: fmt.Sprintf("%.1f KiB", r.Idle.KiBPerStream), Result: passOrMiss(r.Idle.KiBPerStream < 64),
		})
	}
	return out
}

// streamRow is the measured row of kind in the same run (mode and pace)
// as s, or nil.
func (r *report) streamRow(kind string, s streamRow) *streamRow {
	if rows := r.streamRows(kind, s); len(rows) > 0 {
		return rows[0]
	}
	return nil
}

// streamRows are the measured rows of kind in the same run as s.
func (r *report) streamRows(kind string, s streamRow) []*streamRow {
	var rows []*streamRow
	for i, o := range r.Streams {
		if o.Kind == kind && o.Mode == s.Mode && o.IntervalMs == s.IntervalMs && o.Skipped == "" {
			rows = append(rows, &r.Streams[i])
		}
	}
	return rows
}

// load names a paced run by the events per second it asks of the system.
func (s streamRow) load() string {
	if s.IntervalMs <= 0 {
		return s.Mode
	}
	return fmt.Sprintf("%s events/s", groupThousands(float64(s.Streams)*1000/s.IntervalMs))
}

// modeName is the row's mode as the streams table names it.
func (s streamRow) modeName() string {
	if s.Mode == "paced" && s.IntervalMs > 0 {
		return fmt.Sprintf("paced %.0f ms", s.IntervalMs)
	}
	return s.Mode
}

// paceLoads says what load each measured pace puts on the system.
func (r *report) paceLoads() string {
	paces := r.Settings.StreamIntervalsMs
	if len(paces) == 0 {
		paces = []float64{r.Settings.StreamIntervalMs}
	}
	var parts []string
	for _, ms := range paces {
		row := streamRow{Mode: "paced", Streams: r.Settings.Streams, IntervalMs: ms}
		parts = append(parts, fmt.Sprintf("%.0f ms: %s", ms, row.load()))
	}
	return strings.Join(parts, ", ")
}

// groupThousands spells n rounded, with commas between thousands.
func groupThousands(n float64) string {
	digits := strconv.FormatInt(int64(math.Round(n)), 10)
	var b strings.Builder
	for i, c := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 && digits[i-1] != '-' {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// writeFiles writes latest.json and latest.md into dir.
func (r *report) writeFiles(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	j, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "latest.json"), append(j, '\n'), 0o644); err != nil {
		return err
	}
	var md strings.Builder
	r.markdown(&md)
	return os.WriteFile(filepath.Join(dir, "latest.md"), []byte(md.String()), 0o644)
}

func num(v float64, format string) string {
	if v == 0 {
		return "–"
	}
	return fmt.Sprintf(format, v)
}

// backendShare is the backend's CPU share, with Redis's beside it when the
// case uses Redis.
func backendShare(u unaryRow) string {
	if u.ServicesCPU > 0 {
		return fmt.Sprintf("%.0f + Redis %.0f", u.BackendCPU, u.ServicesCPU)
	}
	return fmt.Sprintf("%.0f", u.BackendCPU)
}

// markdown writes the report as Markdown tables.
func (r *report) markdown(w io.Writer) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	mode := "full run"
	if r.Settings.Smoke {
		mode = "SMOKE run (seconds per case: figures are not meaningful)"
	}
	p("# Gateway load benchmark\n\n")
	p("%s, started %s. Machine: %d CPUs (%s), Linux %s, %s", mode, r.Started, r.Machine.CPUs, r.Machine.CPUModel, r.Machine.Kernel, r.Machine.Go)
	if r.Machine.Nginx != "" {
		p(", nginx %s", r.Machine.Nginx)
	}
	p(".\n\n")
	pin := "not pinned: every process may run on any CPU"
	if r.Settings.Pinned {
		pin = "the system under test pinned to CPU 0; the load generator, the backend and Redis to CPU 1"
	}
	p("Each measurement: fresh processes, %.1f s warm-up, %.1f s measured; sends (`message/send` / `SendMessage`, ~0.8 KB request, ~1.7 KB task reply); %s. ", r.Settings.WarmupS, r.Settings.MeasureS, pin)
	p("Ratio: requests/s over the best plain proxy (%s, best at %d conns) at the same number of connections. CPU s/10k: CPU seconds the system under test used per 10,000 requests; CPU ratio: the best plain proxy's CPU s/10k over this row's, the throughput ratio if each were held back by its own CPU alone. CPU %%: share of one core during the window (sut = system under test, gen = load generator, other = everything else on the machine). Bound: *sut* when the system under test used its whole core, *client* when the load generator and the backend used theirs, so that the row's req/s is a floor for the system under test.\n\n", orDash(r.BestPlain), r.RefConns)
	if r.Settings.Rounds > 1 {
		p("Rounds: every case measured %d times, each round measuring every case once (so that each case meets the machine's slow spells and fast ones alike); each row is the case's round with the most req/s, and the figure in brackets is the lowest req/s of its rounds. Noise only takes from a measurement, and most from a system under test that uses its whole core (the gateway), least from one that waits on the load generator (nginx): the best round is the estimate of each case undisturbed. The stream cases are measured in rounds the same way: each row is the round with the most events/s (max) or the lowest p99 (paced; the highest is in brackets), since noise only adds to a latency.\n\n", r.Settings.Rounds)
	}
	p("| case | conns | req/s | ratio | CPU ratio | p50 ms | p99 ms | p99.9 ms | CPU s/10k | RSS idle MiB | RSS peak MiB | CPU %% sut / gen / backend / other | bound | errors |\n")
	p("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|--:|\n")
	for _, u := range r.Unary {
		if u.Skipped != "" {
			p("| %s | | %s | | | | | | | | | | | |\n", u.Case, u.Skipped)
			continue
		}
		rps := fmt.Sprintf("%.0f", u.RPS)
		if u.Rounds > 1 {
			rps += fmt.Sprintf(" (low %.0f)", u.RPSMin)
		}
		p("| %s | %d | %s | %s | %s | %.3f | %.3f | %.3f | %.2f | %s | %s | %.0f / %.0f / %s / %.0f | %s | %d |\n",
			u.Case, u.Conns, rps, num(u.Ratio, "%.2fx"), num(u.CPURatio, "%.2fx"), u.P50Ms, u.P99Ms, u.P999Ms, u.CPUPer10k,
			num(u.RSSIdleMiB, "%.1f"), num(u.RSSPeakMiB, "%.1f"), u.SUTCPU, u.LoadgenCPU, backendShare(u), u.OtherCPU, orNone(u.Bound), u.Errors)
	}
	if len(r.Streams) > 0 {
		p("\n## Streams\n\n%d concurrent streams of %d events each. *max*: the backend sends the events back to back, all streams at once (throughput). *paced N ms*: one event every N ms per stream, the streams all opened first and their events evenly spread over each interval (latency under a load the system carries, %s; the events of the first second, the warm-up, are not counted in the latency). Latency: arrival at the client minus the time the backend stamped into the event just before writing it; *added* is over the backend read directly in the same mode and run. The plain proxies show what a proxy that translates nothing adds on the same machine: the TCP relay, which copies bytes both ways without HTTP (the floor under any proxy on its own CPU), Go's httputil.ReverseProxy (which flushes event streams at once), the gateway's runtime and HTTP stack without the translation, and nginx, told by the backend's `X-Accel-Buffering: no` to pass each event on at once. *In the gateway*: each event's time from the gateway's read of it to its flush to the caller, from the gateway's own histogram (`a2a_gateway_stream_event_relay_seconds`) over the events after the warm-up: the bucket bounds that hold the p50 and the p99; the rest of the added latency is the two hops and the wait to be read.\n\n",
			r.Settings.Streams, r.Settings.StreamEvents, r.paceLoads())
		p("| case | mode | events/s | p50 µs | p99 µs | p99.9 µs | added p50 µs | added p99 µs | in the gateway p50 / p99 µs | CPU s/10k events | RSS peak MiB | CPU %% sut / gen / backend / other | errors |\n")
		p("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
		for _, s := range r.Streams {
			if s.Skipped != "" {
				p("| %s | | %s | | | | | | | | | | |\n", s.Case, s.Skipped)
				continue
			}
			inGateway := "–"
			if s.RelayEvents > 0 {
				inGateway = relayUs(s.RelayP50UsMax) + " / " + relayUs(s.RelayP99UsMax)
			}
			added50, added99 := "–", "–"
			if s.Kind != kindDirect {
				added50, added99 = fmt.Sprintf("%+.0f", s.AddedP50Us), fmt.Sprintf("%+.0f", s.AddedP99Us)
			}
			p99 := fmt.Sprintf("%.0f", s.P99Us)
			if s.Rounds > 1 && s.Mode != "max" {
				p99 += fmt.Sprintf(" (high %.0f)", slices.Max(s.P99Rounds))
			}
			p("| %s | %s | %.0f | %.0f | %s | %.0f | %s | %s | %s | %.2f | %.1f | %.0f / %.0f / %.0f / %.0f | %d |\n",
				s.Case, s.modeName(), s.EventsPerSec, s.P50Us, p99, s.P999Us, added50, added99, inGateway, s.CPUPer10kEvents, s.RSSPeakMiB,
				s.SUTCPU, s.LoadgenCPU, s.BackendCPU, s.OtherCPU, s.Errors)
		}
	}
	if i := r.Idle; i != nil {
		p("\n## Idle streams\n\n")
		if i.Skipped != "" {
			p("%s: %s\n", i.Case, i.Skipped)
		} else {
			p("%s: %d streams opened (%d failed), each sent one event and then kept open. Gateway RSS %.1f MiB before, %.1f MiB with them open: **%.1f KiB per stream**.\n",
				i.Case, i.Streams, i.Failed, i.RSSBeforeMiB, i.RSSAfterMiB, i.KiBPerStream)
		}
	}
	p("\n## Targets\n\n| target | want | got | result |\n|---|---|---|---|\n")
	for _, t := range r.Targets {
		p("| %s | %s | %s | **%s** |\n", t.Name, t.Want, t.Got, t.Result)
	}
	if len(r.Failures) > 0 {
		p("\n## Failed measurements\n\n")
		for _, f := range r.Failures {
			p("- %s\n", f)
		}
	}
}

func orNone(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "none measured"
	}
	return s
}
