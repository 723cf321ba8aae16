//go:build unix

package proxy

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"syscall"
	"testing"
	"time"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"github.com/tidwall/gjson"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/a2agate/gateway/bench/canned"
	"github.com/a2agate/gateway/internal/testnet"
)

// BenchmarkGRPCUnary compares one 1.0 GetTask through the gateway over
// gRPC (h2c) with the same call over JSON-RPC (HTTP/1.1 keep-alive), on one
// listener, client included, the backend answered in memory. cpu-ns/op is
// the process's CPU time (user and system) per call, which wall time on a
// shared machine is not:
//
//	go test -run '^$' -bench GRPCUnary -benchmem ./proxy
func BenchmarkGRPCUnary(b *testing.B) {
	h, addr, req := newGetTaskBench(b)
	b.Run("jsonrpc", func(b *testing.B) { benchJSONRPC(b, h, "http://"+addr+"/") })
	// grpc-native is the same front end on grpc-go's own transport, on a
	// listener of its own, as a grpc_listen would serve it.
	ln := testnet.Listen(b)
	a := h.gw.(*Gateway).agents[0]
	native := NewGRPCListenerServer(http.HandlerFunc(a.ServeRPC), http.HandlerFunc(a.RefuseUnauthenticated), a.AdmitEarly, a.GRPCRefused, a.cfg, 0, 0, 0)
	go func() { _ = native.Serve(ln) }()
	defer native.Stop()
	for _, target := range []struct{ name, addr string }{{"grpc", addr}, {"grpc-native", ln.Addr().String()}} {
		b.Run(target.name, func(b *testing.B) {
			benchGRPCGetTask(b, target.addr, req)
		})
	}
}

// newGetTaskBench is the gRPC benchmarks' gateway, serving h2c beside
// HTTP/1.1 at addr, and its GetTask as the JSON-RPC call's params say it.
func newGetTaskBench(b *testing.B) (h *benchHarness, addr string, req *a2apb.GetTaskRequest) {
	h = newBenchHarness(b, benchCase{op: canned.Get, caller: canned.V10, backend: canned.V10})
	h.check(b)
	history := int32(gjson.GetBytes(h.body, "params.historyLength").Int())
	return h, serveH2C(b, h.gw), &a2apb.GetTaskRequest{Id: gjson.GetBytes(h.body, "params.id").Str, HistoryLength: &history}
}

// benchJSONRPC posts the harness's JSON-RPC call to url over HTTP/1.1
// keep-alive.
func benchJSONRPC(b *testing.B, h *benchHarness, url string) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	defer client.CloseIdleConnections()
	benchCPU(b, func() { postJSON(b, client, url, h) }, 1, "cpu-ns/op")
}

// postJSON posts the harness's JSON-RPC request to url and returns the
// answer, which must hold a task.
func postJSON(b *testing.B, client *http.Client, url string, h *benchHarness) []byte {
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(h.body))
	req.Header = h.req.Header.Clone()
	res, err := client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	out, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !gjson.GetBytes(out, "result.id").Exists() {
		b.Fatalf("no task: %s", out)
	}
	return out
}

// benchGRPCGetTask makes the JSON-RPC benchmark's call (its params, as the
// GetTaskRequest) and, as its client does with the JSON-RPC answer, reads the
// answer's bytes and looks at the task's id only: decoding the whole Task is
// the client's cost, not the gateway's, and the JSON-RPC client does not
// decode its result either.
func benchGRPCGetTask(b *testing.B, addr string, req *a2apb.GetTaskRequest) {
	conn := dialGRPC(b, addr)
	var out rawMessage
	call := func() {
		if err := conn.Invoke(context.Background(), a2apb.A2AService_GetTask_FullMethodName, req, &out, grpc.ForceCodec(rawCodec{})); err != nil {
			b.Fatal(err)
		}
		if id := firstStringField(out); id != req.Id {
			b.Fatalf("task id %q, want %q", id, req.Id)
		}
	}
	benchCPU(b, call, 1, "cpu-ns/op")
}

// rawMessage is an answer's protobuf bytes, undecoded.
type rawMessage []byte

// rawCodec writes messages as the proto codec does, a *rawMessage as its
// bytes, and keeps what it reads as its bytes (into a *rawMessage, reusing
// its array).
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) {
	if m, ok := v.(*rawMessage); ok {
		return *m, nil
	}
	return proto.Marshal(v.(proto.Message))
}

func (rawCodec) Unmarshal(data []byte, v any) error {
	m := v.(*rawMessage)
	*m = append((*m)[:0], data...)
	return nil
}

func (rawCodec) Name() string { return "proto" }

// firstStringField is the value of field 1 of a message (Task.id), "" when
// it is not a string there.
func firstStringField(b []byte) string {
	num, typ, n := protowire.ConsumeTag(b)
	if n < 0 || num != 1 || typ != protowire.BytesType {
		return ""
	}
	v, m := protowire.ConsumeBytes(b[n:])
	if m < 0 {
		return ""
	}
	return string(v)
}

// benchCPU runs op once untimed, so that its checks fail a broken case
// before any figure, then b.N times, and reports the process's CPU time
// (user and system) per op, divided by per for the events an op carries.
func benchCPU(b *testing.B, op func(), per int, unit string) {
	op()
	b.ReportAllocs()
	b.ResetTimer()
	start := cpuTime()
	for b.Loop() {
		op()
	}
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N*per), unit)
}

// cpuTime is the CPU time the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
