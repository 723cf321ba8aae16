package agentcore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// MaxRequestBytes bounds a JSON-RPC request body; A2A requests are small and
// the agent keeps them in memory.
const MaxRequestBytes = 1 << 20

// JSON-RPC error codes and the A2A codes both dialects share.
const (
	CodeParseError        = -32700
	CodeInvalidRequest    = -32600
	CodeMethodNotFound    = -32601
	CodeInvalidParams     = -32602
	CodeInternalError     = -32603
	CodeTaskNotFound      = -32001
	CodeTaskNotCancelable = -32002
)

// Error is a JSON-RPC error before its dialect spells it: Detail names what
// the error is about (0.2.5 writes it as the data object, 1.0 as the
// metadata of a google.rpc.ErrorInfo).
type Error struct {
	Code    int
	Message string
	Detail  map[string]string
}

// NewError returns an Error.
func NewError(code int, message string, detail map[string]string) *Error {
	return &Error{Code: code, Message: message, Detail: detail}
}

// ErrInvalidRequest is -32600 with detail.
func ErrInvalidRequest(detail string) *Error {
	return NewError(CodeInvalidRequest, "Request payload validation error: "+detail, nil)
}

// ErrInvalidParams is -32602 saying what is wrong with the params.
func ErrInvalidParams(err error) *Error {
	return NewError(CodeInvalidParams, "Invalid parameters: "+err.Error(), nil)
}

// ErrTaskNotFound is -32001 for taskID.
func ErrTaskNotFound(taskID string) *Error {
	return NewError(CodeTaskNotFound, "Task not found", map[string]string{"taskId": taskID})
}

// Unary answers a JSON-RPC call with one response.
type Unary func(r *http.Request, params json.RawMessage) (any, *Error)

// Streaming prepares an SSE stream; an error is still answered as a plain
// JSON-RPC response because no byte of the stream has been written.
type Streaming func(r *http.Request, params json.RawMessage) (Subscription, *Error)

// Decode is a dialect's decoder of a method's params into v, a pointer to
// the method's request struct.
type Decode func(params json.RawMessage, v any) *Error

// Handle is the Unary that decodes its params into a P and lets answer
// answer them.
func Handle[P any](decode Decode, answer func(r *http.Request, p *P) (any, *Error)) Unary {
	return func(r *http.Request, params json.RawMessage) (any, *Error) {
		var p P
		if rerr := decode(params, &p); rerr != nil {
			return nil, rerr
		}
		return answer(r, &p)
	}
}

// HandleStream is the Streaming that decodes its params into a P and lets
// open prepare the stream for them.
func HandleStream[P any](decode Decode, open func(r *http.Request, p *P) (Subscription, *Error)) Streaming {
	return func(r *http.Request, params json.RawMessage) (Subscription, *Error) {
		var p P
		if rerr := decode(params, &p); rerr != nil {
			return Subscription{}, rerr
		}
		return open(r, &p)
	}
}

// Methods is a dialect's JSON-RPC surface.
type Methods struct {
	Unary     map[string]Unary
	Streaming map[string]Streaming
	// Admit, when set, vets a request once its method is known to exist.
	Admit func(r *http.Request) *Error
	// EncodeError spells an Error as the dialect's JSON-RPC error object.
	EncodeError func(*Error) any
}

type request struct {
	ID     json.RawMessage
	Method string
	Params json.RawMessage
}

// NoResult, returned by a Unary, answers a response with no result member
// at all, as the a2a-go v2 server answers a push config delete.
var NoResult any = noResult{}

type noResult struct{}

type successResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	// Result is written even when nil: 0.2.5's
	// pushNotificationConfig/delete answers "result": null.
	Result any `json:"result"`
}

type errorResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   any             `json:"error"`
}

// serveRPC answers one JSON-RPC request, or 503 once the agent is closed.
func (c *Core[M, A, C]) serveRPC(w http.ResponseWriter, r *http.Request) {
	m := c.methods
	if c.closedNow() {
		http.Error(w, "agent is closed", http.StatusServiceUnavailable)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxRequestBytes))
	if err != nil {
		m.writeError(w, nil, ErrInvalidRequest("reading body: "+err.Error()))
		return
	}
	req, rerr := decodeRequest(body)
	if rerr != nil {
		m.writeError(w, req.ID, rerr)
		return
	}
	unary, isUnary := m.Unary[req.Method]
	stream, isStream := m.Streaming[req.Method]
	if !isUnary && !isStream {
		m.writeError(w, req.ID, NewError(CodeMethodNotFound, "Method not found", map[string]string{"method": req.Method}))
		return
	}
	if m.Admit != nil {
		if rerr := m.Admit(r); rerr != nil {
			m.writeError(w, req.ID, rerr)
			return
		}
	}
	if isUnary {
		result, rerr := unary(r, req.Params)
		if rerr != nil {
			m.writeError(w, req.ID, rerr)
			return
		}
		if result == NoResult {
			WriteJSON(w, struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
			}{"2.0", req.ID})
			return
		}
		WriteJSON(w, successResponse{JSONRPC: "2.0", ID: req.ID, Result: result})
		return
	}
	sub, rerr := stream(r, req.Params)
	if rerr != nil {
		m.writeError(w, req.ID, rerr)
		return
	}
	c.serveStream(w, r, req.ID, sub)
}

// decodeRequest validates the JSON-RPC 2.0 envelope. It returns the request
// id as soon as it is known to be valid, so that later errors can echo it.
func decodeRequest(body []byte) (request, *Error) {
	var req request
	if !json.Valid(body) {
		return req, NewError(CodeParseError, "Invalid JSON payload", nil)
	}
	trimmed := bytes.TrimSpace(body)
	if trimmed[0] == '[' {
		return req, ErrInvalidRequest("batch requests are not supported")
	}
	if trimmed[0] != '{' {
		return req, ErrInvalidRequest("the request must be a JSON object")
	}
	var env map[string]json.RawMessage
	if err := json.Unmarshal(body, &env); err != nil {
		return req, ErrInvalidRequest(err.Error())
	}
	id, ok := env["id"]
	if !ok {
		return req, ErrInvalidRequest("id is required; notifications are not supported")
	}
	if c := id[0]; c != '"' && c != '-' && (c < '0' || c > '9') {
		return req, ErrInvalidRequest("id must be a string or a number")
	}
	req.ID = id
	if v := env["jsonrpc"]; string(v) != `"2.0"` {
		return req, ErrInvalidRequest(`jsonrpc must be "2.0"`)
	}
	if err := json.Unmarshal(env["method"], &req.Method); err != nil || req.Method == "" {
		return req, ErrInvalidRequest("method must be a non-empty string")
	}
	if p, ok := env["params"]; ok && string(p) != "null" {
		if p[0] != '{' {
			return req, ErrInvalidParams(errors.New("params must be an object"))
		}
		req.Params = p
	}
	return req, nil
}

// Checked is a request that checks itself once decoded, such as for the
// fields it requires: DecodeParams refuses one whose Check fails.
type Checked interface{ Check() error }

// Require is the error naming the first of fields left empty, or nil;
// fields are name, value pairs.
func Require(fields ...string) error {
	for i := 0; i+1 < len(fields); i += 2 {
		if fields[i+1] == "" {
			return errors.New(fields[i] + ": required")
		}
	}
	return nil
}

// CheckUserMessage is the error for what both dialects require of a
// client's message, given in its spelling, or nil: an id, the one role a
// client may send (userRole), and at least one part.
func CheckUserMessage(messageID, role, userRole string, parts int) error {
	if messageID == "" {
		return errors.New("message.messageId: required")
	}
	if role != userRole {
		return fmt.Errorf("message.role: must be %q, got %q", userRole, role)
	}
	if parts == 0 {
		return errors.New("message.parts: must not be empty")
	}
	return nil
}

// NotNegative is the error for an optional count n, the request member
// field, set below 0, or nil.
func NotNegative[N ~int | ~int32](field string, n *N) error {
	if n != nil && *n < 0 {
		return fmt.Errorf("%s: must not be negative, got %d", field, *n)
	}
	return nil
}

// CheckWebhookURL is the error for a webhook URL raw, the request member
// field, that is not an absolute http or https URL, or nil.
func CheckWebhookURL(field, raw string) error {
	if u, err := url.Parse(raw); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
		return nil
	}
	return fmt.Errorf("%s: must be an absolute http or https URL, got %q", field, raw)
}

// DecodeParams decodes params into v, absent params as {}, and checks v
// when it is Checked. A value of the wrong type is reported at path+its
// field.
func DecodeParams(params json.RawMessage, v any, path string) *Error {
	if params == nil {
		params = json.RawMessage("{}")
	}
	if err := json.Unmarshal(params, v); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			return ErrInvalidParams(fmt.Errorf("%s%s: must be %s, got %s", path, typeErr.Field, typeErr.Type, typeErr.Value))
		}
		return ErrInvalidParams(err)
	}
	if c, ok := v.(Checked); ok {
		if err := c.Check(); err != nil {
			return ErrInvalidParams(err)
		}
	}
	return nil
}

// WriteJSON answers with v as JSON.
func WriteJSON(w http.ResponseWriter, v any) {
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
func (m *Methods) writeError(w http.ResponseWriter, id json.RawMessage, e *Error) {
	WriteJSON(w, errorResponse{JSONRPC: "2.0", ID: id, Error: m.EncodeError(e)})
}

// MethodNotAllowed answers 405 naming the methods allowed.
func MethodNotAllowed(w http.ResponseWriter, allow string) {
	w.Header().Set("Allow", allow)
	http.Error(w, http.StatusText(http.StatusMethodNotAllowed), http.StatusMethodNotAllowed)
}
