//go:build linux

package proxy

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/a2agate/gateway/bench/canned"
	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/grpctest"
	"github.com/a2agate/gateway/internal/testnet"
)

// idleHelperEnv makes the test binary the idle-stream benchmark's other
// process (TestIdleStreamHelper): the backend and the callers, so that
// what the benchmark reads of its own memory is the gateway's alone.
const idleHelperEnv = "A2AGW_IDLE_STREAM_HELPER"

// BenchmarkIdleStreamMemory opens streams through the gateway that each get
// one event and then stay open, idle, as loadbench's idle-streams measure
// does for JSON-RPC, and reports the gateway's memory per stream: over
// JSON-RPC (HTTP/1.1, a connection each), and over gRPC on grpc_listen and
// on h2c beside HTTP/1.1, with a connection per stream and with 100 streams
// a connection. The backend (canned, over HTTP/1.1) and the callers run in
// a second process, this test binary again. A2AGW_IDLE_STREAMS sets how many
// streams (default 1000):
//
//	go test -run '^$' -bench IdleStreamMemory -benchtime 1x ./proxy
//
// KiB-rss/stream is the process's resident memory, as loadbench reads it;
// KiB-heap+stack/stream the heap in use and the goroutine stacks after a
// collection, which the collector's timing does not move.
func BenchmarkIdleStreamMemory(b *testing.B) {
	n := 1000
	if v, err := strconv.Atoi(os.Getenv("A2AGW_IDLE_STREAMS")); err == nil && v > 0 {
		n = v
	}
	for _, tc := range []struct {
		name    string
		perConn int
		// noTimeout: stream_write_timeout 0, under which a gRPC stream
		// sends inline, with no sender goroutine (binding/grpc/send.go).
		noTimeout bool
	}{{"jsonrpc", 1, false}, {"grpc_listen", 1, false}, {"grpc_listen", 100, false}, {"grpc_listen", 100, true},
		{"h2c", 1, false}, {"h2c", 100, false}, {"h2c", 100, true}} {
		name := tc.name + "/streams-per-conn=" + strconv.Itoa(tc.perConn)
		if tc.noTimeout {
			name += "/no-write-timeout"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				measureIdleStreams(b, tc.name, n, tc.perConn, tc.noTimeout)
			}
		})
	}
}

// measureIdleStreams runs one helper process, serves its backend with a
// fresh gateway, has the helper hold n streams of kind, and reports the
// gateway's memory per stream.
func measureIdleStreams(b *testing.B, kind string, n, perConn int, noTimeout bool) {
	b.StopTimer()
	defer b.StartTimer()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	helper := exec.CommandContext(ctx, os.Args[0], "-test.run", "^TestIdleStreamHelper$")
	helper.Env = append(os.Environ(), idleHelperEnv+"=1")
	// A helper still at work past the timeout says where, on its stderr.
	helper.Cancel = func() error { return helper.Process.Signal(syscall.SIGQUIT) }
	helper.WaitDelay = 5 * time.Second
	helper.Stderr = os.Stderr
	toHelper, err := helper.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	fromHelper, err := helper.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := helper.Start(); err != nil {
		b.Fatal(err)
	}
	// The helper ends its streams and exits when its input ends, before
	// the servers close, which would wait for the streams.
	stopHelper := sync.OnceFunc(func() {
		_ = toHelper.Close()
		_ = helper.Wait()
	})
	defer stopHelper()
	lines := bufio.NewScanner(fromHelper)
	backendURL := helperLine(b, lines, "backend ")

	cfg := AgentConfig{Name: "idle", Path: "/", PublicURL: "http://gateway.bench/",
		Backend: BackendConfig{URL: backendURL, Dialect: dialect.Version10, MaxIdleConns: n}}
	// The gRPC server below reads cfg's defaults, as the agent does.
	cfg.SetDefaults()
	writeTimeout := 60 * time.Second // the production default
	if noTimeout {
		writeTimeout = 0
	}
	a := newValidAgent(b, cfg, Options{Logger: slog.New(slog.DiscardHandler), StreamWriteTimeout: writeTimeout})
	gw, err := NewGateway([]*Agent{a})
	if err != nil {
		b.Fatal(err)
	}
	defer gw.Close()
	var addr string
	switch kind {
	case "grpc_listen":
		ln := testnet.Listen(b)
		s := NewGRPCListenerServer(http.HandlerFunc(a.ServeRPC), http.HandlerFunc(a.RefuseUnauthenticated), a.AdmitEarly, a.GRPCRefused, cfg, 0, 0, 0)
		go func() { _ = s.Serve(ln) }()
		defer s.Stop()
		addr = ln.Addr().String()
	default:
		addr = serveH2C(b, gw) // closed once the helper has ended its streams
	}

	before := gatewayMemory()
	if _, err := fmt.Fprintf(toHelper, "%s %s %d %d\n", kind, addr, n, perConn); err != nil {
		b.Fatal(err)
	}
	open, err := strconv.Atoi(helperLine(b, lines, "open "))
	if err != nil || open != n {
		b.Fatalf("%d of %d streams open (%v)", open, n, err)
	}
	// Idle is what is measured: a gRPC stream's sender exits after one to
	// two seconds without a message (binding/grpc senderIdle).
	time.Sleep(idleHold)
	after := gatewayMemory()
	per := func(v float64) float64 { return v / 1024 / float64(n) }
	stopHelper()
	b.ReportMetric(per(float64(after.rss)-float64(before.rss)), "KiB-rss/stream")
	b.ReportMetric(per(float64(after.heap+after.stack)-float64(before.heap+before.stack)), "KiB-heap+stack/stream")
	b.ReportMetric(per(float64(after.stack)-float64(before.stack)), "KiB-stack/stream")
	b.ReportMetric(float64(after.goroutines-before.goroutines)/float64(n), "goroutines/stream")
}

// idleHold is how long the streams are held open, idle, before the
// gateway's memory is read.
const idleHold = 3 * time.Second

// helperLine is the helper's next line, which must start with prefix,
// without it.
func helperLine(b *testing.B, lines *bufio.Scanner, prefix string) string {
	if !lines.Scan() {
		b.Fatalf("the helper ended before saying %q: %v", prefix, lines.Err())
	}
	v, ok := strings.CutPrefix(lines.Text(), prefix)
	if !ok {
		b.Fatalf("the helper said %q, want %q…", lines.Text(), prefix)
	}
	return v
}

type memory struct {
	rss, heap, stack uint64
	goroutines       int
}

// gatewayMemory is this process's memory after a collection.
func gatewayMemory() memory {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m := memory{heap: ms.HeapInuse, stack: ms.StackInuse, goroutines: runtime.NumGoroutine()}
	if status, err := os.ReadFile("/proc/self/status"); err == nil {
		for line := range strings.Lines(string(status)) {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				m.rss = kb << 10
			}
		}
	}
	return m
}

// TestIdleStreamHelper is BenchmarkIdleStreamMemory's other process: it
// serves the canned backend, says its URL, then for the line "KIND ADDR N
// PERCONN" opens N streams to the gateway at ADDR, says how many got their
// first event, and holds them until its input ends.
func TestIdleStreamHelper(t *testing.T) {
	if os.Getenv(idleHelperEnv) == "" {
		t.Skip("the idle-stream benchmark's helper process")
	}
	backend := httptest.NewServer(canned.New())
	defer backend.Close()
	fmt.Printf("backend %s/v10/\n", backend.URL)
	in := bufio.NewScanner(os.Stdin)
	if !in.Scan() {
		return
	}
	var kind, addr string
	var n, perConn int
	if _, err := fmt.Sscan(in.Text(), &kind, &addr, &n, &perConn); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	firsts := make(chan error, n)
	var closers []io.Closer
	dials := make(chan struct{}, 32)
	switch kind {
	case "jsonrpc":
		client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: n, MaxIdleConnsPerHost: n, DisableCompression: true}}
		defer client.CloseIdleConnections()
		for i := range n {
			wg.Go(func() { firsts <- holdJSONRPCStream(ctx, client, "http://"+addr+"/", i, dials) })
		}
	default:
		var conn *grpc.ClientConn
		for i := range n {
			if i%perConn == 0 {
				var err error
				if conn, err = grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials())); err != nil {
					t.Fatal(err)
				}
				closers = append(closers, conn)
			}
			c := conn // the goroutine may start once conn is the next one
			wg.Go(func() { firsts <- holdGRPCStream(ctx, c, i, dials) })
		}
	}
	open := 0
	for range n {
		if err := <-firsts; err != nil {
			fmt.Fprintln(os.Stderr, "idle stream:", err)
			continue
		}
		open++
	}
	fmt.Printf("open %d\n", open)
	for in.Scan() {
	}
	cancel()
	wg.Wait()
	for _, c := range closers {
		_ = c.Close()
	}
}

// holdJSONRPCStream opens a held JSON-RPC stream, reports on first once
// its first event came, and reads it until ctx ends.
func holdJSONRPCStream(ctx context.Context, client *http.Client, url string, i int, dials chan struct{}) error {
	body := canned.Request{Dialect: canned.V10, Op: canned.Stream, ID: "idle-" + strconv.Itoa(i),
		Stream: canned.StreamShape{Events: canned.DefaultStreamEvents, Hold: true}}.Append(nil)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	req.Header = http.Header{"Content-Type": {"application/json"}, "Accept": {"text/event-stream"}, dialect.HeaderVersion: {"1.0"}}
	dials <- struct{}{}
	res, err := client.Do(req)
	<-dials
	if err != nil {
		return err
	}
	r := bufio.NewReader(res.Body)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			res.Body.Close()
			return fmt.Errorf("the stream ended before its first event: %w", err)
		}
		if bytes.HasPrefix(line, []byte("data:")) {
			break
		}
	}
	go func() {
		_, _ = io.Copy(io.Discard, r)
		res.Body.Close()
	}()
	return nil
}

// holdGRPCStream opens a held 1.0 SendStreamingMessage on conn and returns
// once its first event came; the stream stays open until ctx ends.
func holdGRPCStream(ctx context.Context, conn *grpc.ClientConn, i int, dials chan struct{}) error {
	shape, err := structpb.NewStruct(map[string]any{"bench": map[string]any{"events": canned.DefaultStreamEvents, "hold": true}})
	if err != nil {
		return err
	}
	req := &a2apb.SendMessageRequest{Message: &a2apb.Message{MessageId: "idle-" + strconv.Itoa(i), Role: a2apb.Role_ROLE_USER,
		Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: "hold"}}}}, Metadata: shape}
	dials <- struct{}{}
	s, err := a2apb.NewA2AServiceClient(conn).SendStreamingMessage(ctx, req)
	if err == nil {
		_, err = s.Recv()
	}
	<-dials
	if err != nil {
		return err
	}
	go func() {
		if err := grpctest.Drain(s); err != nil && ctx.Err() == nil {
			fmt.Fprintln(os.Stderr, "held stream:", err)
		}
	}()
	return nil
}
