package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	if err := dispatch(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "loadbench:", err)
		os.Exit(1)
	}
}

func dispatch(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: loadbench run|instr|report|wakeup|backend|revproxy|tcprelay [flags]")
	}
	switch args[0] {
	case "backend":
		return serveBackend(args[1:], stderr)
	case "revproxy":
		return serveRevProxy(args[1:], stderr)
	case "tcprelay":
		return serveTCPRelay(args[1:], stderr)
	case "wakeup":
		return wakeupCommand(args[1:], stdout, stderr)
	case "wakeup-peer":
		return wakeupPeer(args[1:], stdout, stderr)
	case "run":
		return runCommand(args[1:], stdout, stderr)
	case "report":
		return reportCommand(args[1:], stdout, stderr)
	case "instr":
		return instrCommand(args[1:], stdout, stderr)
	}
	return fmt.Errorf("unknown command %q: want run, instr, report, wakeup, backend, revproxy or tcprelay", args[0])
}

// pinnedEnv marks a loadbench that already moved itself to the load
// generator's CPU.
const pinnedEnv = "LOADBENCH_PINNED"

func runCommand(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("run", stderr)
	gateway := fs.String("gateway", "", "the gateway binary to measure (go build -o BIN ./cmd/gateway). Required")
	smoke := fs.Bool("smoke", false, "run every case for about a second, to prove the benchmark works (CI)")
	warmup := fs.Duration("warmup", time.Second, "unmeasured load before each measurement")
	measure := fs.Duration("duration", 5*time.Second, "measured load per case and number of connections")
	conns := fs.String("conns", "1,32,256", "numbers of concurrent connections, comma-separated")
	streams := fs.Int("streams", 1000, "concurrent streams (0: skip the stream runs)")
	streamEvents := fs.Int("stream-events", 50, "events per stream")
	streamIntervals := fs.String("stream-interval", "100ms,250ms", "pause between events in the paced stream runs, per stream; several, comma-separated, give one paced run each (the load on the gateway: 1,000 streams at 100ms are 10,000 events/s)")
	streamModes := fs.String("stream-modes", "max,paced", "which stream runs: max (throughput), paced (latency), or both")
	idleStreams := fs.Int("idle-streams", 5000, "idle open streams for the memory-per-stream measurement (0: skip)")
	idleHold := fs.Duration("idle-hold", 500*time.Millisecond, "how long the idle streams stay open before the gateway's memory is read (longer: time to profile it)")
	quietWait := fs.Duration("quiet-wait", 0, "before each measurement, wait up to this long for the rest of the machine to be idle (shared machines)")
	retries := fs.Int("retries", 0, "measure a case again, up to this many times, when other processes used more than a quarter of a core meanwhile")
	rounds := fs.Int("rounds", 1, "measure every case this many times, every case once per round, and report each case's best round: the most req/s, for streams the most events/s or the lowest p99 (noisy machines)")
	indexMaxTasks := fs.Int("index-max-tasks", 0, "diagnostic: bound the gateway's in-memory task index to this many tasks (default: the gateway's default)")
	pin := fs.String("pin", "auto", "pin the system under test to CPU 0 and the rest to CPU 1: auto (when there are 2+ CPUs and taskset), on, off")
	out := fs.String("out", "", "write latest.json and latest.md here (default: print only)")
	redis := fs.String("redis", "127.0.0.1:6379", "Redis for the Redis task index case")
	only := fs.String("only", "", "run only the cases whose name matches this regexp")
	gatewayAdmin := fs.String("gateway-admin", "", "diagnostic: serve the gateway's admin listener, with /debug/pprof/, at this address (profile it during a measurement)")
	gatewayProfiles := fs.String("gateway-profiles", "", "record a CPU profile of the gateway during each of its measurements into this directory (for go tool pprof)")
	gatewayTrace := fs.Bool("gateway-trace", false, "with -gateway-profiles: record a runtime execution trace instead of a CPU profile (go tool trace -pprof=sched or net: where calls wait for a P or for the network)")
	gatewayLog := fs.String("gateway-log", "", "write the gateway's log here (default: discarded; its formatting cost is measured either way)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *gateway == "" {
		return errors.New("run: -gateway BIN is required (scripts/bench.sh builds it)")
	}
	opt := options{gateway: *gateway, smoke: *smoke, warmup: *warmup, measure: *measure, streams: *streams,
		streamEvents: *streamEvents, idleStreams: *idleStreams, idleHold: *idleHold, quietWait: *quietWait, retries: *retries, rounds: *rounds, indexMaxTasks: *indexMaxTasks,
		out: *out, redis: *redis, gatewayLog: *gatewayLog, gatewayAdmin: *gatewayAdmin, gatewayProfiles: *gatewayProfiles, gatewayTrace: *gatewayTrace}
	if opt.gatewayTrace && opt.gatewayProfiles == "" {
		return errors.New("run: -gateway-trace needs -gateway-profiles DIR")
	}
	if opt.gatewayProfiles != "" {
		if err := os.MkdirAll(opt.gatewayProfiles, 0o755); err != nil {
			return err
		}
	}
	if opt.rounds < 1 {
		return fmt.Errorf("-rounds: %d; want 1 or more", opt.rounds)
	}
	var err error
	if opt.conns, err = parseConns(*conns); err != nil {
		return err
	}
	if opt.streamIntervals, err = parseIntervals(*streamIntervals); err != nil {
		return err
	}
	opt.streamModes = map[string]bool{}
	for m := range strings.SplitSeq(*streamModes, ",") {
		if m = strings.TrimSpace(m); m != "max" && m != "paced" {
			return fmt.Errorf("-stream-modes: %q is not max or paced", m)
		}
		opt.streamModes[m] = true
	}
	if opt.only, err = compileOnly(*only); err != nil {
		return err
	}
	if opt.smoke {
		opt.warmup, opt.measure = 150*time.Millisecond, 600*time.Millisecond
		opt.streams, opt.streamIntervals, opt.idleStreams = min(opt.streams, 100), []time.Duration{10 * time.Millisecond}, min(opt.idleStreams, 200)
	}
	if opt.pin, err = decidePin(*pin); err != nil {
		return err
	}
	if opt.pin && os.Getenv(pinnedEnv) == "" {
		return pinSelf()
	}
	b, err := newBench(opt, stderr)
	if err != nil {
		return err
	}
	defer b.close()
	ctx, stop := signalContext()
	defer stop()
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.run()
	}()
	select {
	case <-done:
	case <-ctx.Done():
		return errors.New("interrupted")
	}
	b.rep.markdown(stdout)
	if opt.out != "" {
		if err := b.rep.writeFiles(opt.out); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "wrote %s/latest.md and latest.json\n", opt.out)
	}
	if len(b.failures) > 0 {
		return fmt.Errorf("%d measurements failed:\n  %s", len(b.failures), strings.Join(b.failures, "\n  "))
	}
	return nil
}

// reportCommand renders a saved run again, with this version's ratios and
// targets: `loadbench report -in latest.json [-out DIR]`.
func reportCommand(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("report", stderr)
	in := fs.String("in", "bench/results/latest.json", "a run's JSON")
	out := fs.String("out", "", "write latest.json and latest.md here (default: print only)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	b, err := os.ReadFile(*in)
	if err != nil {
		return err
	}
	var r report
	if err := json.Unmarshal(b, &r); err != nil {
		return fmt.Errorf("%s: %w", *in, err)
	}
	r.finish()
	r.markdown(stdout)
	if *out != "" {
		return r.writeFiles(*out)
	}
	return nil
}

func parseConns(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-conns: %q is not a positive number", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// compileOnly reads the -only regexp; "" selects every case.
func compileOnly(expr string) (*regexp.Regexp, error) {
	if expr == "" {
		return nil, nil
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("-only: %w", err)
	}
	return re, nil
}

// parseIntervals reads the -stream-interval list.
func parseIntervals(list string) ([]time.Duration, error) {
	var out []time.Duration
	for f := range strings.SplitSeq(list, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(f))
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("-stream-interval: %q is not a positive duration", f)
		}
		out = append(out, d)
	}
	return out, nil
}

func decidePin(mode string) (bool, error) {
	_, err := exec.LookPath("taskset")
	switch mode {
	case "off":
		return false, nil
	case "on":
		if err != nil {
			return false, errors.New("-pin on: taskset is not installed")
		}
		return true, nil
	case "auto":
		// A pinned run sees only its own CPU: it decided before it moved.
		return os.Getenv(pinnedEnv) != "" || err == nil && runtime.NumCPU() >= 2, nil
	}
	return false, fmt.Errorf("-pin %q: want auto, on or off", mode)
}

// pinSelf runs this program again on CPU 1, where the load generator and
// the backend belong; the runtime sizes GOMAXPROCS to the CPUs it may use.
func pinSelf() error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	taskset, err := exec.LookPath("taskset")
	if err != nil {
		return err
	}
	argv := append([]string{"taskset", "-c", "1", self}, os.Args[1:]...)
	return syscall.Exec(taskset, argv, append(os.Environ(), pinnedEnv+"=1"))
}

func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
}
