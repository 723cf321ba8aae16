package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/a2agate/gateway/internal/redistopo"
	"github.com/a2agate/gateway/internal/testnet"
	"github.com/redis/go-redis/v9"
)

// The cost benchmarks measure what the proxy asks of the index per call,
// on the memory index and on Redis side by side, at 32 callers at once as
// in scripts/bench.sh, and count for Redis the round trips, commands and
// scripts the client sends, the commands Redis runs (scripts' calls
// included), the CPU time Redis spends and the CPU time of the callers'
// process (the client's share of a gateway's).
//
//	go test -run '^$' -bench 'Calls' -benchtime 20000x ./store

// claimedSend admits the i-th send (with a context of its own when
// withContext, as a send that creates a task is) and claims its key, as
// the proxy does before forwarding it.
func claimedSend(s Store, i int64, withContext bool) (n, owner string, key SendKey, expires time.Time, err error) {
	n = strconv.FormatInt(i, 10)
	owner = "o" + strconv.FormatInt(i%32, 10)
	now := time.Now()
	key = SendKey{Agent: "a", Owner: owner, Key: "m" + n}
	rec := SendRecord{Digest: "d", State: SendRunning, Holder: "h", Lease: now.Add(time.Minute), Expires: now.Add(time.Hour)}
	a := Admission{Agent: "a", Owner: owner}
	if withContext {
		a.ContextID = "c" + n
	}
	if _, _, _, err = s.ClaimSend(context.Background(), a, key, rec, now); err == ErrNotFound {
		err = nil
	}
	return n, owner, key, rec.Expires, err
}

// callCost is one proxy call's use of the index.
type callCost struct {
	name string
	// prepare puts what the call finds; run is the call, the i-th.
	prepare func(s Store)
	run     func(s Store, i int64) error
}

var callCosts = []callCost{
	// A unary send that creates a task, as the proxy makes it: the
	// admission with the claim of the send's key before forwarding, the
	// task's record with the send's outcome after.
	{"Send", nil, func(s Store, i int64) error {
		n, owner, key, expires, err := claimedSend(s, i, true)
		if err != nil {
			return err
		}
		rec := SendRecord{Digest: "d", State: SendTask, TaskID: "s" + n, Expires: expires}
		return s.PutSend(context.Background(), Task{ID: "s" + n, ContextID: "c" + n, Owner: owner, Agent: "a", State: "TASK_STATE_COMPLETED"}, key, rec)
	}},
	// A unary send answered with a direct message: the admission with the
	// claim, then the send's outcome, which holds the message.
	{"SendMessage", nil, func(s Store, i int64) error {
		n, _, key, expires, err := claimedSend(s, i, false)
		if err != nil {
			return err
		}
		rec := SendRecord{Digest: "d", State: SendMessage, Answer: []byte(`{"messageId":"r` + n + `","role":"ROLE_AGENT","parts":[{"text":"hi"}]}`), AnswerDialect: "1", Expires: expires}
		return s.SaveSend(context.Background(), key, rec)
	}},
	// A GetTask of a task the caller owns.
	{"Get", func(s Store) {
		for i := range 32 {
			s.Put(context.Background(), Task{ID: "g" + strconv.Itoa(i), Owner: "o", Agent: "a", State: "TASK_STATE_WORKING"})
		}
	}, func(s Store, i int64) error {
		_, err := s.Get(context.Background(), "a", "g"+strconv.FormatInt(i%32, 10))
		return err
	}},
	// A status update of a known task (a stream's events).
	{"Update", func(s Store) {
		for i := range 32 {
			s.Put(context.Background(), Task{ID: "u" + strconv.Itoa(i), Owner: "o", Agent: "a", State: "TASK_STATE_WORKING"})
		}
	}, func(s Store, i int64) error {
		return s.Put(context.Background(), Task{ID: "u" + strconv.FormatInt(i%32, 10), Owner: "o", Agent: "a", State: "TASK_STATE_WORKING"})
	}},
}

func benchCalls(b *testing.B, open func(b *testing.B) Store, after func(b *testing.B, n int)) {
	for _, c := range callCosts {
		b.Run(c.name, func(b *testing.B) {
			s := open(b)
			if c.prepare != nil {
				c.prepare(s)
			}
			var next atomic.Int64
			b.SetParallelism(16) // 32 callers on this machine's 2 CPUs
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := c.run(s, next.Add(1)); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.StopTimer()
			if after != nil {
				after(b, b.N)
			}
		})
	}
}

func BenchmarkMemoryCalls(b *testing.B) {
	benchCalls(b, func(b *testing.B) Store {
		s := newMemory(b, MemoryConfig{})
		return s
	}, nil)
}

// countingHook counts what a client sends: commands, the scripts among
// them, and round trips (a pipeline is one), pipelines among them.
type countingHook struct{ commands, scripts, trips, pipelines atomic.Int64 }

func (h *countingHook) count(cmd redis.Cmder) {
	h.commands.Add(1)
	if name := cmd.Name(); name == "evalsha" || name == "eval" {
		h.scripts.Add(1)
	}
}

func (h *countingHook) trip(pipeline bool) {
	h.trips.Add(1)
	if pipeline {
		h.pipelines.Add(1)
	}
}

// sentHook is a redis.Hook that shows cmd each command a client sends, alone
// or in a pipeline, and trip (when set) each round trip.
type sentHook struct {
	cmd  func(redis.Cmder)
	trip func(pipeline bool)
}

func (h sentHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h sentHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.cmd(cmd)
		if h.trip != nil {
			h.trip(false)
		}
		return next(ctx, cmd)
	}
}

func (h sentHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			h.cmd(cmd)
		}
		if h.trip != nil {
			h.trip(true)
		}
		return next(ctx, cmds)
	}
}

func BenchmarkRedisCalls(b *testing.B) {
	node := redistopo.StartPlain(b)
	admin := clientOf(b, node.Addr)
	hook := &countingHook{}
	var redisBefore int64
	var cpuBefore, clientBefore float64
	benchCalls(b, func(b *testing.B) Store {
		s := openBenchRedis(b, node.Addr)
		s.client.AddHook(sentHook{cmd: hook.count, trip: hook.trip})
		hook.commands.Store(0)
		hook.scripts.Store(0)
		hook.trips.Store(0)
		redisBefore = redisCalls(b, admin)
		cpuBefore = redisCPU(b, admin)
		clientBefore = processCPU(b)
		return s
	}, func(b *testing.B, n int) {
		// The prepared tasks are counted too: a few dozen over thousands.
		ran := redisCalls(b, admin) - redisBefore - 1 // the INFO itself
		b.ReportMetric(float64(hook.trips.Load())/float64(n), "trips/op")
		b.ReportMetric(float64(hook.commands.Load())/float64(n), "sent/op")
		b.ReportMetric(float64(hook.scripts.Load())/float64(n), "scripts/op")
		b.ReportMetric(float64(ran)/float64(n), "redis-cmds/op")
		b.ReportMetric((redisCPU(b, admin)-cpuBefore)*1e6/float64(n), "redis-cpu-us/op")
		b.ReportMetric((processCPU(b)-clientBefore)*1e6/float64(n), "client-cpu-us/op")
	})
}

func openBenchRedis(b *testing.B, addr string) *Redis {
	s, err := NewRedis(RedisConfig{Address: addr, KeyPrefix: freshPrefix()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// processCPU is the CPU time this process used so far, in seconds: the
// callers' and the client's, user and system.
func processCPU(b *testing.B) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// infoLines is the INFO section of the server, line by line.
func infoLines(b *testing.B, c *redis.Client, section string) []string {
	info, err := c.Info(context.Background(), section).Result()
	if err != nil {
		b.Fatal(err)
	}
	return strings.Split(info, "\n")
}

// redisCPU is the CPU time the server used so far, in seconds, from INFO
// cpu (its network I/O and the scripts included).
func redisCPU(b *testing.B, c *redis.Client) float64 {
	var total float64
	for _, line := range infoLines(b, c, "cpu") {
		name, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok && (name == "used_cpu_user" || name == "used_cpu_sys") {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				b.Fatal(err)
			}
			total += f
		}
	}
	return total
}

// redisCalls is the number of commands the server ran, from INFO
// commandstats.
func redisCalls(b *testing.B, c *redis.Client) int64 {
	var total int64
	for _, line := range infoLines(b, c, "commandstats") {
		_, rest, ok := strings.Cut(line, ":calls=")
		if !ok {
			continue
		}
		calls, _, _ := strings.Cut(rest, ",")
		n, err := strconv.ParseInt(calls, 10, 64)
		if err != nil {
			b.Fatal(fmt.Errorf("commandstats line %q: %w", line, err))
		}
		total += n
	}
	return total
}

// The send-cost benchmark measures what Redis itself does for a first
// unary send in the load benchmark's shape (bench/cmd/loadbench, "+Redis
// index"): one principal, every send continuing one context and making a
// completed task, the principal's share full, so that each send evicts a
// task and a send record. Claim and Put split the send into its two
// scripts. Beside Redis's CPU time (which a shared machine inflates) it
// reports, per send, what Redis ran by command (-v) and, with
// A2AGW_REDIS_CALLGRIND=1, the instructions Redis executed (redis-server
// under valgrind's callgrind, sends made one at a time: deterministic
// where its CPU time is not).
//
//	go test -run '^$' -bench RedisSendCost -benchtime 4000x -v ./store
//	A2AGW_REDIS_CALLGRIND=1 go test -run '^$' -bench RedisSendCost -benchtime 2000x ./store
//
// A2AGW_REDIS_CALLGRIND_KEEP=DIR keeps each case's callgrind dump there,
// for callgrind_annotate.

// sendCostShare is the principal's share in the send-cost benchmark:
// small, so that it fills fast under callgrind; an eviction's cost grows
// with the share's logarithm only.
const sendCostShare = 500

const sendCostOwner = "https://issuer.example|caller-1"

type sendCostCase struct {
	name string
	// claim and put are the send's two scripts; a case runs one or both.
	claim, put bool
}

var sendCostCases = []sendCostCase{{"Send", true, true}, {"Claim", true, false}, {"Put", false, true}}

// costSend makes the i-th send of c on s.
func costSend(s *Redis, c sendCostCase, i int64) error {
	n := strconv.FormatInt(i, 10)
	now := time.Now()
	key := SendKey{Agent: "a", Owner: sendCostOwner, Key: "msg-" + n}
	expires := now.Add(10 * time.Minute)
	if c.claim {
		rec := SendRecord{Digest: "9c5d1e0f3b7a2c64", State: SendRunning, Holder: "gw-3f9a1c", Lease: now.Add(30 * time.Second), Expires: expires}
		a := Admission{Agent: "a", Owner: sendCostOwner, ContextID: "ctx-bench"}
		if _, _, claimed, err := s.ClaimSend(context.Background(), a, key, rec, now); err != nil && err != ErrNotFound {
			return err
		} else if !claimed {
			return fmt.Errorf("send %s not claimed", n)
		}
	}
	if !c.put {
		return nil
	}
	t := Task{ID: "task-" + n, ContextID: "ctx-bench", Owner: sendCostOwner, Agent: "a", Backend: "b", State: "TASK_STATE_COMPLETED"}
	if !c.claim {
		return s.Put(context.Background(), t)
	}
	return s.PutSend(context.Background(), t, key, SendRecord{Digest: "9c5d1e0f3b7a2c64", State: SendTask, TaskID: t.ID, Expires: expires})
}

func BenchmarkRedisSendCost(b *testing.B) {
	var addr string
	var counter *callgrindCounter
	if os.Getenv("A2AGW_REDIS_CALLGRIND") == "1" {
		counter = startCallgrindRedis(b)
		addr = counter.addr
	} else {
		addr = redistopo.StartPlain(b).Addr
	}
	admin := clientOf(b, addr)
	for _, c := range sendCostCases {
		b.Run(c.name, func(b *testing.B) {
			cfg := RedisConfig{Address: addr, KeyPrefix: freshPrefix(), MaxTasksPerOwner: sendCostShare}
			if counter != nil { // Redis runs some fifty times slower under callgrind
				cfg.ReadTimeout, cfg.WriteTimeout = time.Minute, time.Minute
			}
			s, err := NewRedis(cfg)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { s.Close() })
			var next atomic.Int64
			// Fill the share, and the send records' share, past the
			// first evictions.
			for range sendCostShare + 64 {
				if err := costSend(s, sendCostCase{claim: true, put: true}, next.Add(1)); err != nil {
					b.Fatal(err)
				}
			}
			if err := admin.ConfigResetStat(context.Background()).Err(); err != nil {
				b.Fatal(err)
			}
			cpuBefore := redisCPU(b, admin)
			if counter != nil {
				counter.zero(b)
			}
			b.ResetTimer()
			if counter != nil {
				// One caller: no batches whose sizes vary from run to run.
				for range b.N {
					if err := costSend(s, c, next.Add(1)); err != nil {
						b.Fatal(err)
					}
				}
			} else {
				b.SetParallelism(16) // 32 callers on this machine's 2 CPUs
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if err := costSend(s, c, next.Add(1)); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			b.StopTimer()
			n := float64(b.N)
			if counter != nil {
				b.ReportMetric(float64(counter.count(b, c.name))/n, "redis-instr/op")
			}
			b.ReportMetric((redisCPU(b, admin)-cpuBefore)*1e6/n, "redis-cpu-us/op")
			stats := commandStats(b, admin)
			var total float64
			var lines []string
			for _, st := range stats {
				total += float64(st.calls)
				lines = append(lines, fmt.Sprintf("%s %.2f (%.1f µs)", st.name, float64(st.calls)/n, st.usec/n))
			}
			b.ReportMetric(total/n, "redis-cmds/op")
			b.Logf("per %s, by command, calls (Redis's µs within them): %s", strings.ToLower(c.name), strings.Join(lines, ", "))
		})
	}
}

// commandStat is one command's line of INFO commandstats.
type commandStat struct {
	name  string
	calls int64
	usec  float64
}

// commandStats reads INFO commandstats, without the INFO and CONFIG
// commands of the measurement itself.
func commandStats(b *testing.B, c *redis.Client) []commandStat {
	var stats []commandStat
	for _, line := range infoLines(b, c, "commandstats") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":calls=")
		if !ok {
			continue
		}
		name = strings.TrimPrefix(name, "cmdstat_")
		if name == "info" || strings.HasPrefix(name, "config") {
			continue
		}
		calls, rest, _ := strings.Cut(rest, ",usec=")
		usec, _, _ := strings.Cut(rest, ",")
		n, err1 := strconv.ParseInt(calls, 10, 64)
		u, err2 := strconv.ParseFloat(usec, 64)
		if err := errors.Join(err1, err2); err != nil {
			b.Fatal(fmt.Errorf("commandstats line %q: %w", line, err))
		}
		stats = append(stats, commandStat{name, n, u})
	}
	slices.SortFunc(stats, func(x, y commandStat) int { return cmp.Compare(y.calls, x.calls) })
	return stats
}

// callgrindCounter is a redis-server run under callgrind, whose
// instructions are counted from zero to a dump.
type callgrindCounter struct {
	addr, dir, keep string
	pid             int
	dumps           int
}

func startCallgrindRedis(b *testing.B) *callgrindCounter {
	redistopo.Require(b)
	for _, bin := range []string{"valgrind", "callgrind_control"} {
		if _, err := exec.LookPath(bin); err != nil {
			b.Skipf("%s not installed: %v", bin, err)
		}
	}
	ln := testnet.Listen(b)
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	dir := b.TempDir()
	cmd := exec.Command("valgrind", "--tool=callgrind", "--dump-instr=no", "--callgrind-out-file="+filepath.Join(dir, "callgrind.%p"),
		"redis-server", "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir,
		"--logfile", filepath.Join(dir, "redis.log"),
		// The timer's housekeeping would add instructions by the second,
		// which callgrind's slowness multiplies: its least, with no
		// rehashing of its own and no active expiry (no key expires
		// within a run).
		"--hz", "1", "--activerehashing", "no", "--enable-debug-command", "local")
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	b.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	c := &callgrindCounter{addr: "127.0.0.1:" + strconv.Itoa(port), dir: dir, keep: os.Getenv("A2AGW_REDIS_CALLGRIND_KEEP"), pid: cmd.Process.Pid}
	client := redis.NewClient(&redis.Options{Addr: c.addr, MaxRetries: -1})
	defer client.Close()
	// Redis starts in seconds under valgrind on an idle machine.
	deadline := time.Now().Add(2 * time.Minute)
	for client.Ping(context.Background()).Err() != nil {
		select {
		case err := <-exited:
			b.Fatalf("redis-server under callgrind exited: %v", err)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			b.Fatal("redis-server under callgrind did not answer PING within 2 minutes")
		}
	}
	if err := client.Do(context.Background(), "DEBUG", "SET-ACTIVE-EXPIRE", "0").Err(); err != nil {
		b.Fatal(err)
	}
	return c
}

func (c *callgrindCounter) control(b *testing.B, arg string) {
	if out, err := exec.Command("callgrind_control", arg, strconv.Itoa(c.pid)).CombinedOutput(); err != nil {
		b.Fatalf("callgrind_control %s: %v: %s", arg, err, out)
	}
}

func (c *callgrindCounter) zero(b *testing.B) { c.control(b, "--zero") }

// count dumps the counters and returns the instructions since zero.
func (c *callgrindCounter) count(b *testing.B, name string) int64 {
	c.control(b, "--dump="+name)
	c.dumps++
	dump, err := os.ReadFile(filepath.Join(c.dir, "callgrind."+strconv.Itoa(c.pid)+"."+strconv.Itoa(c.dumps)))
	if err != nil {
		b.Fatal(err)
	}
	if c.keep != "" {
		if err := os.WriteFile(filepath.Join(c.keep, "redis-"+name+".callgrind"), dump, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for line := range strings.Lines(string(dump)) {
		if rest, ok := strings.CutPrefix(line, "summary:"); ok {
			fields := strings.Fields(rest)
			if len(fields) > 0 {
				n, err := strconv.ParseInt(fields[0], 10, 64)
				if err != nil {
					b.Fatal(err)
				}
				return n
			}
		}
	}
	b.Fatal("callgrind dump without a summary line")
	return 0
}
