package grpcbind

import (
	"context"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/a2agate/gateway/dialect"
)

// A field the gateway's protos do not define survives gRPC's decoding as
// unknown bytes, but ProtoJSON, the form the core forwards, has no place
// for it: the call would reach the agent without it. Such a call is
// refused, naming the field, rather than forwarded short of what the
// caller sent.

// refuseUnknownUnary refuses a unary RPC whose request has unknown fields.
func refuseUnknownUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if err := unknownFields(info.FullMethod, req); err != nil {
		return nil, err
	}
	return handler(ctx, req)
}

// refuseUnknownStream refuses a streaming RPC whose request has unknown
// fields, when the handler reads it.
func refuseUnknownStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	return handler(srv, knownFieldsStream{ss, info.FullMethod})
}

type knownFieldsStream struct {
	grpc.ServerStream
	method string
}

func (s knownFieldsStream) RecvMsg(m any) error {
	if err := s.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	return unknownFields(s.method, m)
}

// unknownFields is the InvalidArgument status of a request holding a
// field its message does not define, or nil.
func unknownFields(method string, req any) error {
	m, ok := req.(proto.Message)
	if !ok {
		return nil
	}
	where := firstUnknown(m.ProtoReflect(), "")
	if where == "" {
		return nil
	}
	return failure(codes.InvalidArgument, dialect.ErrInvalidParams, fmt.Sprintf(
		"the %s request has a field this gateway's A2A protocol does not define (%s): it cannot be forwarded to the agent; send it without the field, or upgrade the gateway",
		method, where))
}

// firstUnknown names the first unknown field of m or of a message inside
// it ("message.parts[0]: field number 42"), or "" when there is none.
func firstUnknown(m protoreflect.Message, path string) string {
	if raw := m.GetUnknown(); len(raw) > 0 {
		num, _, _ := protowire.ConsumeTag(raw)
		if path == "" {
			return fmt.Sprintf("field number %d", num)
		}
		return fmt.Sprintf("%s: field number %d", path, num)
	}
	var found string
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		name := string(fd.Name())
		if path != "" {
			name = path + "." + name
		}
		switch {
		case fd.IsList() && fd.Message() != nil:
			l := v.List()
			for i := 0; i < l.Len() && found == ""; i++ {
				found = firstUnknown(l.Get(i).Message(), fmt.Sprintf("%s[%d]", name, i))
			}
		case fd.IsMap() && fd.MapValue().Message() != nil:
			v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				found = firstUnknown(mv.Message(), fmt.Sprintf("%s[%q]", name, k.String()))
				return found == ""
			})
		case !fd.IsList() && !fd.IsMap() && fd.Message() != nil:
			found = firstUnknown(v.Message(), name)
		}
		return found == ""
	})
	return found
}
