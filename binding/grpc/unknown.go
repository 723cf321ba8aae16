package grpcbind

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

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
	if err := lateRefusal(ctx); err != nil {
		return nil, err
	}
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
		if late := lateRefusal(s.Context()); late != nil {
			return late // the read failed as its bound ended the call
		}
		return err
	}
	if err := lateRefusal(s.Context()); err != nil {
		return err
	}
	return unknownFields(s.method, m)
}

// unknownFields is the InvalidArgument status of a request holding a
// field its message does not define, or one its codec could not parse, or
// nil.
func unknownFields(method string, req any) error {
	m, ok := req.(proto.Message)
	if !ok {
		return nil
	}
	if why, bad := malformedRequest(m); bad {
		return failure(codes.InvalidArgument, dialect.ErrParse, fmt.Sprintf(
			"the %s request is not a valid protobuf %s message (%s): send it as its proto's binary encoding",
			method, m.ProtoReflect().Descriptor().Name(), why))
	}
	where := firstUnknown(m.ProtoReflect())
	if where == "" {
		return nil
	}
	return failure(codes.InvalidArgument, dialect.ErrInvalidParams, fmt.Sprintf(
		"the %s request has a field this gateway's A2A protocol does not define (%s): it cannot be forwarded to the agent; send it without the field, or upgrade the gateway",
		method, where))
}

// firstUnknown names the first unknown field of m or of a message inside
// it ("message.parts[0]: field number 42"), or "" when there is none. The
// path is written only for a field found: a request without one, every
// request but a hostile or newer caller's, walks without allocating.
func firstUnknown(m protoreflect.Message) string {
	var path []string
	num, found := unknownIn(m, &path)
	if !found {
		return ""
	}
	slices.Reverse(path)
	where := fmt.Sprintf("field number %d", num)
	if len(path) > 0 {
		where = strings.Join(path, "") + ": " + where
	}
	return strings.TrimPrefix(where, ".")
}

// unknownIn reports the number of the first unknown field of m or of a
// message inside it; path gets the steps to it, innermost first.
func unknownIn(m protoreflect.Message, path *[]string) (protowire.Number, bool) {
	if raw := m.GetUnknown(); len(raw) > 0 {
		num, _, _ := protowire.ConsumeTag(raw)
		return num, true
	}
	var num protowire.Number
	found := false
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Message() != nil:
			l := v.List()
			for i := 0; i < l.Len() && !found; i++ {
				if num, found = unknownIn(l.Get(i).Message(), path); found {
					*path = append(*path, "["+strconv.Itoa(i)+"]")
				}
			}
		case fd.IsMap() && fd.MapValue().Message() != nil:
			v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				if num, found = unknownIn(mv.Message(), path); found {
					*path = append(*path, "["+strconv.Quote(k.String())+"]")
				}
				return !found
			})
		case !fd.IsList() && !fd.IsMap() && fd.Message() != nil:
			num, found = unknownIn(v.Message(), path)
		}
		if found {
			*path = append(*path, "."+string(fd.Name()))
		}
		return !found
	})
	return num, found
}
