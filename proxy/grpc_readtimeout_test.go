package proxy

import (
	"context"
	"strings"
	"testing"
	"time"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestGRPCRequestThatNeverArrives: a gRPC caller that opens a call and
// never sends its request message (nor ends its side) is answered
// DEADLINE_EXCEEDED within server.read_timeout, as an HTTP caller whose
// body never arrives is, on both services, in either way the gateway
// serves gRPC: the call
// is no wait without end. Beside HTTP/1.1 the answer names the setting; on
// a grpc_listen, grpc-go's transport reads the message, and its answer is
// the context's ("context deadline exceeded"). The caller sends no
// deadline of its own (grpc-timeout), which would bound the call for it.
func TestGRPCRequestThatNeverArrives(t *testing.T) {
	for _, tr := range grpcTransports {
		t.Run(tr.name, func(t *testing.T) {
			tg := newGatewayOpts(t, backends[1].handler(t, nil), backends[1].version, Options{ReadTimeout: 100 * time.Millisecond})
			g := tr.serve(t, tg)
			for _, method := range []string{"/lf.a2a.v1.A2AService/GetTask", "/lf.a2a.v1.A2AService/SendStreamingMessage", "/a2a.v1.A2AService/GetTask", "/a2a.v1.A2AService/SendStreamingMessage"} {
				ctx, cancel := context.WithCancel(context.Background())
				guard := time.AfterFunc(10*time.Second, cancel) // against a hang, far past the limit
				s, err := g.conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, method)
				if err == nil {
					err = s.RecvMsg(new(a2apb.Task))
				}
				guard.Stop()
				cancel()
				named := tr.name == "grpc_listen" || strings.Contains(status.Convert(err).Message(), "server.read_timeout (100ms)")
				if st := status.Convert(err); st.Code() != codes.DeadlineExceeded || !named {
					t.Errorf("%s: %v, want DEADLINE_EXCEEDED naming server.read_timeout", method, err)
				}
			}
		})
	}
}

// TestGRPCRequestBoundSparesCalls: the bound on a call's request message
// ends with the message: a stream that runs four times server.read_timeout
// runs to its end, in either way the gateway serves gRPC; and beside
// HTTP/1.1 a caller without a valid token whose request never arrives is
// told to authenticate, as for anything else wrong with its request.
func TestGRPCRequestBoundSparesCalls(t *testing.T) {
	const readTimeout = 100 * time.Millisecond
	for _, tr := range grpcTransports {
		t.Run(tr.name, func(t *testing.T) {
			hold := make(chan struct{})
			tg := newGatewayOpts(t, backends[1].handler(t, hold), backends[1].version, Options{ReadTimeout: readTimeout})
			g := tr.serve(t, tg)
			s, err := g.raw.SendStreamingMessage(context.Background(), pbText("m1", "wait"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Recv(); err != nil {
				t.Fatalf("first event: %v", err)
			}
			<-time.After(4 * readTimeout)
			close(hold)
			for {
				ev, err := s.Recv()
				if err != nil {
					t.Fatalf("the stream ended with %v, before its task completed", err)
				}
				if ev.GetStatusUpdate().GetStatus().GetState() == a2apb.TaskState_TASK_STATE_COMPLETED {
					break
				}
			}
		})
	}
	tg := newGatewayOpts(t, backends[1].handler(t, nil), backends[1].version, Options{ReadTimeout: readTimeout}, withAuth(t))
	g := newGRPCGateway(t, tg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	guard := time.AfterFunc(10*time.Second, cancel)
	defer guard.Stop()
	s, err := g.conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, "/lf.a2a.v1.A2AService/GetTask")
	if err == nil {
		err = s.RecvMsg(new(a2apb.Task))
	}
	if st := status.Convert(err); st.Code() != codes.Unauthenticated {
		t.Errorf("a caller without a token whose request never arrives: %v, want UNAUTHENTICATED", err)
	}
}
