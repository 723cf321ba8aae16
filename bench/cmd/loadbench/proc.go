package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// process is a child the benchmark started: a backend, a proxy or the
// gateway.
type process struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	err  error
	// stop ends the process: SIGTERM, then SIGKILL if it is still there
	// after a few seconds (exec's Cancel and WaitDelay).
	cancel context.CancelFunc
	// admin is a gateway's admin listener, with pprof, if it serves one.
	admin string
	// slowStart multiplies the time waitReady allows: a process started
	// under valgrind takes many times as long to come up, more on a loaded
	// machine.
	slowStart int
}

// pid is the process's id. With pinning, taskset execs the real program in
// the same process, so this is the program's pid either way.
func (p *process) pid() int { return p.cmd.Process.Pid }

// startProcess runs argv, on the CPUs listed in cpus (as taskset takes them)
// when cpus is not empty. Its output goes to out; it is killed if the
// benchmark dies.
func startProcess(name, cpus string, argv, env []string, out io.Writer) (*process, error) {
	if cpus != "" {
		argv = append([]string{"taskset", "-c", cpus}, argv...)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = childProcAttr()
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, done: make(chan struct{}), cancel: cancel}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// startSUTProcess starts a system under test on its CPUs, inside the
// wrapper the measurement runs it in, if any (valgrind, for instr).
func (b *bench) startSUTProcess(name string, argv, env []string, out io.Writer) (*process, error) {
	wrapped := len(b.sutWrap) > 0
	argv = append(slices.Clone(b.sutWrap), argv...)
	env = append(slices.Clone(env), b.sutEnv...)
	p, err := startProcess(name, b.sutCPUs, argv, env, out)
	if err == nil && wrapped {
		p.slowStart = 10
	}
	return p, err
}

// stop ends the process, SIGTERM then SIGKILL, and waits for it to be gone.
func (p *process) stop() {
	p.cancel()
	<-p.done
}

// waitReady polls url until it answers 200, the process exits, or timeout
// passes.
func (p *process) waitReady(url string, timeout time.Duration) error {
	timeout *= time.Duration(max(p.slowStart, 1))
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	client := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	var last error
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		res, err := client.Do(req)
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("GET %s: HTTP %d", url, res.StatusCode)
		}
		last = err
		select {
		case <-p.done:
			return fmt.Errorf("%s exited before it was ready: %v", p.name, p.err)
		case <-ctx.Done():
			return fmt.Errorf("%s not ready after %s: %v", p.name, timeout, last)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// freeAddr returns a loopback address with a port nothing listens on now.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// sample is what the benchmark reads about the processes at one moment.
type sample struct {
	at      time.Time
	sut     time.Duration // CPU time of the system under test
	backend time.Duration
	// services is what the system under test's services used (Redis),
	// which are neither the backend nor another user of the machine.
	services time.Duration
	loadgen  time.Duration
	machine  machineCPU
}

// takeSample reads the CPU times of the system under test, the backend
// (none when the backend is the system under test), the services the
// system under test uses (Redis for the Redis index case) and this process.
func takeSample(sutPID int, backendPIDs []int, servicePIDs ...int) (sample, error) {
	s := sample{at: time.Now()}
	var errs []error
	var err error
	s.sut, err = procCPU(sutPID)
	errs = append(errs, err)
	for _, pid := range backendPIDs {
		cpu, err := procCPU(pid)
		s.backend += cpu
		errs = append(errs, err)
	}
	for _, pid := range servicePIDs {
		cpu, err := procCPU(pid)
		s.services += cpu
		errs = append(errs, err)
	}
	s.loadgen, err = procCPU(os.Getpid())
	errs = append(errs, err)
	s.machine, err = readMachineCPU()
	errs = append(errs, err)
	return s, errors.Join(errs...)
}

// cpuShare is d as a percentage of one CPU over window.
// cpuUse is how the CPU was spent between two samples: each share is a
// percentage of one core over the window between them.
type cpuUse struct {
	sutTime                                time.Duration
	sut, loadgen, backend, services, other float64
}

func cpuBetween(start, end sample) cpuUse {
	window := end.at.Sub(start.at)
	sut, loadgen, backend, services := end.sut-start.sut, end.loadgen-start.loadgen, end.backend-start.backend, end.services-start.services
	return cpuUse{
		sutTime:  sut,
		sut:      cpuShare(sut, window),
		loadgen:  cpuShare(loadgen, window),
		backend:  cpuShare(backend, window),
		services: cpuShare(services, window),
		// Tick rounding can make what the rest of the machine used negative.
		other: max(0, cpuShare(end.machine.busy-start.machine.busy-(sut+loadgen+backend+services), window)),
	}
}

// per10k is the system under test's CPU seconds per 10,000 of n operations.
func (u cpuUse) per10k(n int) float64 {
	if n <= 0 {
		return 0
	}
	return u.sutTime.Seconds() / float64(n) * 10000
}

func cpuShare(d, window time.Duration) float64 {
	if window <= 0 {
		return 0
	}
	return 100 * float64(d) / float64(window)
}

func itoa(n int) string { return strconv.Itoa(n) }

// pinServices moves already running servers the system under test uses
// (Redis) to CPU 1, beside the load generator and the backend, for as long
// as one measurement, and returns what puts their CPUs back. On the
// system under test's CPU a server would take the gateway's time and stand
// in for what is, deployed, another machine's work. A server that cannot
// be moved stays where it is: its CPU is reported apart either way.
func pinServices(pids []int) (restore func()) {
	var undo []func()
	for _, pid := range pids {
		p := strconv.Itoa(pid)
		out, err := exec.Command("taskset", "-p", p).Output()
		if err != nil {
			continue
		}
		fields := strings.Fields(string(out)) // "pid N's current affinity mask: 3"
		if len(fields) == 0 {
			continue
		}
		mask := fields[len(fields)-1]
		if exec.Command("taskset", "-pc", "1", p).Run() == nil {
			undo = append(undo, func() { _ = exec.Command("taskset", "-p", mask, p).Run() })
		}
	}
	return func() {
		for _, u := range undo {
			u()
		}
	}
}
