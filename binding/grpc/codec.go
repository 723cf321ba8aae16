package grpcbind

import (
	"google.golang.org/grpc/encoding"
	grpcproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
)

// requestCodec is grpc-go's protobuf codec, but a request message that is
// no valid protobuf does not fail in it. grpc-go turns any codec error,
// a status error too, into INTERNAL "failed to unmarshal" and writes that
// status before a handler or interceptor runs (rpc_util.go recv,
// serverStream.RecvMsg), so the caller would get neither the spec's
// INVALID_ARGUMENT nor an ErrorInfo. The codec instead leaves the message
// empty but for a mark holding the parse error, which the interceptors that
// refuse unknown fields refuse in the binding's own shape (malformedRequest).
// The mark lives in the message, so nothing is left behind when a call ends
// before an interceptor looks.
type requestCodec struct{ encoding.CodecV2 }

func newRequestCodec() requestCodec {
	return requestCodec{encoding.GetCodecV2(grpcproto.Name)}
}

// malformedMark starts the unknown bytes of a request its codec could not
// parse: the tag of field number 0, which no parse accepts, so no request
// that parsed carries it.
const malformedMark = 0x00

func (c requestCodec) Unmarshal(data mem.BufferSlice, v any) error {
	err := c.CodecV2.Unmarshal(data, v)
	m, ok := v.(proto.Message)
	if err == nil || !ok {
		return err
	}
	proto.Reset(m)
	m.ProtoReflect().SetUnknown(append([]byte{malformedMark}, err.Error()...))
	return nil
}

// malformedRequest is the parse error a request's codec marked it with, or
// "" for a request that parsed.
func malformedRequest(m proto.Message) (string, bool) {
	raw := m.ProtoReflect().GetUnknown()
	if len(raw) == 0 || raw[0] != malformedMark {
		return "", false
	}
	return string(raw[1:]), true
}
