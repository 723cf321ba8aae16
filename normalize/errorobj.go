package normalize

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/jsonscan"
)

// AppendError appends the JSON-RPC error object for e in dialect d. 1.0
// carries details as an array of ProtoJSON Any (here one ErrorInfo); 0.x as
// a plain data object.
func AppendError(dst []byte, d dialect.ID, e *Error) []byte {
	row := e.Kind.Error()
	msg := e.Message
	if msg == "" {
		msg = row.Message
	}
	dst = append(dst, `{"code":`...)
	dst = strconv.AppendInt(dst, int64(row.Code), 10)
	dst = append(dst, `,"message":`...)
	dst = gjson.AppendJSONString(dst, msg)
	if d == dialect.V10 {
		dst = append(dst, `,"data":[{"@type":"`+dialect.ErrorInfoType+`","reason":"`...)
		dst = append(dst, row.Reason...)
		dst = append(dst, `","domain":"`+dialect.Domain+`"`...)
		if len(e.Metadata) > 0 {
			dst = append(dst, `,"metadata":`...)
			dst = appendKVs(dst, e.Metadata)
		}
		dst = append(dst, "}]"...)
	} else if len(e.Metadata) > 0 {
		dst = append(dst, `,"data":`...)
		dst = appendKVs(dst, e.Metadata)
	}
	return append(dst, '}')
}

func appendKVs(dst []byte, kvs []KV) []byte {
	dst = append(dst, '{')
	for i, kv := range kvs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = gjson.AppendJSONString(dst, kv.Key)
		dst = append(dst, ':')
		dst = gjson.AppendJSONString(dst, kv.Value)
	}
	return append(dst, '}')
}

// errorObject translates a backend's JSON-RPC error object from dialect
// from into to. Code and message are kept (A2A kept the codes when it renamed
// the errors); only data changes shape: a 0.x data object becomes the
// metadata of a 1.0 ErrorInfo (values stringified, as map<string,string>
// requires), and an ErrorInfo's metadata becomes 0.x data.
//
// The object passes as it is only when it is exactly what the gateway reads
// from it: code, message and at most one data, each once, spelled plainly.
// Anything else (a member twice, members JSON-RPC does not define, a
// message that is not a string) is rebuilt from the members the gateway
// read, so the caller's parser cannot see another code or message than the
// gateway's metrics, logs and retry decisions did.
func errorObject(from, to dialect.ID, obj []byte) ([]byte, error) {
	var code, msg, data gjson.Result
	exact := true
	jsonscan.Each(jsonscan.Parse(obj), func(k, v gjson.Result) bool {
		var slot *gjson.Result
		switch k.Str {
		case "code":
			slot = &code
		case "message":
			slot = &msg
		case "data":
			slot = &data
		default:
			exact = false
			return true
		}
		// The first of a repeated member is the one read, as gjson's Get
		// (the reply check) reads it.
		if slot.Exists() || len(k.Raw) != len(k.Str)+2 {
			exact = false
		}
		if !slot.Exists() {
			*slot = v
		}
		return true
	})
	n, err := errorCode(code)
	if err != nil {
		return nil, err
	}
	dataIsDetails := data.IsArray() && detailsOnly(data)
	if dataIsDetails && infoNotStringMap(data) {
		exact = false
	}
	// 0.x data may be any JSON value, so between 0.x peers it passes as it is
	// even when it looks like 1.0 details.
	sameV03 := from == dialect.V03 && to == dialect.V03
	// A 1.0 caller reads an error's kind from its ErrorInfo, or else from
	// its code: one of a code no dialect defines, without data, would
	// leave it neither, so it gets an ErrorInfo saying the reason is
	// unknown.
	_, known := dialect.ErrorByCode(n)
	noInfo := to == dialect.V10 && !data.Exists() && !known
	if exact && msg.Type == gjson.String && !noInfo && (!data.Exists() || sameV03 || dataIsDetails == (to == dialect.V10)) {
		return obj, nil
	}
	w := getWriter()
	defer w.release()
	w.open('{')
	w.key("code")
	w.raw(code.Raw)
	w.key("message")
	if msg.Type == gjson.String {
		w.raw(msg.Raw)
	} else if row, ok := dialect.ErrorByCode(n); ok {
		w.string(row.Message)
	} else {
		w.string("Error")
	}
	if data.Exists() || noInfo {
		switch {
		case to == dialect.V10:
			errorDetailsV10(w, n, data, dataIsDetails)
		case sameV03:
			w.key("data")
			w.raw(data.Raw)
		default:
			errorDataV03(w, data, dataIsDetails)
		}
	}
	w.close('}')
	return w.bytes(), nil
}

// errorCode reads a JSON-RPC error code: a JSON integer (no fraction or
// exponent, so 1e3 and 1.0 are not codes) in int32 range, as JSON-RPC,
// gRPC's google.rpc.Status and the SDKs' int32 fields take it. Anything
// else is an *Error of kind InvalidAgentResponse that shows what was sent.
func errorCode(code gjson.Result) (int, error) {
	if code.Type == gjson.Number && !strings.ContainsAny(code.Raw, ".eE") {
		if n, err := strconv.ParseInt(code.Raw, 10, 32); err == nil {
			return int(n), nil
		}
	}
	if !code.Exists() {
		return 0, Errorf(dialect.ErrInvalidAgentResponse, `the agent's error has no "code"`)
	}
	raw := code.Raw
	if len(raw) > 32 {
		cut := 32
		for cut > 0 && !utf8.RuneStart(raw[cut]) {
			cut--
		}
		raw = raw[:cut] + "…"
	}
	return 0, Errorf(dialect.ErrInvalidAgentResponse, "the agent's error code %s is not an integer code: JSON-RPC error codes are JSON integers (no fraction or exponent) from %d to %d", raw, math.MinInt32, math.MaxInt32)
}

// AgentError is a backend agent's own JSON-RPC error, read once from its
// reply and already translated into the caller's dialect: the gateway
// answers it as it is (same code and message, data in the caller's dialect),
// unlike an *Error, which the gateway raises and renders itself.
type AgentError struct {
	Code    int
	Message string
	// Object is the whole error object in the caller's dialect.
	Object []byte
}

func (e *AgentError) Error() string { return e.Message }

// ParseAgentError translates a backend's error object from dialect from
// into to (see errorObject) and reads its code and message. A malformed
// object is an *Error of kind InvalidAgentResponse.
func ParseAgentError(from, to dialect.ID, obj []byte) (*AgentError, error) {
	out, err := errorObject(from, to, obj)
	if err != nil {
		return nil, err
	}
	root := jsonscan.Parse(out)
	return &AgentError{Code: int(jsonscan.Member(root, "code").Int()), Message: jsonscan.Member(root, "message").Str, Object: out}, nil
}

// infoNotStringMap reports whether an ErrorInfo among details has
// metadata that is no map<string,string>, as the proto declares it: a key
// twice, or a value that is no string (an object, which may repeat keys
// of its own, a number...). ProtoJSON parsers refuse either.
func infoNotStringMap(details gjson.Result) bool {
	bad := false
	jsonscan.Each(details, func(_, d gjson.Result) bool {
		if jsonscan.Member(d, "@type").Str == dialect.ErrorInfoType {
			if md := jsonscan.Member(d, "metadata"); md.IsObject() {
				jsonscan.Each(md, func(_, v gjson.Result) bool {
					bad = v.Type != gjson.String
					return !bad
				})
				bad = bad || uniqueKeys(md) != nil
			}
		}
		return !bad
	})
	return bad
}

// eachKeyOnce writes the object obj with each of its keys once, its first
// value (the one the gateway reads), through write: an ErrorInfo's
// metadata is a map, which ProtoJSON parsers refuse with a key twice and
// others read as the last. An error is rebuilt rather than refused: the
// caller must still learn of it.
func eachKeyOnce(w *writer, obj gjson.Result, write func(w *writer, k, v gjson.Result)) {
	var seen map[string]bool
	w.open('{')
	jsonscan.Each(obj, func(k, v gjson.Result) bool {
		if !seen[k.Str] {
			if seen == nil {
				seen = map[string]bool{}
			}
			seen[k.Str] = true
			write(w, k, v)
		}
		return true
	})
	w.close('}')
}

// stringMember writes a member of a map<string,string>: a value that is no
// string as its JSON text, as the gRPC binding gives it.
func stringMember(w *writer, k, v gjson.Result) {
	w.rawKey(k)
	stringValue(w, v)
}

// detailsOnly reports whether every element of arr is a ProtoJSON Any.
func detailsOnly(arr gjson.Result) bool {
	ok := true
	arr.ForEach(func(_, v gjson.Result) bool {
		ok = v.IsObject() && v.Get(`@type`).Type == gjson.String
		return ok
	})
	return ok
}

func errorDetailsV10(w *writer, code int, data gjson.Result, isDetails bool) {
	w.key("data")
	if isDetails {
		if !infoNotStringMap(data) {
			w.raw(data.Raw)
			return
		}
		w.open('[')
		jsonscan.Each(data, func(_, d gjson.Result) bool {
			w.elem()
			if jsonscan.Member(d, "@type").Str != dialect.ErrorInfoType {
				w.raw(d.Raw)
				return true
			}
			w.open('{')
			jsonscan.Each(d, func(k, v gjson.Result) bool {
				if k.Str == "metadata" && v.IsObject() {
					w.rawKey(k)
					eachKeyOnce(w, v, stringMember)
				} else {
					w.member(k, v)
				}
				return true
			})
			w.close('}')
			return true
		})
		w.close(']')
		return
	}
	reason := "UNKNOWN"
	if row, ok := dialect.ErrorByCode(code); ok {
		reason = row.Reason
	}
	w.raw(`[{"@type":"` + dialect.ErrorInfoType + `","reason":"`)
	w.raw(reason)
	w.raw(`","domain":"` + dialect.Domain + `"`)
	if !data.Exists() {
		w.raw("}]")
		return
	}
	w.raw(`,"metadata":{`)
	if data.IsObject() {
		// ErrorInfo.metadata is a map: a key the data object repeats is
		// written once, its first value (the one the gateway reads), not
		// as a map a ProtoJSON parser refuses or another reads otherwise.
		var seen map[string]bool
		data.ForEach(func(k, v gjson.Result) bool {
			if seen[k.Str] {
				return true
			}
			if seen == nil {
				seen = map[string]bool{}
			}
			seen[k.Str] = true
			w.rawKey(k)
			stringValue(w, v)
			return true
		})
	} else {
		w.key("detail")
		stringValue(w, data)
	}
	w.raw("}}]")
}

// stringValue writes v as a JSON string: strings as they are, anything else
// as its JSON text.
func stringValue(w *writer, v gjson.Result) {
	if v.Type == gjson.String {
		w.raw(v.Raw)
		return
	}
	w.string(v.Raw)
}

func errorDataV03(w *writer, data gjson.Result, isDetails bool) {
	if !isDetails {
		w.key("data")
		w.raw(data.Raw)
		return
	}
	// Keep only what a 0.x client can use: the ErrorInfo metadata. Other
	// details (BadRequest field violations...) have no 0.x shape; they travel
	// on as they are when there is no ErrorInfo to stand for them.
	var meta gjson.Result
	others := false
	data.ForEach(func(_, v gjson.Result) bool {
		if v.Get(`@type`).Str == dialect.ErrorInfoType {
			meta = v.Get("metadata")
		} else {
			others = true
		}
		return true
	})
	switch {
	case meta.IsObject() && !isEmptyObject(meta):
		w.key("data")
		if uniqueKeys(meta) == nil {
			w.raw(meta.Raw)
		} else {
			eachKeyOnce(w, meta, (*writer).member)
		}
	case others:
		w.key("data")
		w.raw(data.Raw)
	}
}

// LimitMessage cuts the agent's message, in Object too, to at most n bytes
// (at a character boundary) and says how many bytes were cut.
func (e *AgentError) LimitMessage(n int) {
	if len(e.Message) <= n {
		return
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(e.Message[cut]) {
		cut--
	}
	e.setMessage(e.Message[:cut] + "… (" + strconv.Itoa(len(e.Message)-cut) + " bytes cut)")
}

// LimitData leaves out the agent's error data, in Object, when it is over
// n bytes, and says so in the message: data is the one part of an error a
// backend can make as large as it likes, and over gRPC it travels in the
// trailers, where many clients refuse more than a few KiB.
func (e *AgentError) LimitData(n int) {
	data := jsonscan.Member(jsonscan.Parse(e.Object), "data")
	if !data.Exists() || len(data.Raw) <= n {
		return
	}
	out, err := sjson.DeleteBytes(e.Object, "data")
	if err != nil {
		return
	}
	e.Object = out
	e.setMessage(e.Message + " (its error data, " + strconv.Itoa(len(data.Raw)) + " bytes, left out)")
}

// PrefixMessage puts prefix before the agent's message, in Object too, so
// the gateway can say in the caller's terms whose words follow: a backend
// of the other dialect names its own methods and field paths.
func (e *AgentError) PrefixMessage(prefix string) {
	e.setMessage(prefix + e.Message)
}

// setMessage replaces the message, in Object too, when Object has one.
func (e *AgentError) setMessage(m string) {
	msg := jsonscan.Member(jsonscan.Parse(e.Object), "message")
	if msg.Type != gjson.String {
		return
	}
	e.Message = m
	out := make([]byte, 0, len(e.Object)-len(msg.Raw)+len(m)+8)
	out = append(out, e.Object[:msg.Index]...)
	out = gjson.AppendJSONString(out, m)
	e.Object = append(out, e.Object[msg.Index+len(msg.Raw):]...)
}
