package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/a2agate/gateway/bench/canned"
)

// instrCommand counts the instructions each system under test executes per
// request, in user space, under valgrind's callgrind. Wall-clock figures on
// a shared machine move by half from one minute to the next; an instruction
// count does not (a few percent, from where the garbage collections fall),
// so a change to the hot path can be judged before and after in one run.
// It leaves out what the kernel does for the process (the system calls),
// which the load runs measure.
func instrCommand(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("instr", stderr)
	gateway := fs.String("gateway", "", "the gateway binary to measure (go build -o BIN ./cmd/gateway). Required")
	requests := fs.Int("requests", 2000, "requests counted per case")
	warmup := fs.Int("warmup", 300, "requests sent before the count starts (connections open, caches and pools warm)")
	only := fs.String("only", "", "run only the cases whose name matches this regexp")
	redis := fs.String("redis", "127.0.0.1:6379", "Redis for the Redis task index case; one serving nothing else, for its per-request figures (INFO deltas)")
	keep := fs.String("keep", "", "keep each case's callgrind dump in this directory, as CASE.callgrind, for callgrind_annotate")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *gateway == "" {
		return errors.New("instr: -gateway BIN is required")
	}
	if *requests < 1 || *warmup < 0 {
		return fmt.Errorf("instr: -requests %d -warmup %d; want at least one request counted", *requests, *warmup)
	}
	valgrind, err := exec.LookPath("valgrind")
	if err != nil {
		return errors.New("instr: valgrind is not installed (apt-get install valgrind)")
	}
	control, err := exec.LookPath("callgrind_control")
	if err != nil {
		return errors.New("instr: callgrind_control (valgrind's) is not on PATH")
	}
	opt := options{gateway: *gateway, redis: *redis}
	if opt.only, err = compileOnly(*only); err != nil {
		return err
	}
	b, err := newBench(opt, stderr)
	if err != nil {
		return err
	}
	defer b.close()
	b.sutWrap = []string{valgrind, "--tool=callgrind", "--dump-instr=no", "--callgrind-out-file=" + filepath.Join(b.tmp, "callgrind.%p")}
	// Callgrind fails an assertion on the signals Go preempts goroutines
	// with; cooperative preemption alone runs the same code. One P, as in
	// the pinned load runs: valgrind runs one thread at a time, and Go's
	// idle threads spinning for work would be counted as the work. Valgrind
	// 3.19 does not decode RDTSCP, which Go reads the clock with where the
	// CPU has it (the process dies of SIGILL); the fenced RDTSC it falls
	// back to is the same work.
	b.sutEnv = []string{"GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off", "GOMAXPROCS=1"}
	var rows []instrRow
	for _, c := range unaryCases() {
		if c.start == nil || !b.selected(c.name) {
			continue
		}
		row := instrRow{Case: c.name, Kind: c.kind, n: *requests}
		if why := b.skipReason(c); why != "" {
			row.Skipped = why
		} else if row.PerRequest, row.redis, err = b.countInstructions(c, control, *warmup, *requests, *keep); err != nil {
			row.Skipped = "failed: " + err.Error()
			b.fail("%s: %v", c.name, err)
		}
		b.logf("%-40s %s", c.name, row.figure())
		rows = append(rows, row)
	}
	writeInstrTable(stdout, rows, *requests)
	if len(b.failures) > 0 {
		return fmt.Errorf("%d failures, first: %s", len(b.failures), b.failures[0])
	}
	return nil
}

// instrRow is one case's count.
type instrRow struct {
	Case, Kind string
	PerRequest float64 // instructions per request; 0 when skipped
	Skipped    string
	// redis is what Redis did for the counted requests, in the Redis
	// index case.
	redis *redisCost
	n     int
}

func (r instrRow) figure() string {
	if r.Skipped != "" {
		return r.Skipped
	}
	return fmt.Sprintf("%.0f instructions/request%s", r.PerRequest, r.redisFigure())
}

// redisFigure is Redis's work per request, "" for a case without Redis.
func (r instrRow) redisFigure() string {
	if r.redis == nil || r.n == 0 {
		return ""
	}
	n := float64(r.n)
	return fmt.Sprintf("; Redis: %.2f reads (round trips), %.1f commands per request",
		float64(r.redis.reads)/n, float64(r.redis.commands)/n)
}

// countInstructions starts c under callgrind, sends warmup requests on one
// keep-alive connection, zeroes the counters, sends n more and reads the
// instructions the process executed for them, and for a case with the
// Redis index what Redis did for them.
func (b *bench) countInstructions(c sutCase, control string, warmup, n int, keep string) (float64, *redisCost, error) {
	run, err := b.startSUT(c, false)
	if err != nil {
		return 0, nil, err
	}
	defer run.stop()
	sut, url := run.sut, run.url
	client := &http.Client{Transport: newLoadTransport(1)}
	defer client.Transport.(*http.Transport).CloseIdleConnections()
	req := canned.Request{Dialect: c.caller, Op: canned.Send}
	header := c.header()
	var body []byte
	buf := new(bytes.Buffer)
	send := func(count int, prefix string) error {
		for i := range count {
			req.ID = prefix + strconv.Itoa(i)
			body = req.Append(body[:0])
			if err := post(client, url, header, body, buf); err != nil {
				return err
			}
		}
		return nil
	}
	pid := strconv.Itoa(sut.pid())
	if err := send(warmup, "w-"); err != nil {
		return 0, nil, fmt.Errorf("warm-up: %w", err)
	}
	usesRedis := c.gateway != nil && c.gateway.store == "redis"
	var redisBefore redisCost
	if usesRedis {
		if redisBefore, err = readRedisCost(b.opt.redis); err != nil {
			return 0, nil, err
		}
	}
	if out, err := exec.Command(control, "--zero", pid).CombinedOutput(); err != nil {
		return 0, nil, fmt.Errorf("callgrind_control --zero: %v: %s", err, out)
	}
	if err := send(n, "c-"); err != nil {
		return 0, nil, err
	}
	var redisUsed *redisCost
	if usesRedis {
		after, err := readRedisCost(b.opt.redis)
		if err != nil {
			return 0, nil, err
		}
		used := after.since(redisBefore)
		redisUsed = &used
	}
	if out, err := exec.Command(control, "--dump=counted", pid).CombinedOutput(); err != nil {
		return 0, nil, fmt.Errorf("callgrind_control --dump: %v: %s", err, out)
	}
	// The first dump of the process holds what was counted since --zero.
	dump, err := os.ReadFile(filepath.Join(b.tmp, "callgrind."+pid+".1"))
	if err != nil {
		return 0, nil, err
	}
	if keep != "" {
		if err := os.MkdirAll(keep, 0o755); err != nil {
			return 0, nil, err
		}
		name := strings.NewReplacer(" ", "_", "/", "_", "+", "").Replace(c.name) + ".callgrind"
		if err := os.WriteFile(filepath.Join(keep, name), dump, 0o644); err != nil {
			return 0, nil, err
		}
	}
	total, err := callgrindSummary(bytes.NewReader(dump))
	if err != nil {
		return 0, nil, err
	}
	return float64(total) / float64(n), redisUsed, nil
}

// callgrindSummary reads the instruction total of a callgrind dump: its
// "summary:" line (instructions are the first event, and with
// --dump-instr=no the only one).
func callgrindSummary(r io.Reader) (int64, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "summary:"); ok {
			fields := strings.Fields(rest)
			if len(fields) == 0 {
				break
			}
			return strconv.ParseInt(fields[0], 10, 64)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, errors.New("callgrind dump without a summary line")
}

// writeInstrTable prints the counts as Markdown, each beside the plain
// proxies' as a ratio (theirs over this row's, like the CPU ratio of the
// load runs).
func writeInstrTable(w io.Writer, rows []instrRow, n int) {
	plain := map[string]float64{}
	var plainNames []string
	for _, r := range rows {
		if r.Kind == kindPlain && r.PerRequest > 0 {
			plain[r.Case] = r.PerRequest
			plainNames = append(plainNames, r.Case)
		}
	}
	fmt.Fprintf(w, "Instructions per request in user space (valgrind callgrind), %d sends on one keep-alive connection after a warm-up.\n\n| case | instructions/request |", n)
	for _, p := range plainNames {
		fmt.Fprintf(w, " ratio to %s |", p)
	}
	fmt.Fprintf(w, "\n|---|--:|%s\n", strings.Repeat("--:|", len(plainNames)))
	for _, r := range rows {
		if r.Skipped != "" {
			fmt.Fprintf(w, "| %s | %s |%s\n", r.Case, r.Skipped, strings.Repeat(" |", len(plainNames)))
			continue
		}
		fmt.Fprintf(w, "| %s | %.0f |", r.Case, r.PerRequest)
		for _, p := range plainNames {
			fmt.Fprintf(w, " %.2fx |", plain[p]/r.PerRequest)
		}
		fmt.Fprintln(w)
	}
	for _, r := range rows {
		if f := r.redisFigure(); f != "" {
			fmt.Fprintf(w, "\n%s%s (Redis's INFO: commands include those its scripts call).\n", r.Case, f)
		}
	}
}
