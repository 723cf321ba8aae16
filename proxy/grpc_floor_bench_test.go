//go:build unix

package proxy

import (
	"context"
	"io"
	"net/http"
	"runtime"
	"testing"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/a2agate/gateway/internal/testnet"
)

// BenchmarkGRPCFloor is what the transports alone cost for the call
// BenchmarkGRPCUnary makes, with no gateway behind them: each server
// answers the request with the bytes the gateway answered it with, read
// once beforehand, so the difference to BenchmarkGRPCUnary is the
// gateway's work on each binding. jsonrpc is net/http's HTTP/1.1 server and
// client; grpc-native grpc-go's own transport, grpc-h2c grpc-go's
// ServeHTTP on net/http's h2c server (as the traffic listener serves it);
// grpc-native-proto answers with a Task message, which the proto codec
// encodes on every call, as it does the gateway's.
//
//	go test -run '^$' -bench GRPCFloor -benchmem ./proxy
func BenchmarkGRPCFloor(b *testing.B) {
	h, addr, req := newGetTaskBench(b)

	// The gateway's answers, on each binding.
	jsonAnswer := postJSON(b, &http.Client{}, "http://"+addr+"/", h)
	conn := dialGRPC(b, addr)
	var protoAnswer rawMessage
	if err := conn.Invoke(context.Background(), a2apb.A2AService_GetTask_FullMethodName, req, &protoAnswer, grpc.ForceCodec(rawCodec{})); err != nil {
		b.Fatal(err)
	}
	conn.Close()
	task := new(a2apb.Task)
	if err := proto.Unmarshal(protoAnswer, task); err != nil {
		b.Fatal(err)
	}

	jsonSrv := serveH2C(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header()["Content-Type"] = headerJSONFloor
		_, _ = w.Write(jsonAnswer)
	}))
	// The stream workers, as the gateway's gRPC servers have them.
	workers := grpc.NumStreamWorkers(uint32(4 * runtime.GOMAXPROCS(0)))
	raw := grpc.NewServer(workers, grpc.ForceServerCodec(rawCodec{}),
		grpc.UnknownServiceHandler(func(_ any, s grpc.ServerStream) error {
			var in rawMessage
			if err := s.RecvMsg(&in); err != nil {
				return err
			}
			return s.SendMsg(&protoAnswer)
		}))
	b.Cleanup(raw.Stop)
	typed := grpc.NewServer(workers)
	a2apb.RegisterA2AServiceServer(typed, fixedTask{task: task})
	b.Cleanup(typed.Stop)

	b.Run("jsonrpc", func(b *testing.B) { benchJSONRPC(b, h, "http://"+jsonSrv+"/") })
	b.Run("grpc-native", func(b *testing.B) { benchGRPCGetTask(b, listenGRPC(b, raw), req) })
	b.Run("grpc-h2c", func(b *testing.B) { benchGRPCGetTask(b, serveH2C(b, raw), req) })
	b.Run("grpc-native-proto", func(b *testing.B) { benchGRPCGetTask(b, listenGRPC(b, typed), req) })
}

var headerJSONFloor = []string{"application/json"}

// listenGRPC serves s on a listener of its own and returns its address.
func listenGRPC(b *testing.B, s *grpc.Server) string {
	ln := testnet.Listen(b)
	go func() { _ = s.Serve(ln) }()
	return ln.Addr().String()
}

// fixedTask answers every GetTask with the same task.
type fixedTask struct {
	a2apb.UnimplementedA2AServiceServer
	task *a2apb.Task
}

func (f fixedTask) GetTask(context.Context, *a2apb.GetTaskRequest) (*a2apb.Task, error) {
	return f.task, nil
}
