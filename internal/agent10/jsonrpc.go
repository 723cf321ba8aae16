package agent10

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
)

// maxRequestBytes bounds a JSON-RPC request body; A2A requests are small and
// the agent keeps them in memory.
const maxRequestBytes = 1 << 20

// JSON-RPC and A2A 1.0 error codes (specification §5.4, §9.5).
const (
	codeParseError           = -32700
	codeInvalidRequest       = -32600
	codeMethodNotFound       = -32601
	codeInvalidParams        = -32602
	codeInternalError        = -32603
	codeTaskNotFound         = -32001
	codeTaskNotCancelable    = -32002
	codeUnsupportedOperation = -32004
	codeVersionNotSupported  = -32009
)

// reasons are the google.rpc.ErrorInfo reasons of the codes: the A2A ones
// from the specification, the JSON-RPC ones as the Python and Go SDKs spell
// them.
var reasons = map[int]string{
	codeParseError:           "PARSE_ERROR",
	codeInvalidRequest:       "INVALID_REQUEST",
	codeMethodNotFound:       "METHOD_NOT_FOUND",
	codeInvalidParams:        "INVALID_PARAMS",
	codeInternalError:        "INTERNAL_ERROR",
	codeTaskNotFound:         "TASK_NOT_FOUND",
	codeTaskNotCancelable:    "TASK_NOT_CANCELABLE",
	codeUnsupportedOperation: "UNSUPPORTED_OPERATION",
	codeVersionNotSupported:  "VERSION_NOT_SUPPORTED",
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

// newError builds an error whose ErrorInfo carries metadata.
func newError(code int, message string, metadata map[string]string) *rpcError {
	return &rpcError{Code: code, Message: message, Data: []errorInfo{{
		Type:     errorInfoType,
		Reason:   reasons[code],
		Domain:   errorDomain,
		Metadata: metadata,
	}}}
}

func errInvalidRequest(detail string) *rpcError {
	return newError(codeInvalidRequest, "Request payload validation error: "+detail, nil)
}

func errInvalidParams(err error) *rpcError {
	return newError(codeInvalidParams, "Invalid parameters: "+err.Error(), nil)
}

func errTaskNotFound(taskID string) *rpcError {
	return newError(codeTaskNotFound, "Task not found", map[string]string{"taskId": taskID})
}

// request is a decoded JSON-RPC request envelope.
type request struct {
	ID     json.RawMessage
	Method string
	Params json.RawMessage
}

type successResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result"`
}

type errorResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   *rpcError       `json:"error"`
}

// unaryMethod answers with one JSON-RPC response.
type unaryMethod func(a *Agent, r *http.Request, params json.RawMessage) (any, *rpcError)

// streamMethod prepares an SSE stream; an error is still answered as a plain
// JSON-RPC response because no byte of the stream has been written.
type streamMethod func(a *Agent, params json.RawMessage) (subscription, *rpcError)

var unaryMethods = map[string]unaryMethod{
	"SendMessage":                      (*Agent).sendMessage,
	"GetTask":                          (*Agent).getTask,
	"ListTasks":                        (*Agent).listTasks,
	"CancelTask":                       (*Agent).cancelTask,
	"CreateTaskPushNotificationConfig": (*Agent).createPushConfig,
	"GetTaskPushNotificationConfig":    (*Agent).getPushConfig,
	"ListTaskPushNotificationConfigs":  (*Agent).listPushConfigs,
	"DeleteTaskPushNotificationConfig": (*Agent).deletePushConfig,
	"GetExtendedAgentCard":             (*Agent).getExtendedAgentCard,
}

var streamMethods = map[string]streamMethod{
	"SendStreamingMessage": (*Agent).sendStreamingMessage,
	"SubscribeToTask":      (*Agent).subscribeToTask,
}

func (a *Agent) serveRPC(w http.ResponseWriter, r *http.Request) {
	if a.isClosed() {
		http.Error(w, "agent is closed", http.StatusServiceUnavailable)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBytes))
	if err != nil {
		writeError(w, nil, errInvalidRequest("reading body: "+err.Error()))
		return
	}
	req, rerr := decodeRequest(body)
	if rerr != nil {
		writeError(w, req.ID, rerr)
		return
	}
	unary, isUnary := unaryMethods[req.Method]
	stream, isStream := streamMethods[req.Method]
	if !isUnary && !isStream {
		writeError(w, req.ID, newError(codeMethodNotFound, "Method not found", map[string]string{"method": req.Method}))
		return
	}
	// Like the Python 1.0 server, the version is checked once the method is
	// known: an unknown method is -32601 whatever the header says.
	if rerr := checkVersion(r); rerr != nil {
		writeError(w, req.ID, rerr)
		return
	}
	if isUnary {
		result, rerr := unary(a, r, req.Params)
		if rerr != nil {
			writeError(w, req.ID, rerr)
			return
		}
		writeJSON(w, successResponse{JSONRPC: "2.0", ID: req.ID, Result: result})
		return
	}
	sub, rerr := stream(a, req.Params)
	if rerr != nil {
		writeError(w, req.ID, rerr)
		return
	}
	a.serveStream(w, r, req.ID, sub)
}

// versionHeader is the 1.0 service parameter naming the protocol version;
// it may also come as a query parameter (specification §3.6.1).
const versionHeader = "A2A-Version"

// checkVersion accepts protocol version 1.x. A missing version means 0.3
// (specification §3.6.2), which this agent does not speak. Like the Python
// 1.0 server, only the major version is compared.
func checkVersion(r *http.Request) *rpcError {
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

// decodeRequest validates the JSON-RPC 2.0 envelope. It returns the request
// id as soon as it is known to be valid, so that later errors can echo it.
func decodeRequest(body []byte) (request, *rpcError) {
	var req request
	if !json.Valid(body) {
		return req, newError(codeParseError, "Invalid JSON payload", nil)
	}
	trimmed := bytes.TrimSpace(body)
	if trimmed[0] == '[' {
		return req, errInvalidRequest("batch requests are not supported")
	}
	if trimmed[0] != '{' {
		return req, errInvalidRequest("the request must be a JSON object")
	}
	var env map[string]json.RawMessage
	if err := json.Unmarshal(body, &env); err != nil {
		return req, errInvalidRequest(err.Error())
	}
	id, ok := env["id"]
	if !ok {
		return req, errInvalidRequest("id is required; notifications are not supported")
	}
	if c := id[0]; c != '"' && c != '-' && (c < '0' || c > '9') {
		return req, errInvalidRequest("id must be a string or a number")
	}
	req.ID = id
	if v := env["jsonrpc"]; string(v) != `"2.0"` {
		return req, errInvalidRequest(`jsonrpc must be "2.0"`)
	}
	if err := json.Unmarshal(env["method"], &req.Method); err != nil || req.Method == "" {
		return req, errInvalidRequest("method must be a non-empty string")
	}
	if p, ok := env["params"]; ok && string(p) != "null" {
		if p[0] != '{' {
			return req, errInvalidParams(errors.New("params must be an object"))
		}
		req.Params = p
	}
	return req, nil
}

// decodeParams decodes params into v, a pointer to a request struct,
// rejecting every key the request message does not define (see checkKeys).
// Absent params decode as {}.
func decodeParams(params json.RawMessage, v any) *rpcError {
	if params == nil {
		params = json.RawMessage("{}")
	}
	if err := checkKeys(params, reflect.TypeOf(v), "params"); err != nil {
		return errInvalidParams(err)
	}
	if err := json.Unmarshal(params, v); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			return errInvalidParams(fmt.Errorf("params.%s: must be %s, got %s", typeErr.Field, typeErr.Type, typeErr.Value))
		}
		return errInvalidParams(err)
	}
	return nil
}

func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "encoding response: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b) // a write error means the client left; nothing to tell it
}

// writeError answers with a JSON-RPC error. The HTTP status stays 200, as
// the Python and Go A2A servers answer every JSON-RPC error.
func writeError(w http.ResponseWriter, id json.RawMessage, e *rpcError) {
	writeJSON(w, errorResponse{JSONRPC: "2.0", ID: id, Error: e})
}
