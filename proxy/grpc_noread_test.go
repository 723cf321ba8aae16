package proxy

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	pb03 "github.com/a2aproject/a2a-go/a2apb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/a2agate/gateway/dialect"
)

// TestGRPCCallerThatDoesNotRead: a gRPC caller that opens a stream and
// reads nothing is cut at server.stream_write_timeout, as an HTTP caller
// is (TestStreamCallerThatDoesNotRead), on both gRPC transports: the cut is
// logged and counted as the caller's error, the backend's stream is let
// go rather than held for as long as the caller's connection lives, and
// the call ends: on grpc-go's transport with RESOURCE_EXHAUSTED, read
// after the messages the caller's window held; through net/http, whose
// HTTP/2 stream is reset, with the reset.
// The 0.3 service's streams are bounded alike, though a2a-go's handler
// sends them.
func TestGRPCCallerThatDoesNotRead(t *testing.T) {
	services := []struct {
		name string
		open func(context.Context, *grpcGateway) (recv func() error, err error)
	}{
		{"1.0", func(ctx context.Context, g *grpcGateway) (func() error, error) {
			s, err := g.raw.SendStreamingMessage(ctx, pbText("m1", "hi"))
			return func() error { _, err := s.Recv(); return err }, err
		}},
		{"0.3", func(ctx context.Context, g *grpcGateway) (func() error, error) {
			s, err := pb03.NewA2AServiceClient(g.conn).SendStreamingMessage(ctx, &pb03.SendMessageRequest{Request: &pb03.Message{
				MessageId: "m1", Role: pb03.Role_ROLE_USER, Parts: []*pb03.Part{{Part: &pb03.Part_Text{Text: "hi"}}}}})
			return func() error { _, err := s.Recv(); return err }, err
		}},
	}
	for _, tr := range grpcTransports {
		for _, svc := range services {
			t.Run(tr.name+"/"+svc.name, func(t *testing.T) { testGRPCCallerThatDoesNotRead(t, tr.name, tr.serve, svc.open) })
		}
	}
}

func testGRPCCallerThatDoesNotRead(t *testing.T, transport string, serve func(*testing.T, *testGateway) *grpcGateway,
	open func(context.Context, *grpcGateway) (func() error, error)) {
	backendDone := make(chan struct{})
	big := strings.Repeat("a", 256<<10)
	backend := floodingBackend(backendDone, `{"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING","message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"`+big+`"}]}}}}`)
	records := make(chan slog.Record, 1024)
	g := serve(t, newGatewayOpts(t, backend, dialect.Version10, Options{
		Logger: slog.New(signalHandler{records}), StreamWriteTimeout: 100 * time.Millisecond}))
	// Bounds the reads at the end against a stream that never ends.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	recv, err := open(ctx, g)
	if err != nil {
		t.Fatal(err)
	}
	// The caller reads nothing until the call has been logged.
	awaitCallerCut(t, records, backendDone)
	// Reading now, the caller gets what its window held, then the
	// end of the call.
	for {
		err := recv()
		if err == nil {
			continue
		}
		want := codes.ResourceExhausted
		if transport != "grpc_listen" {
			want = codes.Internal // RST_STREAM INTERNAL_ERROR, net/http's code for a write past its deadline
		}
		if st := status.Convert(err); st.Code() != want || (want == codes.ResourceExhausted && !strings.Contains(st.Message(), "stream_write_timeout")) {
			t.Fatalf("the cut stream ended with %v, want %v", err, want)
		}
		break
	}
}
