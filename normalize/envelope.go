package normalize

import (
	"math"
	"math/big"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/jsonscan"
)

// maxIDBytes bounds a JSON-RPC id. Ids are echoed in every reply and event,
// so a huge one would be a cheap amplifier.
const maxIDBytes = 256

// Envelope is one JSON-RPC request, read and checked.
type Envelope struct {
	// ID is the request id exactly as the caller wrote it (a JSON string or
	// number), echoed in every reply.
	ID      []byte
	Method  string
	Dialect dialect.ID
	Op      dialect.Op
	// Params is the raw params value; nil when absent.
	Params []byte
	// spans are where the body's containers end, recorded while it was
	// validated: AppendParams steps over them by lookup instead of
	// scanning again what validation read.
	spans jsonscan.Spans
}

var envelopeKeys = [...]keySpec{{"jsonrpc", ""}, {"id", ""}, {"method", ""}, {"params", ""}}

// Valid reports whether b is one well-formed JSON document: UTF-8, nested at
// most jsonscan.MaxDepth deep, and valid JSON.
func Valid(b []byte) bool {
	return utf8.Valid(b) && jsonscan.Valid(b)
}

// validSpans is Valid recording where b's containers end
// (jsonscan.ValidSpans), so that neither reading the envelope nor
// translating its params or result scans again what validation read.
func validSpans(b []byte, spans *jsonscan.Spans) bool {
	return utf8.Valid(b) && jsonscan.ValidSpans(b, spans)
}

// ParseRequest reads a JSON-RPC 2.0 request. On failure it returns an
// *Error, and the Envelope holds whatever id and dialect could be read, so
// the error can still be answered to the right request in the right dialect.
func ParseRequest(body []byte) (Envelope, error) {
	var env Envelope
	if !validSpans(body, &env.spans) {
		return env, Errorf(dialect.ErrParse, "%s", invalidJSONReason(body))
	}
	root := jsonscan.Parse(body)
	if root.IsArray() {
		return env, Errorf(dialect.ErrInvalidRequest, "batch requests are not supported: send one JSON-RPC request object per HTTP request")
	}
	if !root.IsObject() {
		return env, Errorf(dialect.ErrInvalidRequest, "the body must be a JSON-RPC request object, got %s", typeName(root))
	}
	var m members
	if err := collectIn(&env.spans, root, envelopeKeys[:], &m); err != nil {
		env.ID = unambiguousID(root)
		return env, &Error{Kind: dialect.ErrInvalidRequest, Message: "invalid JSON-RPC request: " + err.Error(), Err: err}
	}
	v := &m.vals
	if id := v[1]; id.Type == gjson.String || id.Type == gjson.Number {
		if len(id.Raw) <= maxIDBytes {
			env.ID = []byte(id.Raw)
		}
	}
	if meth := v[2]; meth.Type == gjson.String {
		env.Method = meth.Str
		env.Dialect = guessDialect(meth.Str)
	}
	switch {
	case m.unknown:
		return env, Errorf(dialect.ErrInvalidRequest, "invalid JSON-RPC request: only jsonrpc, id, method and params are allowed, got %s", unknownNames(root, envelopeKeys[:]))
	case v[0].Type != gjson.String || v[0].Str != "2.0":
		return env, Errorf(dialect.ErrInvalidRequest, `invalid JSON-RPC request: "jsonrpc" must be "2.0"`)
	case v[2].Type != gjson.String:
		return env, Errorf(dialect.ErrInvalidRequest, `invalid JSON-RPC request: "method" must be a string`)
	}
	// The method is checked before the id: a notification of a method that
	// does not exist is -32601, as JSON-RPC servers (the A2A SDKs among
	// them) answer it, not "id is required".
	d, op, ok := dialect.Lookup(env.Method)
	if !ok {
		return env, methodNotFound(env.Method)
	}
	switch id := v[1]; {
	case !id.Exists():
		return env, Errorf(dialect.ErrInvalidRequest, `invalid JSON-RPC request: "id" is required (notifications are not supported)`)
	case id.Type != gjson.String && id.Type != gjson.Number:
		return env, Errorf(dialect.ErrInvalidRequest, `invalid JSON-RPC request: "id" must be a string or a number, got %s`, typeName(id))
	case len(id.Raw) > maxIDBytes:
		return env, Errorf(dialect.ErrInvalidRequest, `invalid JSON-RPC request: "id" is longer than %d bytes`, maxIDBytes)
	}
	env.Dialect, env.Op = d, op
	if p := v[3]; p.Exists() {
		if !p.IsObject() && p.Type != gjson.Null {
			return env, Errorf(dialect.ErrInvalidParams, "invalid params: must be an object, got %s", typeName(p))
		}
		if p.IsObject() {
			env.Params = body[p.Index : p.Index+len(p.Raw)]
		}
	} else if op != dialect.GetExtendedCard {
		return env, Errorf(dialect.ErrInvalidParams, `invalid params: "params" is required for %s`, env.Method)
	}
	return env, nil
}

// unambiguousID returns the request id of an otherwise malformed envelope
// when exactly one member can be the id, so the error still reaches the
// right request; nil when the id itself is in doubt.
func unambiguousID(root gjson.Result) []byte {
	var id gjson.Result
	n := 0
	root.ForEach(func(k, v gjson.Result) bool {
		if strings.EqualFold(k.Str, "id") {
			id = v
			n++
		}
		return true
	})
	if n != 1 || (id.Type != gjson.String && id.Type != gjson.Number) || len(id.Raw) > maxIDBytes {
		return nil
	}
	return []byte(id.Raw)
}

func methodNotFound(name string) *Error {
	for _, r := range dialect.Retired {
		if name == r {
			return Errorf(dialect.ErrMethodNotFound, "method %q is not part of A2A 0.2.5, 0.3 or 1.0", name)
		}
	}
	return Errorf(dialect.ErrMethodNotFound, "method %q not found: this agent speaks A2A 0.x (message/send, tasks/get, ...) and 1.0 (SendMessage, GetTask, ...)", truncate(name, 64))
}

// GuessRequestDialect tells which dialect a request body that could not be
// read looks like, from its method name if one is readable; false if none is.
func GuessRequestDialect(body []byte) (dialect.ID, bool) {
	if m := gjson.GetBytes(body, "method"); m.Type == gjson.String {
		return guessDialect(m.Str), true
	}
	return 0, false
}

// guessDialect tells which dialect an unknown method name looks like, so an
// error about it reads right to the caller: slash names are 0.x.
func guessDialect(method string) dialect.ID {
	if d, _, ok := dialect.Lookup(method); ok {
		return d
	}
	if strings.Contains(method, "/") {
		return dialect.V03
	}
	return dialect.V10
}

func unknownNames(obj gjson.Result, specs []keySpec) string {
	var names []string
	obj.ForEach(func(k, _ gjson.Result) bool {
		if i, _ := match(specs, k.Str); i < 0 {
			names = append(names, `"`+truncate(k.Str, 32)+`"`)
		}
		return len(names) < 5
	})
	return strings.Join(names, ", ")
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func invalidJSONReason(b []byte) string {
	switch {
	case len(strings.TrimSpace(jsonscan.String(b))) == 0:
		return "the request body is empty: send a JSON-RPC request object"
	case !utf8.Valid(b):
		return "the request body is not valid UTF-8"
	case !jsonscan.DepthOK(b):
		return "the request body nests deeper than 100 levels"
	}
	return "the request body is not valid JSON"
}

// Reply is a backend's JSON-RPC response, read and checked.
type Reply struct {
	ID     []byte
	Result []byte // nil when the reply is an error
	Error  []byte // the error object; nil on success
	// spans are the body's, as Envelope's are: AppendResult and
	// AppendInspectedEvent step over Result's containers by lookup.
	spans jsonscan.Spans
}

var replyKeys = [...]keySpec{{"jsonrpc", ""}, {"id", ""}, {"result", ""}, {"error", ""}}

// ParseReply reads a backend's JSON-RPC response. Failures are *Error of
// kind InvalidAgentResponse. A success without "result" (the Go 1.0 SDK
// writes none for an empty one) reads as a null result.
func ParseReply(body []byte) (Reply, error) {
	var r Reply
	if !validSpans(body, &r.spans) {
		return r, Errorf(dialect.ErrInvalidAgentResponse, "the agent's reply is not valid JSON")
	}
	root := jsonscan.Parse(body)
	var m members
	if err := collectIn(&r.spans, root, replyKeys[:], &m); err != nil {
		return r, &Error{Kind: dialect.ErrInvalidAgentResponse, Message: "the agent's reply is not a JSON-RPC response: " + err.Error(), Err: err}
	}
	v := &m.vals
	if v[0].Str != "2.0" {
		return r, Errorf(dialect.ErrInvalidAgentResponse, `the agent's reply is not a JSON-RPC 2.0 response ("jsonrpc" is not "2.0")`)
	}
	if id := v[1]; id.Exists() {
		r.ID = body[id.Index : id.Index+len(id.Raw)]
	}
	switch res, e := v[2], v[3]; {
	case res.Exists() && e.Exists():
		return r, Errorf(dialect.ErrInvalidAgentResponse, `the agent's reply has both "result" and "error"`)
	case e.Exists():
		if !e.IsObject() {
			return r, Errorf(dialect.ErrInvalidAgentResponse, `the agent's reply has an "error" that is not a JSON-RPC error object`)
		}
		if _, err := errorCode(e.Get("code")); err != nil {
			return r, err
		}
		r.Error = body[e.Index : e.Index+len(e.Raw)]
	case res.Exists():
		r.Result = body[res.Index : res.Index+len(res.Raw)]
	default:
		r.Result = []byte("null")
	}
	return r, nil
}

// AppendRequest appends a JSON-RPC request: method with params (none when
// params is nil), under id, or under 1 when id is empty (a call of the
// gateway's own).
func AppendRequest(dst, id []byte, method string, params []byte) []byte {
	if len(id) == 0 {
		id = defaultID
	}
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"method":"`...)
	dst = append(dst, method...)
	dst = append(dst, '"')
	if params != nil {
		dst = append(dst, `,"params":`...)
		dst = append(dst, params...)
	}
	return append(dst, '}')
}

// AppendResultResponse appends a JSON-RPC success response.
func AppendResultResponse(dst, id, result []byte) []byte {
	return appendResponse(dst, id, `,"result":`, result)
}

// AppendErrorResponse appends a JSON-RPC error response around the error
// object obj.
func AppendErrorResponse(dst, id, obj []byte) []byte {
	return appendResponse(dst, id, `,"error":`, obj)
}

// appendResponse appends a JSON-RPC response whose member (with its
// leading comma and colon) holds value.
func appendResponse(dst, id []byte, member string, value []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = appendID(dst, id)
	dst = append(dst, member...)
	dst = append(dst, value...)
	return append(dst, '}')
}

func appendID(dst, id []byte) []byte {
	if len(id) == 0 {
		return append(dst, "null"...)
	}
	return append(dst, id...)
}

// SameID reports whether got, the id of a backend's reply, is sent, the id
// of the request the gateway made: the same JSON string or the same
// number, however either is spelled (a backend that decodes and re-encodes
// ids may write "\u0041" for "A" or 1e2 for 100). A missing id is no match.
func SameID(sent, got []byte) bool {
	if len(sent) == 0 {
		sent = defaultID
	}
	if string(sent) == string(got) {
		return true
	}
	s, g := jsonscan.Parse(sent), jsonscan.Parse(got)
	switch {
	case s.Type == gjson.String && g.Type == gjson.String:
		return s.Str == g.Str
	case s.Type == gjson.Number && g.Type == gjson.Number:
		// Exactly, not as float64 (0.1 and 0.1000000000000000055 differ),
		// except past 2^53, where a backend that decodes ids as float64
		// (JavaScript, Go's any) rounds them: such an id is compared as it
		// rounded it.
		var x, y big.Rat
		if _, ok := x.SetString(s.Raw); !ok {
			return false
		}
		if _, ok := y.SetString(g.Raw); !ok {
			return false
		}
		if x.Cmp(&y) == 0 {
			return true
		}
		xf, _ := x.Float64()
		yf, _ := y.Float64()
		return math.Abs(xf) > 1<<53 && xf == yf
	}
	return false
}

// defaultID is the id AppendRequest sends for a call without one.
var defaultID = []byte("1")
