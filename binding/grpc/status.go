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
	code := int(obj.Get("code").Int())
	gc, ok := grpcCodes[code]
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
	info := &errdetails.ErrorInfo{Domain: dialect.Domain}
	message := obj.Get("message").String()
	if row, ok := dialect.ErrorByCode(code); ok {
		info.Reason = row.Reason
		if message == "" {
			message = row.Message
		}
	}
	var extra []*anypb.Any
	data := obj.Get("data")
	switch {
	case data.IsArray():
		seen := false
		for _, d := range data.Array() {
			if !d.IsObject() {
				continue
			}
			if d.Get("@type").Str == dialect.ErrorInfoType && d.Get("domain").Str == dialect.Domain && !seen {
				seen = true
				if r := d.Get("reason").Str; r != "" {
					info.Reason = r
				}
				info.Metadata = stringMap(d.Get("metadata"))
				continue
			}
			if a := detail(d); a != nil {
				extra = append(extra, a)
			}
		}
	case data.IsObject():
		// A 0.x-shaped data object: its members become ErrorInfo metadata.
		info.Metadata = stringMap(data)
	}
	if info.Reason == "" {
		info.Reason = dialect.ErrInternal.Error().Reason
	}
	return newStatus(gc, message, info, extra...)
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

// stringMap reads a JSON object as ErrorInfo metadata, whose values are
// strings: other values keep their JSON text.
func stringMap(obj gjson.Result) map[string]string {
	if !obj.IsObject() {
		return nil
	}
	m := map[string]string{}
	obj.ForEach(func(k, v gjson.Result) bool {
		if v.Type == gjson.String {
			m[k.String()] = v.Str
		} else {
			m[k.String()] = v.Raw
		}
		return true
	})
	if len(m) == 0 {
		return nil
	}
	return m
}
