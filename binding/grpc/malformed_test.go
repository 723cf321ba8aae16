package grpcbind

import (
	"context"
	"strings"
	"testing"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
)

// TestMalformedRequestRefused: a request message that is no valid protobuf
// (cut short, a string that is not UTF-8, a field number 0), to either
// service, unary or streaming, on either transport, is refused as
// INVALID_ARGUMENT with the binding's ErrorInfo (PARSE_ERROR, the JSON-RPC
// -32700 a malformed JSON body gets), not grpc-go's bare INTERNAL, and never
// reaches the core.
func TestMalformedRequestRefused(t *testing.T) {
	c := &core{answer: `{"jsonrpc":"2.0","id":1,"result":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}`}
	// GetTaskRequest.id and SendMessageRequest.message are field 1 in both
	// protos.
	cut := wireBytes(protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.BytesType), 200))
	notUTF8 := wireBytes(protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "t\xff"))
	fieldZero := wireBytes{0x00, 0x01}
	for name, conn := range bothTransports(t, c) {
		for _, tc := range []struct {
			name, method string
			stream       bool
			body         wireBytes
		}{
			{"1.0 GetTask cut short", "/lf.a2a.v1.A2AService/GetTask", false, cut},
			{"1.0 GetTask id not UTF-8", "/lf.a2a.v1.A2AService/GetTask", false, notUTF8},
			{"1.0 SendMessage field number 0", "/lf.a2a.v1.A2AService/SendMessage", false, fieldZero},
			{"1.0 SendStreamingMessage cut short", "/lf.a2a.v1.A2AService/SendStreamingMessage", true, cut},
			{"0.3 GetTask cut short", "/a2a.v1.A2AService/GetTask", false, cut},
			{"0.3 SendStreamingMessage cut short", "/a2a.v1.A2AService/SendStreamingMessage", true, cut},
		} {
			t.Run(name+"/"+tc.name, func(t *testing.T) {
				c.req = nil
				err := invokeRaw(conn, tc.method, tc.stream, tc.body)
				st, _ := status.FromError(err)
				if st.Code() != codes.InvalidArgument || !strings.Contains(st.Message(), "not a valid protobuf") {
					t.Fatalf("got %v, want InvalidArgument saying the request is not a valid protobuf", err)
				}
				if info := errorInfo(t, st); info.Reason != "PARSE_ERROR" || info.Domain != "a2a-protocol.org" {
					t.Fatalf("ErrorInfo %v, want reason PARSE_ERROR in domain a2a-protocol.org", info)
				}
				if c.req != nil {
					t.Fatal("the malformed request reached the core")
				}
			})
		}
	}
}

// TestMalformedSecondMessageRefused: a unary call that sends a malformed
// message and then a second one gets the cardinality error grpc-go gives,
// and the server goes on serving well-formed calls.
func TestMalformedSecondMessageRefused(t *testing.T) {
	c := &core{answer: `{"jsonrpc":"2.0","id":1,"result":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}`}
	for name, conn := range bothTransports(t, c) {
		c.req = nil
		s, err := conn.NewStream(context.Background(), &grpc.StreamDesc{ClientStreams: true, ServerStreams: true},
			"/lf.a2a.v1.A2AService/GetTask", grpc.ForceCodecV2(rawCodec{}))
		if err != nil {
			t.Fatal(err)
		}
		_ = s.SendMsg(wireBytes{0x00})
		_ = s.SendMsg(wireBytes(protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "t")))
		_ = s.CloseSend()
		if err := s.RecvMsg(new(struct{})); status.Code(err) == codes.OK {
			t.Errorf("%s: two request messages to a unary method were served", name)
		}
		if c.req != nil {
			t.Fatalf("%s: a unary call of two messages reached the core", name)
		}
		good := wireBytes(protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "t"))
		if err := invokeRaw(conn, "/lf.a2a.v1.A2AService/GetTask", false, good); err != nil {
			t.Fatalf("%s: a well-formed GetTask after it: %v", name, err)
		}
	}
}

// TestBodyHeadersNotForwarded: metadata naming an HTTP body's encoding or
// digest (content-encoding, digest, ...) describes no body the core reads,
// whose body is the gateway's own JSON: it is not passed on as a header, so
// the call is served rather than refused as compressed.
func TestBodyHeadersNotForwarded(t *testing.T) {
	c := &core{answer: `{"jsonrpc":"2.0","id":1,"result":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}`}
	conn := served(t, c, Options{})
	ctx := metadata.AppendToOutgoingContext(context.Background(), "content-encoding", "gzip", "content-md5", "x",
		"content-digest", "sha-256=:x:", "repr-digest", "sha-256=:x:", "digest", "SHA-256=x", "x-kept", "yes")
	if _, err := a2apb.NewA2AServiceClient(conn).GetTask(ctx, &a2apb.GetTaskRequest{Id: "t"}); err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"Content-Encoding", "Content-Md5", "Content-Digest", "Repr-Digest", "Digest"} {
		if v, ok := c.req.Header[h]; ok {
			t.Errorf("the core got %s: %q", h, v)
		}
	}
	if c.req.Header.Get("X-Kept") != "yes" {
		t.Errorf("the caller's own metadata was not passed on: %v", c.req.Header)
	}
}
