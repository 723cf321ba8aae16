package reliability

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/procfs"
	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/internal/testfiles"
)

// gatewayProc is the gateway binary running from a config file.
type gatewayProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	config string // the config file, rewritten by reload tests
	url    string // http://traffic-address
	admin  string // http://admin-address
	log    *logTail
	exited chan struct{} // closed once the process is gone
	err    error         // its exit status, once exited is closed
}

// startGateway writes config to a file and runs the gateway on it. The
// addresses are read from its log; it is stopped when the test ends, and a
// race report in its log fails the test.
func startGateway(t *testing.T, config string) *gatewayProc {
	t.Helper()
	path := testfiles.Write(t, "gateway.yaml", []byte(config))
	// The test's end is the gateway's: SIGTERM, then SIGKILL if it lingers.
	cmd := exec.CommandContext(t.Context(), gatewayBin, "-config", path)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 15 * time.Second
	if os.Getenv("GORACE") == "" {
		// A race-enabled binary otherwise sleeps a second before it exits,
		// which would blur the shutdown tests' timing.
		cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	g := &gatewayProc{t: t, cmd: cmd, config: path, log: newLogTail(), exited: make(chan struct{})}
	go func() {
		g.log.consume(stderr)
		g.err = cmd.Wait()
		close(g.exited)
	}()
	t.Cleanup(func() {
		<-g.exited // t.Context is done: the gateway is being stopped
		if races := g.log.matching("WARNING: DATA RACE"); races > 0 {
			t.Errorf("the gateway reported %d data races:\n%s", races, g.log.text())
		}
	})
	listening, err := g.log.waitFor(30*time.Second, g.exited, func(l gjson.Result) bool { return l.Get("msg").Str == "listening" })
	if err != nil {
		t.Fatalf("the gateway did not start: %v\n%s", err, g.log.text())
	}
	g.url = "http://" + listening.Get("addr").Str
	if admin, ok := g.log.find(func(l gjson.Result) bool { return l.Get("msg").Str == "admin listening" }); ok {
		g.admin = "http://" + admin.Get("addr").Str
	}
	return g
}

// pid is the gateway's process id.
func (g *gatewayProc) pid() int { return g.cmd.Process.Pid }

// running reports whether the process is still there.
func (g *gatewayProc) running() bool {
	select {
	case <-g.exited:
		return false
	default:
		return true
	}
}

// signal sends sig to the gateway.
func (g *gatewayProc) signal(sig os.Signal) {
	g.t.Helper()
	if err := g.cmd.Process.Signal(sig); err != nil {
		g.t.Fatalf("signal %v: %v", sig, err)
	}
}

// wait waits up to timeout for the process to exit and returns its exit
// status, or an error when it is still running.
func (g *gatewayProc) wait(timeout time.Duration) (int, error) {
	select {
	case <-g.exited:
	case <-time.After(timeout):
		return 0, fmt.Errorf("the gateway is still running %s later", timeout)
	}
	var ee *exec.ExitError
	switch {
	case g.err == nil:
		return 0, nil
	case errors.As(g.err, &ee):
		return ee.ExitCode(), nil
	}
	return 0, g.err
}

// rss returns the gateway's resident set size in bytes, from /proc.
func (g *gatewayProc) rss() (int64, error) {
	p, err := procfs.NewProc(g.pid())
	if err != nil {
		return 0, err
	}
	st, err := p.NewStatus()
	if err != nil {
		return 0, err
	}
	if st.VmRSS == 0 {
		return 0, errors.New("no VmRSS in /proc status")
	}
	return int64(st.VmRSS), nil
}

// adminGet fetches an admin path and returns status and body.
func (g *gatewayProc) adminGet(path string) (int, string, error) {
	return httpGet(g.admin + path)
}

func httpGet(url string) (int, string, error) {
	client := &http.Client{Timeout: 10 * time.Second}
	res, err := client.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, string(b), err
}

// metric returns the sum of the series of name whose labels hold every
// label="value" pair given, as /metrics reports them now.
func (g *gatewayProc) metric(name string, labels ...string) (float64, error) {
	status, body, err := g.adminGet("/metrics")
	if err != nil {
		return 0, err
	}
	if status != http.StatusOK {
		return 0, fmt.Errorf("/metrics: HTTP %d", status)
	}
	return sumSeries(body, name, labels...), nil
}

// sumSeries adds up the samples of name in a Prometheus text exposition
// whose label set contains every one of labels (each `key="value"`).
func sumSeries(exposition, name string, labels ...string) float64 {
	total := 0.0
	for line := range strings.SplitSeq(exposition, "\n") {
		series, value, ok := strings.Cut(line, " ")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		metric, labelSet, _ := strings.Cut(series, "{")
		if metric != name {
			continue
		}
		match := true
		for _, l := range labels {
			match = match && strings.Contains(labelSet, l)
		}
		if v, err := strconv.ParseFloat(value, 64); match && err == nil {
			total += v
		}
	}
	return total
}

// logTail collects the gateway's log lines as they come. The per-call
// access log lines are only counted, by op and outcome: a soak writes
// millions of them.
type logTail struct {
	mu      sync.Mutex
	lines   []string
	calls   map[string]int // "op outcome" -> calls logged
	changed chan struct{}  // closed and replaced on every new line
	done    bool
}

func newLogTail() *logTail {
	return &logTail{calls: map[string]int{}, changed: make(chan struct{})}
}

func (l *logTail) consume(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		l.mu.Lock()
		if j := gjson.Parse(line); j.Get("msg").Str == "call" {
			l.calls[j.Get("op").Str+" "+j.Get("outcome").Str]++
		} else {
			l.lines = append(l.lines, line)
		}
		close(l.changed)
		l.changed = make(chan struct{})
		l.mu.Unlock()
	}
	l.mu.Lock()
	l.done = true
	close(l.changed)
	l.mu.Unlock()
}

// find returns the first JSON line that satisfies match.
func (l *logTail) find(match func(gjson.Result) bool) (gjson.Result, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range l.lines {
		if j := gjson.Parse(line); j.IsObject() && match(j) {
			return j, true
		}
	}
	return gjson.Result{}, false
}

// waitFor waits for a JSON line that satisfies match, up to timeout or
// until stop is closed.
func (l *logTail) waitFor(timeout time.Duration, stop <-chan struct{}, match func(gjson.Result) bool) (gjson.Result, error) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		// changed is taken before the lines are searched: a line that
		// comes in between closes it, where one taken after the search
		// would already be its successor and the line's wake-up lost.
		l.mu.Lock()
		changed, done := l.changed, l.done
		l.mu.Unlock()
		if j, ok := l.find(match); ok {
			return j, nil
		}
		if done {
			return gjson.Result{}, errors.New("the log ended")
		}
		select {
		case <-changed:
		case <-stop:
			if j, ok := l.find(match); ok {
				return j, nil
			}
			return gjson.Result{}, errors.New("the process exited")
		case <-deadline.C:
			return gjson.Result{}, fmt.Errorf("no such log line within %s", timeout)
		}
	}
}

// matching counts the lines that contain s.
func (l *logTail) matching(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.lines {
		if strings.Contains(line, s) {
			n++
		}
	}
	return n
}

// callsLogged returns how many calls of op the gateway logged with outcome
// ("" for any outcome).
func (l *logTail) callsLogged(op, outcome string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for k, v := range l.calls {
		o, oc, _ := strings.Cut(k, " ")
		if o == op && (outcome == "" || oc == outcome) {
			n += v
		}
	}
	return n
}

// text returns the log (without the access log lines), for failure messages.
func (l *logTail) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	const keep = 200
	lines := l.lines
	if len(lines) > keep {
		lines = lines[len(lines)-keep:]
	}
	return strings.Join(lines, "\n")
}

// eventually polls cond until it holds or timeout passes, and returns how
// long it took. It is for state of another process (the gateway's reloads,
// card refreshes and reconnects run on their own clocks).
func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > timeout {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond) // polling another process, not synchronising
	}
	return time.Since(start)
}
