package harness

import (
	"errors"
	"slices"
)

// The JSON-RPC and A2A error codes the scenarios expect.
const (
	CodeParseError           = -32700
	CodeMethodNotFound       = -32601
	CodeInvalidParams        = -32602
	CodeTaskNotFound         = -32001
	CodeTaskNotCancelable    = -32002
	CodeUnsupportedOperation = -32004
)

// ReasonCodes are the JSON-RPC codes of the A2A errors by the reason a
// google.rpc.ErrorInfo gives them (the spec's error mapping), for SDKs and
// bindings that name an error by its reason.
var ReasonCodes = map[string]int{
	"PARSE_ERROR":                        CodeParseError,
	"INVALID_REQUEST":                    -32600,
	"METHOD_NOT_FOUND":                   CodeMethodNotFound,
	"INVALID_PARAMS":                     CodeInvalidParams,
	"INTERNAL_ERROR":                     -32603,
	"SERVER_ERROR":                       -32000,
	"TASK_NOT_FOUND":                     CodeTaskNotFound,
	"TASK_NOT_CANCELABLE":                CodeTaskNotCancelable,
	"PUSH_NOTIFICATION_NOT_SUPPORTED":    -32003,
	"UNSUPPORTED_OPERATION":              CodeUnsupportedOperation,
	"CONTENT_TYPE_NOT_SUPPORTED":         -32005,
	"INVALID_AGENT_RESPONSE":             -32006,
	"EXTENDED_AGENT_CARD_NOT_CONFIGURED": -32007,
	"EXTENSION_SUPPORT_REQUIRED":         -32008,
	"VERSION_NOT_SUPPORTED":              -32009,
}

// ErrorCodes maps an SDK's sentinel errors back to JSON-RPC codes, for SDKs
// that keep no code on the error they return.
type ErrorCodes []struct {
	Err  error
	Code int
}

// Of is the code of the first sentinel err wraps.
func (t ErrorCodes) Of(err error) (int, bool) {
	for _, rc := range t {
		if errors.Is(err, rc.Err) {
			return rc.Code, true
		}
	}
	return 0, false
}

// ExpectCode ends the scenario unless err is an error whose code, read by
// codeOf, is one of codes.
func ExpectCode(c Checker, codeOf func(error) (int, bool), err error, what string, codes ...int) {
	if err == nil {
		c.Fatalf("%s: expected JSON-RPC error %v, got success", what, codes)
	}
	if code, ok := codeOf(err); ok && slices.Contains(codes, code) {
		return
	}
	c.Fatalf("%s: expected JSON-RPC error %v, got %v", what, codes, err)
}

// ErrorCode is the code of a decoded JSON-RPC error response, 0 when it
// holds none.
func ErrorCode(resp map[string]any) int {
	errObj, _ := resp["error"].(map[string]any)
	code, _ := errObj["code"].(float64)
	return int(code)
}
