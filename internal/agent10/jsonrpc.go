package agent10

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"

	"github.com/a2agate/gateway/internal/agentcore"
)

// A2A 1.0 error codes beyond the shared ones (specification §5.4, §9.5).
const (
	codeUnsupportedOperation = -32004
	codeVersionNotSupported  = -32009
)

// reasons are the google.rpc.ErrorInfo reasons of the codes: the A2A ones
// from the specification, the JSON-RPC ones as the Python and Go SDKs spell
// them.
var reasons = map[int]string{
	agentcore.CodeParseError:        "PARSE_ERROR",
	agentcore.CodeInvalidRequest:    "INVALID_REQUEST",
	agentcore.CodeMethodNotFound:    "METHOD_NOT_FOUND",
	agentcore.CodeInvalidParams:     "INVALID_PARAMS",
	agentcore.CodeInternalError:     "INTERNAL_ERROR",
	agentcore.CodeTaskNotFound:      "TASK_NOT_FOUND",
	agentcore.CodeTaskNotCancelable: "TASK_NOT_CANCELABLE",
	codeUnsupportedOperation:        "UNSUPPORTED_OPERATION",
	codeVersionNotSupported:         "VERSION_NOT_SUPPORTED",
}

const (
	errorInfoType = "type.googleapis.com/google.rpc.ErrorInfo"
	errorDomain   = "a2a-protocol.org"
)

// rpcError is a JSON-RPC error object. In 1.0 its data is an array of
// ProtoJSON Any values; the agent always sends one google.rpc.ErrorInfo.
type rpcError struct {
	Code    int         `json:"code"`
	Message string      `json:"message"`
	Data    []errorInfo `json:"data"`
}

type errorInfo struct {
	Type   string `json:"@type"`
	Reason string `json:"reason"`
	Domain string `json:"domain"`
	// Metadata is map<string,string> in the proto: values are strings.
	Metadata map[string]string `json:"metadata,omitempty"`
}

// encodeError spells e with an ErrorInfo carrying its detail as metadata.
func encodeError(e *agentcore.Error) any {
	return &rpcError{Code: e.Code, Message: e.Message, Data: []errorInfo{{
		Type:     errorInfoType,
		Reason:   reasons[e.Code],
		Domain:   errorDomain,
		Metadata: e.Detail,
	}}}
}

var (
	newError         = agentcore.NewError
	errInvalidParams = agentcore.ErrInvalidParams
)

// versionHeader is the 1.0 service parameter naming the protocol version;
// it may also come as a query parameter (specification §3.6.1).
const versionHeader = "A2A-Version"

// checkVersion accepts protocol version 1.x. A missing version means 0.3
// (specification §3.6.2), which this agent does not speak. Like the Python
// 1.0 server, only the major version is compared.
func checkVersion(r *http.Request) *agentcore.Error {
	v := strings.TrimSpace(r.Header.Get(versionHeader))
	if v == "" {
		v = strings.TrimSpace(r.URL.Query().Get(versionHeader))
	}
	requested := v
	if requested == "" {
		requested = "0.3"
	}
	if major, _, _ := strings.Cut(requested, "."); major == "1" {
		return nil
	}
	return newError(codeVersionNotSupported,
		fmt.Sprintf("A2A version %q is not supported; this agent speaks 1.0", requested),
		map[string]string{"requestedVersion": requested, "supportedVersions": "1.0"})
}

// decodeParams decodes params into v, a pointer to a request struct,
// rejecting every key the request message does not define (see checkKeys).
// Absent params decode as {}.
func decodeParams(params json.RawMessage, v any) *agentcore.Error {
	if params == nil {
		params = json.RawMessage("{}")
	}
	if err := checkKeys(params, reflect.TypeOf(v), "params"); err != nil {
		return errInvalidParams(err)
	}
	return agentcore.DecodeParams(params, v, "params.")
}
