package grpcbind

import (
	"net/http"

	"github.com/tidwall/gjson"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/rpcerror"
)

// grpcCodes is the gRPC code of each JSON-RPC error code: the A2A 1.0
// mapping (spec §5.4, a2a-dialects.md §7.1) and, for the codes the spec
// leaves open, a2a-go v2's (internal/grpcutil/errors.go), which is what its
// client reads back into the same error.
var grpcCodes = map[int]codes.Code{
	-32700: codes.InvalidArgument,
	-32600: codes.InvalidArgument,
	-32601: codes.Unimplemented,
	-32602: codes.InvalidArgument,
	-32603: codes.Internal,
	-32000: codes.Internal,
	-32001: codes.NotFound,
	-32002: codes.FailedPrecondition,
	-32003: codes.FailedPrecondition,
	-32004: codes.FailedPrecondition,
	-32005: codes.InvalidArgument,
	-32006: codes.Internal,
	-32007: codes.FailedPrecondition,
	-32008: codes.FailedPrecondition,
	-32009: codes.FailedPrecondition,
	-31401: codes.Unauthenticated,
	-31403: codes.PermissionDenied,
}

// codeByHTTP is the gRPC code of an HTTP status the core chose on purpose
// (401 with a challenge, 503 while signing keys are unavailable), which
// outranks the JSON-RPC code it came with.
var codeByHTTP = map[int]codes.Code{
	http.StatusBadRequest:            codes.InvalidArgument,
	http.StatusUnauthorized:          codes.Unauthenticated,
	http.StatusForbidden:             codes.PermissionDenied,
	http.StatusNotFound:              codes.NotFound,
	http.StatusRequestEntityTooLarge: codes.ResourceExhausted,
	http.StatusTooManyRequests:       codes.ResourceExhausted,
	http.StatusServiceUnavailable:    codes.Unavailable,
	http.StatusGatewayTimeout:        codes.DeadlineExceeded,
}

// rpcStatus turns a 1.0 JSON-RPC error object into the gRPC status of the
// same error. coreStatus is the HTTP status the core answered with: 200 for
// ordinary JSON-RPC errors.
func rpcStatus(obj gjson.Result, coreStatus int) *status.Status {
	parsed := rpcerror.Parse(obj)
	gc, ok := grpcCodes[parsed.Code]
	if !ok {
		gc = codes.Internal
	}
	if coreStatus >= 400 {
		if c, ok := codeByHTTP[coreStatus]; ok {
			gc = c
		} else if coreStatus >= 500 {
			gc = codes.Internal
		}
	}
	info := &errdetails.ErrorInfo{Reason: parsed.Reason, Domain: dialect.Domain, Metadata: parsed.Metadata}
	var extra []*anypb.Any
	for _, d := range parsed.Details {
		if a := detail(d); a != nil {
			extra = append(extra, a)
		}
	}
	if info.Reason == "" {
		info.Reason = dialect.ErrInternal.Error().Reason
	}
	return newStatus(gc, parsed.Message, info, extra...)
}

// newStatus is a status with the ErrorInfo detail first, then extra.
func newStatus(code codes.Code, message string, info *errdetails.ErrorInfo, extra ...*anypb.Any) *status.Status {
	p := &spb.Status{Code: int32(code), Message: message}
	if a, err := anypb.New(info); err == nil {
		p.Details = append(p.Details, a)
	}
	p.Details = append(p.Details, extra...)
	return status.FromProto(p)
}

// failure is an error the front end raises itself.
func failure(code codes.Code, kind dialect.ErrorKind, message string) error {
	return newStatus(code, message, &errdetails.ErrorInfo{Reason: kind.Error().Reason, Domain: dialect.Domain}).Err()
}

// detail is one further ProtoJSON Any detail of a JSON-RPC error (a
// google.rpc.BadRequest, say) as a status detail. A type this binary does
// not know is passed on as a google.protobuf.Struct of its JSON, which is
// how a2a-go's client reads details it has no type for.
func detail(d gjson.Result) *anypb.Any {
	if d.Get("@type").Type == gjson.String {
		a := new(anypb.Any)
		if protojson.Unmarshal([]byte(d.Raw), a) == nil {
			return a
		}
	}
	st := new(structpb.Struct)
	if protojson.Unmarshal([]byte(d.Raw), st) != nil {
		return nil
	}
	a, err := anypb.New(st)
	if err != nil {
		return nil
	}
	return a
}
