package legacyagent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// maxRequestBytes bounds a JSON-RPC request body; A2A requests are small and
// the agent keeps them in memory.
const maxRequestBytes = 1 << 20

// JSON-RPC and A2A 0.2.5 error codes (specification §8).
const (
	codeParseError        = -32700
	codeInvalidRequest    = -32600
	codeMethodNotFound    = -32601
	codeInvalidParams     = -32602
	codeInternalError     = -32603
	codeTaskNotFound      = -32001
	codeTaskNotCancelable = -32002
)

// rpcError is a JSON-RPC error object. Data is any JSON value in 0.2.5; the
// agent uses an object naming what the error is about.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func errInvalidRequest(detail string) *rpcError {
	return &rpcError{Code: codeInvalidRequest, Message: "Request payload validation error: " + detail}
}

func errInvalidParams(err error) *rpcError {
	return &rpcError{Code: codeInvalidParams, Message: "Invalid parameters: " + err.Error()}
}

func errTaskNotFound(taskID string) *rpcError {
	return &rpcError{Code: codeTaskNotFound, Message: "Task not found", Data: map[string]string{"taskId": taskID}}
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
	// Result is written even when nil: pushNotificationConfig/delete answers
	// "result": null.
	Result any `json:"result"`
}

type errorResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   *rpcError       `json:"error"`
}

// unaryMethod answers with one JSON-RPC response.
type unaryMethod func(a *Agent, ctx context.Context, params json.RawMessage) (any, *rpcError)

// streamMethod prepares an SSE stream; an error is still answered as a plain
// JSON-RPC response because no byte of the stream has been written.
type streamMethod func(a *Agent, params json.RawMessage) (subscription, *rpcError)

var unaryMethods = map[string]unaryMethod{
	"message/send":                        (*Agent).messageSend,
	"tasks/get":                           (*Agent).tasksGet,
	"tasks/cancel":                        (*Agent).tasksCancel,
	"tasks/pushNotificationConfig/set":    (*Agent).pushConfigSet,
	"tasks/pushNotificationConfig/get":    (*Agent).pushConfigGet,
	"tasks/pushNotificationConfig/list":   (*Agent).pushConfigList,
	"tasks/pushNotificationConfig/delete": (*Agent).pushConfigDelete,
}

var streamMethods = map[string]streamMethod{
	"message/stream":    (*Agent).messageStream,
	"tasks/resubscribe": (*Agent).tasksResubscribe,
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
	if m, ok := unaryMethods[req.Method]; ok {
		result, rerr := m(a, r.Context(), req.Params)
		if rerr != nil {
			writeError(w, req.ID, rerr)
			return
		}
		writeJSON(w, successResponse{JSONRPC: "2.0", ID: req.ID, Result: result})
		return
	}
	if m, ok := streamMethods[req.Method]; ok {
		sub, rerr := m(a, req.Params)
		if rerr != nil {
			writeError(w, req.ID, rerr)
			return
		}
		a.serveStream(w, r, req.ID, sub)
		return
	}
	writeError(w, req.ID, &rpcError{
		Code:    codeMethodNotFound,
		Message: "Method not found",
		Data:    map[string]string{"method": req.Method},
	})
}

// decodeRequest validates the JSON-RPC 2.0 envelope. It returns the request
// id as soon as it is known to be valid, so that later errors can echo it.
func decodeRequest(body []byte) (request, *rpcError) {
	var req request
	if !json.Valid(body) {
		return req, &rpcError{Code: codeParseError, Message: "Invalid JSON payload"}
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
			return req, &rpcError{Code: codeInvalidParams, Message: "Invalid parameters: params must be an object"}
		}
		req.Params = p
	}
	return req, nil
}

// decodeParams decodes params into v. Unknown keys are ignored, as the
// pydantic models of 0.x servers ignore them.
func decodeParams(params json.RawMessage, v any) *rpcError {
	if params == nil {
		params = json.RawMessage("{}")
	}
	if err := json.Unmarshal(params, v); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			return errInvalidParams(fmt.Errorf("%s: must be %s, got %s", typeErr.Field, typeErr.Type, typeErr.Value))
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
