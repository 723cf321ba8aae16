package grpcbind

import (
	"context"
	"net/http"
	"strings"
	"testing"

	pb03 "github.com/a2aproject/a2a-go/a2apb"
	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/a2agate/gateway/internal/grpctest"
)

// withUnknown appends field number 99, which no A2A message defines, to m.
func withUnknown(m proto.Message) {
	r := m.ProtoReflect()
	raw := protowire.AppendTag(r.GetUnknown(), 99, protowire.BytesType)
	r.SetUnknown(protowire.AppendString(raw, "from a newer protocol"))
}

// TestUnknownFieldsRefused: a request holding a field the gateway's protos
// do not define, at any depth, in the 1.0 and the 0.3 service, unary and
// streaming, is refused naming the field, and never reaches the core,
// which would forward it without the field; the same request without it is
// forwarded.
func TestUnknownFieldsRefused(t *testing.T) {
	c := &core{answer: `{"jsonrpc":"2.0","id":1,"result":{"task":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_SUBMITTED"}}}}`}
	conn := served(t, c, Options{})
	v10, v03 := a2apb.NewA2AServiceClient(conn), pb03.NewA2AServiceClient(conn)
	send10 := func() *a2apb.SendMessageRequest {
		return &a2apb.SendMessageRequest{Message: &a2apb.Message{MessageId: "m", Role: a2apb.Role_ROLE_USER,
			Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: "hi"}}}}}
	}
	send03 := func() *pb03.SendMessageRequest {
		return &pb03.SendMessageRequest{Request: &pb03.Message{MessageId: "m", Role: pb03.Role_ROLE_USER,
			Parts: []*pb03.Part{{Part: &pb03.Part_Text{Text: "hi"}}}}}
	}
	ctx := context.Background()
	// unary10 sends a 1.0 SendMessage in which the message at picks gets the
	// unknown field.
	unary10 := func(at func(*a2apb.SendMessageRequest) proto.Message) func(func(proto.Message)) error {
		return func(u func(proto.Message)) error {
			r := send10()
			u(at(r))
			_, err := v10.SendMessage(ctx, r)
			return err
		}
	}
	for _, tc := range []struct {
		name, where string
		call        func(unknown func(proto.Message)) error
	}{
		{"1.0 unary, top level", "field number 99", unary10(func(r *a2apb.SendMessageRequest) proto.Message { return r })},
		{"1.0 unary, in a part", "message.parts[0]: field number 99", unary10(func(r *a2apb.SendMessageRequest) proto.Message { return r.Message.Parts[0] })},
		{"1.0 stream, in the message", "message: field number 99", func(u func(proto.Message)) error {
			unary, header := c.answer, c.header
			c.answer = "data: " + unary + "\n\n"
			c.header = http.Header{"Content-Type": {"text/event-stream"}}
			defer func() { c.answer, c.header = unary, header }()
			r := send10()
			u(r.Message)
			s, err := v10.SendStreamingMessage(ctx, r)
			if err != nil {
				return err
			}
			return grpctest.Drain(s)
		}},
		{"0.3 unary, in a part", "field number 99", func(u func(proto.Message)) error {
			r := send03()
			u(r.Request.Parts[0])
			_, err := v03.SendMessage(ctx, r)
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c.req = nil
			if err := tc.call(func(proto.Message) {}); err != nil || c.req == nil {
				t.Fatalf("without the unknown field: err %v, reached the core %v", err, c.req != nil)
			}
			c.req = nil
			err := tc.call(withUnknown)
			st, _ := status.FromError(err)
			if st.Code() != codes.InvalidArgument || !strings.Contains(st.Message(), tc.where) || errorInfo(t, st).Reason != "INVALID_PARAMS" {
				t.Fatalf("got %v, want InvalidArgument naming %q", err, tc.where)
			}
			if c.req != nil {
				t.Fatal("the request reached the core without its unknown field")
			}
		})
	}
}
