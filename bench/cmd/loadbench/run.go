package main

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/a2agate/gateway/bench/canned"
)

// options are the run's settings, from flags.
type options struct {
	gateway         string
	smoke           bool
	warmup          time.Duration
	measure         time.Duration
	conns           []int
	streams         int
	streamEvents    int
	streamIntervals []time.Duration // one paced run each
	idleStreams     int
	idleHold        time.Duration
	quietWait       time.Duration
	indexMaxTasks   int
	streamModes     map[string]bool
	retries         int
	rounds          int
	pin             bool
	out             string
	redis           string
	only            *regexp.Regexp
	gatewayLog      string
	gatewayAdmin    string
	gatewayProfiles string
	gatewayTrace    bool
}

// bench is one run.
type bench struct {
	opt       options
	tmp       string
	self      string // this program, which is also the backend and the Go proxy
	sutCPUs   string // where the system under test runs ("" = anywhere)
	otherCPUs string // where the backend runs
	// sutWrap and sutEnv run each system under test inside another
	// program, with more environment (valgrind, for instr).
	sutWrap, sutEnv   []string
	redisPrefix       string
	gatewayLog        io.Writer
	progress          io.Writer
	rep               report
	failures          []string
	loadgenGOMAXPROCS int
	profiles          int // gateway profiles recorded, which numbers their files
	collector         collector
}

func newBench(opt options, progress io.Writer) (*bench, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "loadbench-")
	if err != nil {
		return nil, err
	}
	b := &bench{opt: opt, tmp: tmp, self: self, progress: progress,
		redisPrefix: fmt.Sprintf("loadbench:%d:", os.Getpid())}
	if opt.pin {
		b.sutCPUs, b.otherCPUs = "0", "1"
	}
	if opt.gatewayLog != "" {
		f, err := os.Create(opt.gatewayLog)
		if err != nil {
			return nil, err
		}
		b.gatewayLog = f
	}
	b.rep = report{
		Started: time.Now().UTC().Format(time.RFC3339),
		Machine: machineInfo(),
		Settings: settings{
			Smoke: opt.smoke, WarmupS: opt.warmup.Seconds(), MeasureS: opt.measure.Seconds(), Conns: opt.conns,
			Streams: opt.streams, StreamEvents: opt.streamEvents, StreamIntervalsMs: millisList(opt.streamIntervals),
			IdleStreams: opt.idleStreams, IndexMaxTasks: opt.indexMaxTasks, QuietWaitS: opt.quietWait.Seconds(), Retries: opt.retries, Rounds: opt.rounds, Pinned: opt.pin, LoadgenGOMAXPROCS: runtime.GOMAXPROCS(0),
		},
	}
	if len(opt.streamIntervals) > 0 {
		b.rep.Settings.StreamIntervalMs = millis(opt.streamIntervals[0])
	}
	return b, nil
}

func (b *bench) close() { _ = os.RemoveAll(b.tmp) }

func (b *bench) logf(format string, args ...any) { fmt.Fprintf(b.progress, format+"\n", args...) }

func (b *bench) fail(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	b.failures = append(b.failures, msg)
	b.rep.Failures = append(b.rep.Failures, msg)
	b.logf("FAILED: %s", msg)
}

func (b *bench) selected(name string) bool { return b.opt.only == nil || b.opt.only.MatchString(name) }

// run measures every case and evaluates the targets.
func (b *bench) run() {
	b.measureAllUnary()
	b.measureAllStreams()
	for _, c := range streamCases() {
		if c.name == idleStreamCase && b.selected("idle streams "+c.name) && b.opt.idleStreams > 0 {
			b.rep.Idle = b.measureIdleStreams(c)
		}
	}
	b.rep.finish()
}

// measureAllUnary measures every selected request case at every number of
// connections, in rounds: each round measures every case once, so that
// every case meets the machine's slow spells and fast ones alike, and each
// row reported is the round with the most req/s (see bestRound).
func (b *bench) measureAllUnary() {
	type cell struct {
		c      sutCase
		n      int
		rows   []unaryRow
		result *unaryRow // a skipped case's row
	}
	var cells []*cell
	for _, c := range unaryCases() {
		if !b.selected(c.name) {
			continue
		}
		if why := b.skipReason(c); why != "" {
			b.logf("%-40s %s", c.name, why)
			cells = append(cells, &cell{result: &unaryRow{Case: c.name, Kind: c.kind, Skipped: why}})
			continue
		}
		for _, n := range b.opt.conns {
			cells = append(cells, &cell{c: c, n: n})
		}
	}
	for round := 1; round <= max(b.opt.rounds, 1); round++ {
		if b.opt.rounds > 1 {
			b.logf("round %d of %d", round, b.opt.rounds)
		}
		for _, cl := range cells {
			if cl.result == nil {
				cl.rows = append(cl.rows, b.measureQuietly(cl.c, cl.n))
			}
		}
	}
	for _, cl := range cells {
		if cl.result == nil {
			r := bestRound(cl.rows)
			cl.result = &r
		}
		b.rep.Unary = append(b.rep.Unary, *cl.result)
	}
}

// measureAllStreams measures every selected stream case in rounds, as
// measureAllUnary does, and reports for each case and mode its best round:
// the most events/s when the backend sends flat out, the lowest p99 when
// paced (see bestStreamRound).
func (b *bench) measureAllStreams() {
	if b.opt.streams == 0 {
		return
	}
	type cell struct {
		c      sutCase
		rounds [][]streamRow
		result []streamRow
	}
	var cells []*cell
	for _, c := range streamCases() {
		if !b.selected("stream " + c.name) {
			continue
		}
		if why := b.skipReason(c); why != "" {
			cells = append(cells, &cell{result: []streamRow{{Case: c.name, Kind: c.kind, Skipped: why}}})
			continue
		}
		cells = append(cells, &cell{c: c})
	}
	for round := 1; round <= max(b.opt.rounds, 1); round++ {
		if b.opt.rounds > 1 {
			b.logf("streams, round %d of %d", round, b.opt.rounds)
		}
		for _, cl := range cells {
			if cl.result == nil {
				cl.rounds = append(cl.rounds, b.measureStreams(cl.c))
			}
		}
	}
	for _, cl := range cells {
		if cl.result == nil {
			cl.result = bestStreamRounds(cl.rounds)
		}
		b.rep.Streams = append(b.rep.Streams, cl.result...)
	}
}

// bestStreamRounds picks, of one case's rounds, the best round of each mode
// (see bestStreamRound), in the order the modes ran.
func bestStreamRounds(rounds [][]streamRow) []streamRow {
	type mode struct {
		name       string
		intervalMs float64
	}
	var order []mode
	byMode := map[mode][]streamRow{}
	for _, rows := range rounds {
		for _, r := range rows {
			m := mode{r.Mode, r.IntervalMs}
			if byMode[m] == nil {
				order = append(order, m)
			}
			byMode[m] = append(byMode[m], r)
		}
	}
	var out []streamRow
	for _, m := range order {
		out = append(out, bestStreamRound(byMode[m]))
	}
	return out
}

// bestStreamRound is, of one case and mode's rounds, the one with the
// most events/s (max) or the lowest p99 (paced), whole, with every round's
// p99. Noise only adds to a latency, as it only takes from a throughput:
// the best round is the estimate of the case undisturbed. A round with
// failed streams is taken only when every round had some.
func bestStreamRound(rows []streamRow) streamRow {
	clean := slices.DeleteFunc(slices.Clone(rows), func(r streamRow) bool { return r.Errors > 0 || r.Skipped != "" })
	if len(clean) == 0 {
		return rows[0]
	}
	better := func(a, b streamRow) int { return cmp.Compare(b.P99Us, a.P99Us) }
	if clean[0].Mode == "max" {
		better = func(a, b streamRow) int { return cmp.Compare(a.EventsPerSec, b.EventsPerSec) }
	}
	best := slices.MaxFunc(clean, better)
	if len(clean) > 1 {
		best.Rounds = len(clean)
		for _, r := range clean {
			best.P99Rounds = append(best.P99Rounds, math.Round(r.P99Us))
		}
	}
	return best
}

// measureQuietly measures c with n connections, again (up to -retries
// times) when other processes disturbed it, keeping the least disturbed.
func (b *bench) measureQuietly(c sutCase, n int) unaryRow {
	row := b.measureUnary(c, n)
	for try := 0; try < b.opt.retries && row.OtherCPU > noisy && row.Skipped == ""; try++ {
		b.logf("%-40s %4d conns measured again: other processes used %.0f%% of a core", c.name, n, row.OtherCPU)
		if again := b.measureUnary(c, n); again.Skipped == "" && again.OtherCPU < row.OtherCPU {
			row = again
		}
	}
	return row
}

// bestRound is the round with the most req/s, whole (one real
// measurement, not a mix of rounds), with the req/s of every round. Noise
// only ever takes from a measurement, and it takes most from a system
// under test that uses its whole core (the gateway) and least from one
// that waits on the load generator (nginx): the best round is the
// estimate of each case undisturbed, as timeit takes the fastest run.
func bestRound(rows []unaryRow) unaryRow {
	var measured []unaryRow
	for _, r := range rows {
		if r.Skipped == "" {
			measured = append(measured, r)
		}
	}
	if len(measured) == 0 {
		return rows[0]
	}
	best := slices.MaxFunc(measured, func(a, b unaryRow) int { return cmp.Compare(a.RPS, b.RPS) })
	if len(measured) > 1 {
		best.Rounds = len(measured)
		for _, r := range measured {
			best.RPSRounds = append(best.RPSRounds, math.Round(r.RPS))
		}
		best.RPSMin = slices.Min(best.RPSRounds)
	}
	return best
}

// measureUnary runs c with n connections on fresh processes, so that the
// peak memory is this load's.
func (b *bench) measureUnary(c sutCase, n int) unaryRow {
	b.waitQuiet()
	row := unaryRow{Case: c.name, Kind: c.kind, Conns: n}
	run, err := b.startSUT(c, false)
	if err != nil {
		b.fail("%s: %v", c.name, err)
		row.Skipped = "failed: " + err.Error()
		return row
	}
	defer run.stop()
	sut, url := run.sut, run.url
	var services []int
	if c.gateway != nil && c.gateway.store == "redis" {
		// Redis serves the gateway: its CPU is not another user's, which
		// would have the case measured again for nothing.
		services = processesNamed("redis-server")
		if b.opt.pin {
			defer pinServices(services)()
		}
	}
	if rss, _, err := procMemory(sut.pid()); err == nil {
		row.RSSIdleMiB = mib(rss)
	}
	profiled := b.profileGateway(sut, fmt.Sprintf("%s %d conns", c.name, n), b.opt.warmup+b.opt.measure)
	res, err := runLoad(loadSpec{
		url: url, conns: n, warmup: b.opt.warmup, measure: b.opt.measure,
		request: canned.Request{Dialect: c.caller, Op: canned.Send}, header: c.header(), services: services,
	}, sut.pid(), run.backendPIDs())
	profiled()
	if err != nil {
		b.fail("%s, %d conns: %v", c.name, n, err)
	}
	if _, peak, err := procMemory(sut.pid()); err == nil {
		row.RSSPeakMiB = mib(peak)
	}
	window := res.end.at.Sub(res.start.at)
	row.Requests, row.Errors, row.FirstError = res.requests, res.errors, res.firstErr
	row.RPS = float64(res.requests) / window.Seconds()
	row.P50Ms, row.P99Ms, row.P999Ms = millis(res.lat.quantile(0.50)), millis(res.lat.quantile(0.99)), millis(res.lat.quantile(0.999))
	cpu := cpuBetween(res.start, res.end)
	row.CPUPer10k = cpu.per10k(res.requests)
	row.SUTCPU, row.LoadgenCPU, row.BackendCPU, row.ServicesCPU, row.OtherCPU = cpu.sut, cpu.loadgen, cpu.backend, cpu.services, cpu.other
	row.Bound = boundBy(row, b.opt.pin)
	if res.errors > 0 {
		b.fail("%s, %d conns: %d errors, first: %s", c.name, n, res.errors, res.firstErr)
	}
	b.logf("%-40s %4d conns %9.0f req/s  p50 %6.3f ms  p99 %6.3f ms  CPU %5.2f s/10k  RSS %5.1f MiB  (sut %3.0f%% gen %3.0f%% backend %3.0f%% other %3.0f%%)",
		c.name, n, row.RPS, row.P50Ms, row.P99Ms, row.CPUPer10k, row.RSSPeakMiB, row.SUTCPU, row.LoadgenCPU, row.BackendCPU, row.OtherCPU)
	return row
}

// streamRun is one run of a stream case: max, or paced at interval.
type streamRun struct {
	name     string
	interval time.Duration
}

func (r streamRun) String() string {
	if r.interval == 0 {
		return r.name
	}
	return r.name + " " + r.interval.String()
}

// measureStreams runs the streams of c on the same processes: as fast as
// the backend can send (throughput), and paced at each interval (latency
// per event under loads the system can carry).
func (b *bench) measureStreams(c sutCase) []streamRow {
	b.waitQuiet()
	run, err := b.startSUT(c, true)
	if err != nil {
		b.fail("stream %s: %v", c.name, err)
		return []streamRow{{Case: c.name, Kind: c.kind, Skipped: "failed: " + err.Error()}}
	}
	defer run.stop()
	sut, url := run.sut, run.url
	var runs []streamRun
	if b.opt.streamModes["max"] {
		runs = append(runs, streamRun{"max", 0})
	}
	if b.opt.streamModes["paced"] {
		for _, d := range b.opt.streamIntervals {
			runs = append(runs, streamRun{"paced", d})
		}
	}
	var rows []streamRow
	for _, mode := range runs {
		spec := streamSpec{
			url: url, streams: b.opt.streams, header: c.header(),
			request: canned.Request{Dialect: c.caller, Op: canned.Stream,
				Stream: canned.StreamShape{Events: b.opt.streamEvents, IntervalMicros: int(mode.interval / time.Microsecond)}},
			stagger: mode.interval,
		}
		if mode.interval > 0 {
			spec.warmupEvents = min(int(b.opt.warmup/mode.interval), b.opt.streamEvents/2)
		}
		var relayBefore relayBuckets
		var relayErr error
		if c.kind == kindGateway && mode.interval > 0 {
			spec.afterWarmup = func() { relayBefore, relayErr = scrapeRelayTime(sut.admin, benchAgent) }
		}
		profiled := b.profileGateway(sut, fmt.Sprintf("stream %s %s", c.name, mode), time.Duration(b.opt.streamEvents)*mode.interval)
		res, err := runStreams(spec, sut.pid(), run.backendPIDs())
		profiled()
		if err != nil {
			b.fail("stream %s (%s): %v", c.name, mode, err)
			continue
		}
		row := streamRow{Case: c.name, Kind: c.kind, Mode: mode.name, Streams: spec.streams, EventsPerStream: b.opt.streamEvents,
			IntervalMs: millis(mode.interval), Events: res.events, Errors: res.errors, FirstError: res.firstErr}
		elapsed := res.end.at.Sub(res.start.at)
		row.Seconds = elapsed.Seconds()
		row.EventsPerSec = float64(res.events) / elapsed.Seconds()
		row.P50Us, row.P99Us, row.P999Us = micros(res.lat.quantile(0.50)), micros(res.lat.quantile(0.99)), micros(res.lat.quantile(0.999))
		cpu := cpuBetween(res.start, res.end)
		row.CPUPer10kEvents = cpu.per10k(res.events)
		row.SUTCPU, row.LoadgenCPU, row.BackendCPU, row.OtherCPU = cpu.sut, cpu.loadgen, cpu.backend, cpu.other
		if _, peak, err := procMemory(sut.pid()); err == nil {
			row.RSSPeakMiB = mib(peak)
		}
		if spec.afterWarmup != nil {
			if err := row.setRelayTime(relayBefore, relayErr, sut.admin); err != nil {
				b.fail("stream %s (%s): the gateway's relay time: %v", c.name, mode, err)
			}
		}
		if res.errors > 0 {
			b.fail("stream %s (%s): %d of %d streams failed, first: %s", c.name, mode, res.errors, spec.streams, res.firstErr)
		}
		b.logf("stream %-33s %-12s %5d×%d  %9.0f events/s  p50 %7.0f µs  p99 %7.0f µs  CPU %5.2f s/10k events  (sut %3.0f%% gen %3.0f%% backend %3.0f%% other %3.0f%%)%s",
			c.name, mode, spec.streams, b.opt.streamEvents, row.EventsPerSec, row.P50Us, row.P99Us, row.CPUPer10kEvents, row.SUTCPU, row.LoadgenCPU, row.BackendCPU, row.OtherCPU, row.relayTimeNote())
		rows = append(rows, row)
	}
	return rows
}

// measureIdleStreams opens many streams through the gateway that stay open
// after their first event and reports the gateway's memory per stream.
func (b *bench) measureIdleStreams(c sutCase) *idleRow {
	row := &idleRow{Case: c.name, Streams: b.opt.idleStreams}
	b.waitQuiet()
	if why := b.skipReason(c); why != "" {
		row.Skipped = why
		return row
	}
	run, err := b.startSUT(c, false)
	if err != nil {
		b.fail("idle streams: %v", err)
		row.Skipped = "failed: " + err.Error()
		return row
	}
	defer run.stop()
	sut, url := run.sut, run.url
	before, _, err := procMemory(sut.pid())
	if err != nil {
		b.fail("idle streams: %v", err)
		return row
	}
	held, failed, err := holdStreams(url, c.header(), c.caller, b.opt.idleStreams)
	defer held.close()
	row.Failed = failed
	if err != nil {
		b.fail("idle streams: %d of %d failed to open, first: %v", failed, b.opt.idleStreams, err)
	}
	// Let the last handlers settle into their idle wait before reading.
	time.Sleep(b.opt.idleHold)
	after, _, err := procMemory(sut.pid())
	if err != nil {
		b.fail("idle streams: %v", err)
		return row
	}
	row.RSSBeforeMiB, row.RSSAfterMiB = mib(before), mib(after)
	if open := b.opt.idleStreams - failed; open > 0 {
		row.KiBPerStream = float64(after-before) / 1024 / float64(open)
	}
	b.logf("idle streams %-27s %5d open  RSS %.1f → %.1f MiB  %.1f KiB per stream", c.name, b.opt.idleStreams-failed, row.RSSBeforeMiB, row.RSSAfterMiB, row.KiBPerStream)
	return row
}

// noisy is the share of a core other processes may use during a
// measurement before it is taken again (with -retries).
const noisy = 25

// waitQuiet waits, up to -quiet-wait, until the rest of the machine is
// nearly idle: on a shared machine other people's builds and tests come and
// go, and a measurement taken beside them says little.
func (b *bench) waitQuiet() {
	if b.opt.quietWait <= 0 {
		return
	}
	const window = 500 * time.Millisecond
	deadline := time.Now().Add(b.opt.quietWait)
	announced := false
	for {
		m1, err1 := readMachineCPU()
		time.Sleep(window)
		m2, err2 := readMachineCPU()
		busy := cpuShare(m2.busy-m1.busy, window)
		if err1 != nil || err2 != nil || busy < 15 {
			return
		}
		if time.Now().After(deadline) {
			b.logf("the machine is still busy (%.0f%% of a core); measuring anyway", busy)
			return
		}
		if !announced {
			b.logf("waiting for the machine to quieten (%.0f%% of a core busy)", busy)
			announced = true
		}
	}
}

// saturated is the share of a core above which it counts as used up:
// /proc counts in 10 ms ticks, and a busy core still idles now and then.
const saturated = 90

// boundBy tells what held a row's throughput back.
func boundBy(u unaryRow, pinned bool) string {
	switch {
	case u.SUTCPU >= saturated:
		return "sut"
	case pinned && u.Kind != kindDirect && u.LoadgenCPU+u.BackendCPU >= saturated,
		pinned && u.Kind == kindDirect && u.LoadgenCPU >= saturated:
		return "client"
	}
	return ""
}

func machineInfo() machine {
	// Not runtime.NumCPU: a pinned run sees only the CPU it is pinned to.
	m := machine{Go: runtime.Version()}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.SplitSeq(string(b), "\n") {
			if strings.HasPrefix(line, "processor") {
				m.CPUs++
			}
			if name, ok := strings.CutPrefix(line, "model name"); ok && m.CPUModel == "" {
				m.CPUModel = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), ":"))
			}
		}
	}
	if bin, err := nginxPath(); err == nil {
		out, _ := exec.Command(bin, "-v").CombinedOutput()
		m.Nginx = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(out)), "nginx version:"))
	}
	return m
}
