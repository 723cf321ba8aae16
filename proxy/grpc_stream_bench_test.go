//go:build unix

package proxy

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"testing"
	"time"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/a2agate/gateway/bench/canned"
	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/testnet"
)

// streamBenchEvents is how many events each benchmark stream carries.
const streamBenchEvents = 128

// BenchmarkGRPCStreamEvents relays 1.0 SendStreamingMessage streams of
// streamBenchEvents events through the gRPC binding, on both transports,
// with the production stream_write_timeout, the backend answered in memory:
// an op is one stream, cpu-ns/event the process's CPU per event. For
// instructions, run it under callgrind at two counts and difference them
// (bench/README.md):
//
//	go test -run '^$' -bench GRPCStreamEvents -benchmem ./proxy
func BenchmarkGRPCStreamEvents(b *testing.B) {
	cfg := AgentConfig{Name: "bench", Path: "/", PublicURL: "http://gateway.bench/",
		Backend: BackendConfig{URL: "http://backend.bench/v10/", Dialect: dialect.Version10}}
	a := newValidAgent(b, cfg, Options{Transport: canned.New(), Logger: slog.New(slog.DiscardHandler),
		StreamWriteTimeout: 60 * time.Second})
	gw := soleGateway(b, a)
	ln := testnet.Listen(b)
	native := NewGRPCListenerServer(http.HandlerFunc(a.ServeRPC), http.HandlerFunc(a.RefuseUnauthenticated), a.AdmitEarly, a.GRPCRefused, cfg, 0, 0, 0)
	go func() { _ = native.Serve(ln) }()
	b.Cleanup(native.Stop)
	shape, err := structpb.NewStruct(map[string]any{"bench": map[string]any{"events": streamBenchEvents}})
	if err != nil {
		b.Fatal(err)
	}
	req := &a2apb.SendMessageRequest{Message: &a2apb.Message{MessageId: "m1", Role: a2apb.Role_ROLE_USER,
		Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: "go"}}}}, Metadata: shape}
	for _, target := range []struct{ name, addr string }{{"h2c", serveH2C(b, gw)}, {"grpc_listen", ln.Addr().String()}} {
		b.Run(target.name, func(b *testing.B) { benchGRPCStream(b, target.addr, req) })
	}
}

func benchGRPCStream(b *testing.B, addr string, req *a2apb.SendMessageRequest) {
	conn := dialGRPC(b, addr)
	desc := &grpc.StreamDesc{ServerStreams: true}
	var out rawMessage
	sent := 0
	stream := func() {
		// A message id of its own: a resent one is answered from the task
		// index.
		sent++
		req.Message.MessageId = addr + "-" + strconv.Itoa(sent)
		s, err := conn.NewStream(context.Background(), desc, a2apb.A2AService_SendStreamingMessage_FullMethodName, grpc.ForceCodec(rawCodec{}))
		if err != nil {
			b.Fatal(err)
		}
		if err := s.SendMsg(req); err != nil {
			b.Fatal(err)
		}
		if err := s.CloseSend(); err != nil {
			b.Fatal(err)
		}
		n := 0
		for {
			err := s.RecvMsg(&out)
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatalf("after %d events: %v", n, err)
			}
			n++
		}
		if n != streamBenchEvents {
			b.Fatalf("%d events, want %d", n, streamBenchEvents)
		}
	}
	benchCPU(b, stream, streamBenchEvents, "cpu-ns/event")
}
