package rest

import (
	"bytes"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/jsonscan"
	"github.com/a2agate/gateway/internal/readall"
)

// rpcID is the JSON-RPC id of every request the front end makes: the core
// echoes it and the caller never sees it.
const rpcID = "1"

// buildParams makes the 1.0 JSON-RPC params of a matched route: the body
// (for operations with one), with the path's and query's fields set into
// it. A path field the body gives too must agree with it.
func buildParams(r route, body []byte, rawQuery string) ([]byte, *apiError) {
	params := []byte("{}")
	if r.op.body {
		trimmed := bytes.TrimSpace(body)
		switch {
		case len(trimmed) == 0 || string(trimmed) == "null":
			// An empty body is an empty message (a2a-go sends "null"
			// on cancel), and a missing required field is the core's to name.
		case !jsonscan.Valid(trimmed):
			return nil, invalidJSON(trimmed)
		case trimmed[0] != '{':
			return nil, newError(http.StatusBadRequest, dialect.ErrInvalidParams, "the request body must be a JSON object, the ProtoJSON of the "+r.op.method+" request")
		default:
			params = trimmed // the front end's own copy of the body; sjson does not write to it
		}
		if r.op.v03 {
			var aerr *apiError
			if params, aerr = v03Request(r.op.method, params, r.id); aerr != nil {
				return nil, aerr
			}
		}
	}
	var err error
	var conflict *apiError
	set := func(key, v string) {
		if err != nil || conflict != nil || key == "" {
			return
		}
		// The same field in the body must say what the path does: one of
		// the two would be dropped.
		if prev := gjson.GetBytes(params, key); prev.Exists() && (prev.Type != gjson.String || prev.Str != v) {
			conflict = badParam("the body's " + key + " " + truncate(prev.Raw, 64) + " is not the path's " + strconv.Quote(truncate(v, 64)) + ": leave it out of the body")
			return
		}
		params, err = sjson.SetBytes(params, key, v)
	}
	if r.tenant != "" {
		set("tenant", r.tenant)
	}
	set(r.op.idField, r.id)
	set(r.op.configField, r.configID)
	if conflict != nil {
		return nil, conflict
	}
	if err != nil {
		return nil, newError(http.StatusInternalServerError, dialect.ErrInternal, "building the request failed")
	}
	if rawQuery != "" {
		if len(r.op.query) == 0 {
			return nil, badParam(r.op.method + " takes no query parameters")
		}
		var qerr *apiError
		if params, qerr = applyQuery(params, r.op.query, rawQuery); qerr != nil {
			return nil, qerr
		}
	}
	return params, nil
}

// invalidJSON is the error for a body jsonscan.Valid refused. Validation
// is the core's validator, not gjson's, which recursed once a bracket: a
// body of nothing but brackets took a goroutine stack as large as it, past
// Go's limit (a fatal error) for a large max_body_bytes.
func invalidJSON(b []byte) *apiError {
	if !jsonscan.DepthOK(b) {
		return newError(http.StatusBadRequest, dialect.ErrParse, "the request body nests deeper than "+strconv.Itoa(jsonscan.MaxDepth)+" levels")
	}
	return newError(http.StatusBadRequest, dialect.ErrParse, "the request body is not valid JSON")
}

// emptyBody reports whether a body carries no field: empty, null or {}.
func emptyBody(b []byte) bool {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || string(b) == "null" {
		return true
	}
	if !jsonscan.Valid(b) {
		return false
	}
	v := jsonscan.Parse(b)
	return v.IsObject() && len(v.Map()) == 0
}

// envelope wraps params into the JSON-RPC request of method.
func envelope(method string, params []byte) []byte {
	b := make([]byte, 0, len(params)+64+len(method))
	b = append(b, `{"jsonrpc":"2.0","id":`+rpcID+`,"method":"`...)
	b = append(b, method...)
	b = append(b, `","params":`...)
	b = append(b, params...)
	return append(b, '}')
}

// jsonContentType reports whether a request body's declared type is one the
// binding accepts: application/json or application/a2a+json, in UTF-8. A
// body sent without a type is read as JSON.
func jsonContentType(h http.Header) bool {
	ct := h.Get("Content-Type")
	switch ct {
	case "", "application/json", "application/a2a+json":
		return true
	}
	mt, params, err := mime.ParseMediaType(ct)
	return err == nil && (strings.EqualFold(mt, "application/json") || strings.EqualFold(mt, "application/a2a+json")) && readall.UTF8Charset(params)
}

// jsonPath spells a jsonscan path as a caller would: a.b[0].c.
func jsonPath(path []any) string {
	var b strings.Builder
	for _, step := range path {
		switch s := step.(type) {
		case int:
			b.WriteString("[" + strconv.Itoa(s) + "]")
		case string:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(truncate(s, 64))
		}
	}
	return b.String()
}

// v03Request translates a 0.3 proto request body into the 1.0 params;
// pathTask is the task id of the request's path.
func v03Request(method string, body []byte, pathTask string) ([]byte, *apiError) {
	// encoding/json, which decodes the body here, reads a byte that is not
	// UTF-8 as U+FFFD and a repeated key as its last value: the backend
	// would be sent other text than the caller's, or half of it.
	if !utf8.Valid(body) {
		return nil, newError(http.StatusBadRequest, dialect.ErrParse, "the request body is not valid UTF-8")
	}
	if key, path, found := jsonscan.RepeatedKey(jsonscan.Parse(body)); found {
		where := ""
		if len(path) > 0 {
			where = ", in " + jsonPath(path)
		}
		return nil, newError(http.StatusBadRequest, dialect.ErrInvalidParams,
			"the request body names "+strconv.Quote(truncate(key, 64))+" twice"+where+": send each member once")
	}
	in, err := decodeObject(body)
	if err != nil {
		return nil, newError(http.StatusBadRequest, dialect.ErrParse, "the request body is not a JSON object: "+err.Error())
	}
	var out object
	switch method {
	case "SendMessage", "SendStreamingMessage":
		if out, err = v03SendToCanonical(in); err != nil {
			return nil, newError(http.StatusBadRequest, dialect.ErrInvalidParams, "the 0.3 SendMessageRequest is invalid: "+err.Error())
		}
	case "CreateTaskPushNotificationConfig":
		if out, err = v03CreatePushToCanonical(in, "", "", pathTask); err != nil {
			return nil, newError(http.StatusBadRequest, dialect.ErrInvalidParams, "the 0.3 TaskPushNotificationConfig is invalid: "+err.Error())
		}
	default:
		// CancelTaskRequest and TaskSubscriptionRequest: their one field
		// is the path's name, which a name in the body must agree with: it
		// would be dropped unread. What else came is carried, as a send's is.
		var r reader
		name := r.str(in, "name")
		if r.err != nil {
			return nil, badParam(r.err.Error())
		}
		if task, ok := v03Name(name); name != "" && (!ok || task != pathTask) {
			why := " is not tasks/{id}"
			if ok {
				why = " names task " + strconv.Quote(truncate(task, 64)) + ", not the path's " + strconv.Quote(truncate(pathTask, 64))
			}
			return nil, badParam("name " + strconv.Quote(truncate(name, 64)) + why + ": name the path's task, or leave name out")
		}
		out = object{}
		carryUnknown(out, in, "name")
	}
	return encode(out), nil
}
