package rest

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/rpcerror"
)

// apiError is one REST error: the google.rpc.Status the caller gets and the
// HTTP status it comes with.
type apiError struct {
	httpStatus int
	code       int    // the JSON-RPC error code, which the 0.3 body carries
	status     string // the google.rpc.Code name
	reason     string // the ErrorInfo reason
	message    string
	metadata   map[string]string
	extra      []json.RawMessage // further details, passed on after the ErrorInfo
	allow      string            // the Allow header of a 405
	// v03: answer in the 0.3 binding's body, the JSON-RPC error object
	// @a2a-js/sdk 0.3's REST server writes (toHTTPError) and its
	// RestTransport reads; 0.3 REST has no normative error body.
	v03 bool
}

// restCode is the REST form of one JSON-RPC error code: the HTTP status and
// google.rpc.Code of the A2A 1.0 mapping (spec §5.4, a2a-dialects.md §7.1,
// the a2a-go v2 REST binding for the codes the spec leaves open).
type restCode struct {
	httpStatus int
	status     string
	reason     string // for the codes dialect's table does not hold
}

var restCodes = map[int]restCode{
	-32700: {http.StatusBadRequest, "INVALID_ARGUMENT", ""},
	-32600: {http.StatusBadRequest, "INVALID_ARGUMENT", ""},
	-32601: {http.StatusNotImplemented, "UNIMPLEMENTED", ""},
	-32602: {http.StatusBadRequest, "INVALID_ARGUMENT", ""},
	-32603: {http.StatusInternalServerError, "INTERNAL", ""},
	-32000: {http.StatusInternalServerError, "INTERNAL", "SERVER_ERROR"},
	-32001: {http.StatusNotFound, "NOT_FOUND", ""},
	-32002: {http.StatusBadRequest, "FAILED_PRECONDITION", ""},
	-32003: {http.StatusBadRequest, "FAILED_PRECONDITION", ""},
	-32004: {http.StatusBadRequest, "FAILED_PRECONDITION", ""},
	-32005: {http.StatusBadRequest, "INVALID_ARGUMENT", ""},
	-32006: {http.StatusInternalServerError, "INTERNAL", ""},
	-32007: {http.StatusBadRequest, "FAILED_PRECONDITION", ""},
	-32008: {http.StatusBadRequest, "FAILED_PRECONDITION", ""},
	-32009: {http.StatusBadRequest, "FAILED_PRECONDITION", ""},
	-31401: {http.StatusUnauthorized, "UNAUTHENTICATED", ""},
	-31403: {http.StatusForbidden, "PERMISSION_DENIED", "UNAUTHORIZED"},
}

// statusByHTTP names the google.rpc.Code of an HTTP status the core chose
// itself (401 with a challenge, 503 while signing keys are unavailable).
var statusByHTTP = map[int]string{
	http.StatusBadRequest:            "INVALID_ARGUMENT",
	http.StatusUnauthorized:          "UNAUTHENTICATED",
	http.StatusForbidden:             "PERMISSION_DENIED",
	http.StatusNotFound:              "NOT_FOUND",
	http.StatusRequestEntityTooLarge: "INVALID_ARGUMENT",
	http.StatusTooManyRequests:       "RESOURCE_EXHAUSTED",
	http.StatusServiceUnavailable:    "UNAVAILABLE",
	http.StatusGatewayTimeout:        "DEADLINE_EXCEEDED",
}

// fromRPCError turns a 1.0 JSON-RPC error object into the REST error.
// coreStatus is the HTTP status the core answered with: 200 for ordinary
// JSON-RPC errors, else a status it chose on purpose, which is kept.
func fromRPCError(obj gjson.Result, coreStatus int) *apiError {
	parsed := rpcerror.Parse(obj)
	rc, ok := restCodes[parsed.Code]
	if !ok {
		rc = restCode{http.StatusInternalServerError, "INTERNAL", ""}
	}
	if coreStatus >= 400 {
		rc.httpStatus = coreStatus
		if s, ok := statusByHTTP[coreStatus]; ok {
			rc.status = s
		} else if coreStatus >= 500 {
			rc.status = "INTERNAL"
		}
	}
	e := &apiError{httpStatus: rc.httpStatus, code: parsed.Code, status: rc.status, reason: parsed.Reason, message: parsed.Message, metadata: parsed.Metadata}
	for _, d := range parsed.Details {
		if d.Get("@type").Type == gjson.String {
			e.extra = append(e.extra, json.RawMessage(d.Raw))
		}
	}
	if e.reason == "" {
		e.reason = rc.reason
	}
	if e.reason == "" {
		e.reason = dialect.ErrInternal.Error().Reason
	}
	return e
}

// newError is an error the REST front end raises itself, before the core sees
// the request.
func newError(httpStatus int, kind dialect.ErrorKind, message string) *apiError {
	status := statusByHTTP[httpStatus]
	if rc, ok := restCodes[kind.Error().Code]; ok && httpStatus == rc.httpStatus {
		status = rc.status
	}
	if status == "" {
		status = "INVALID_ARGUMENT"
	}
	return &apiError{httpStatus: httpStatus, code: kind.Error().Code, status: status, reason: kind.Error().Reason, message: message}
}

type errorInfo struct {
	Type     string            `json:"@type"`
	Reason   string            `json:"reason"`
	Domain   string            `json:"domain"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

type statusBody struct {
	Code    int               `json:"code"`
	Status  string            `json:"status"`
	Message string            `json:"message"`
	Details []json.RawMessage `json:"details"`
}

type v03Body struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

// body renders e as {"error": google.rpc.Status}, the AIP-193 form, or on
// the 0.3 routes as {"code","message","data"}.
func (e *apiError) body() []byte {
	if e.v03 {
		out, _ := json.Marshal(v03Body{Code: e.code, Message: e.message, Data: e.v03Data()})
		return out
	}
	info, _ := json.Marshal(errorInfo{Type: dialect.ErrorInfoType, Reason: e.reason, Domain: dialect.Domain, Metadata: e.metadata})
	details := append([]json.RawMessage{info}, e.extra...)
	out, _ := json.Marshal(struct {
		Error statusBody `json:"error"`
	}{statusBody{Code: e.httpStatus, Status: e.status, Message: e.message, Details: details}})
	return out
}

// v03Data is data as a 0.x JSON-RPC error carries it (a2a-dialects.md §14):
// the ErrorInfo metadata as an object, a task state in its 0.x spelling. When
// further details (BadRequest, a foreign ErrorInfo) came with the error, the
// 1.0 details array is passed on whole instead, which 0.x allows, so that
// they are not lost.
func (e *apiError) v03Data() any {
	if len(e.extra) > 0 {
		info, _ := json.Marshal(errorInfo{Type: dialect.ErrorInfoType, Reason: e.reason, Domain: dialect.Domain, Metadata: e.metadata})
		return append([]json.RawMessage{info}, e.extra...)
	}
	if len(e.metadata) == 0 {
		return nil
	}
	data := make(map[string]string, len(e.metadata))
	for k, v := range e.metadata {
		if s, ok := dialect.ToV03(dialect.TaskStates, v); ok && k == "state" {
			v = s
		}
		data[k] = v
	}
	return data
}

// write answers the request with e. Headers already set on w (a challenge,
// Retry-After) stay.
func (e *apiError) write(w http.ResponseWriter) {
	b := e.body()
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	if e.allow != "" {
		h.Set("Allow", e.allow)
	}
	w.WriteHeader(e.httpStatus)
	_, _ = w.Write(b)
}
