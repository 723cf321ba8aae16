package grpcbind

import (
	"net/http"
	"testing"

	"github.com/tidwall/gjson"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/a2agate/gateway/dialect"
)

// TestRPCStatusGolden: every JSON-RPC error the core can answer, with the
// gRPC code and ErrorInfo it becomes.
func TestRPCStatusGolden(t *testing.T) {
	cases := []struct {
		name       string
		obj        string
		coreStatus int
		code       codes.Code
		reason     string
		message    string
		metadata   map[string]string
	}{
		{"parse", `{"code":-32700,"message":"bad json"}`, 200, codes.InvalidArgument, "PARSE_ERROR", "bad json", nil},
		{"invalid request", `{"code":-32600,"message":"m"}`, 200, codes.InvalidArgument, "INVALID_REQUEST", "m", nil},
		{"method not found", `{"code":-32601,"message":"m"}`, 200, codes.Unimplemented, "METHOD_NOT_FOUND", "m", nil},
		{"invalid params", `{"code":-32602,"message":"m"}`, 200, codes.InvalidArgument, "INVALID_PARAMS", "m", nil},
		{"internal", `{"code":-32603,"message":"m"}`, 200, codes.Internal, "INTERNAL_ERROR", "m", nil},
		{"task not found, 1.0 data", `{"code":-32001,"message":"Task not found","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org","metadata":{"taskId":"t1"}}]}`, 200, codes.NotFound, "TASK_NOT_FOUND", "Task not found", map[string]string{"taskId": "t1"}},
		{"not cancelable, 0.x data", `{"code":-32002,"message":"m","data":{"taskId":"t1","state":"completed","n":3}}`, 200, codes.FailedPrecondition, "TASK_NOT_CANCELABLE", "m", map[string]string{"taskId": "t1", "state": "completed", "n": "3"}},
		{"push not supported", `{"code":-32003,"message":"m"}`, 200, codes.FailedPrecondition, "PUSH_NOTIFICATION_NOT_SUPPORTED", "m", nil},
		{"unsupported operation", `{"code":-32004,"message":"m"}`, 200, codes.FailedPrecondition, "UNSUPPORTED_OPERATION", "m", nil},
		{"content type", `{"code":-32005,"message":"m"}`, 200, codes.InvalidArgument, "CONTENT_TYPE_NOT_SUPPORTED", "m", nil},
		{"invalid agent response", `{"code":-32006,"message":"m"}`, 200, codes.Internal, "INVALID_AGENT_RESPONSE", "m", nil},
		{"extended card", `{"code":-32007,"message":"m"}`, 200, codes.FailedPrecondition, "EXTENDED_AGENT_CARD_NOT_CONFIGURED", "m", nil},
		{"extension required", `{"code":-32008,"message":"m"}`, 200, codes.FailedPrecondition, "EXTENSION_SUPPORT_REQUIRED", "m", nil},
		{"version", `{"code":-32009,"message":"m"}`, 200, codes.FailedPrecondition, "VERSION_NOT_SUPPORTED", "m", nil},
		{"unauthenticated, 401", `{"code":-31401,"message":"authentication required"}`, http.StatusUnauthorized, codes.Unauthenticated, "UNAUTHENTICATED", "authentication required", nil},
		{"keys unavailable, 503", `{"code":-32603,"message":"m"}`, http.StatusServiceUnavailable, codes.Unavailable, "INTERNAL_ERROR", "m", nil},
		{"agent's own code", `{"code":-32050,"message":"busy"}`, 200, codes.Internal, "INTERNAL_ERROR", "busy", nil},
		{"agent's own reason", `{"code":-32004,"message":"m","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"QUOTA","domain":"a2a-protocol.org"}]}`, 200, codes.FailedPrecondition, "QUOTA", "m", nil},
		{"no message", `{"code":-32001}`, 200, codes.NotFound, "TASK_NOT_FOUND", "Task not found", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := rpcStatus(gjson.Parse(c.obj), c.coreStatus)
			if st.Code() != c.code || st.Message() != c.message {
				t.Fatalf("got %s %q, want %s %q", st.Code(), st.Message(), c.code, c.message)
			}
			info := errorInfo(t, st)
			if info.Reason != c.reason || info.Domain != dialect.Domain || len(info.Metadata) != len(c.metadata) {
				t.Fatalf("ErrorInfo %v, want reason %s, metadata %v", info, c.reason, c.metadata)
			}
			for k, v := range c.metadata {
				if info.Metadata[k] != v {
					t.Fatalf("metadata %v, want %v", info.Metadata, c.metadata)
				}
			}
		})
	}
}

// TestRPCStatusKeepsDetails: details beside the ErrorInfo pass on, typed
// when this binary knows the type, else as a Struct.
func TestRPCStatusKeepsDetails(t *testing.T) {
	st := rpcStatus(gjson.Parse(`{"code":-32602,"message":"m","data":[
		{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"message.parts","description":"empty"}]},
		{"@type":"type.googleapis.com/example.Unknown","x":1},
		{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"INVALID_PARAMS","domain":"a2a-protocol.org"}]}`), 200)
	d := st.Details()
	if len(d) != 3 {
		t.Fatalf("details %v", d)
	}
	if br, ok := d[1].(*errdetails.BadRequest); !ok || br.FieldViolations[0].Field != "message.parts" {
		t.Fatalf("BadRequest lost: %v", d[1])
	}
	if _, ok := d[2].(interface{ AsMap() map[string]any }); !ok {
		t.Fatalf("unknown detail not a Struct: %T", d[2])
	}
}

func errorInfo(t *testing.T, st *status.Status) *errdetails.ErrorInfo {
	t.Helper()
	d := st.Details()
	if len(d) == 0 {
		t.Fatal("no details")
	}
	info, ok := d[0].(*errdetails.ErrorInfo)
	if !ok {
		t.Fatalf("first detail is %T, want the ErrorInfo", d[0])
	}
	return info
}
