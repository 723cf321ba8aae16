package normalize

import (
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/tidwall/gjson"
)

// str views b as a string without copying. The translators only read their
// input and every gjson.Result they keep points into it, so the input must
// not change while a translation runs; callers never hand us a buffer they
// write to concurrently.
func str(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// parse returns the gjson view of an already validated document.
func parse(b []byte) gjson.Result { return gjson.Parse(str(b)) }

// writer builds translated JSON by appending. changed records whether the
// output differs in meaning from the input, so callers can hand back the
// input itself when a translation found nothing to rewrite.
type writer struct {
	buf     []byte
	changed bool
}

var writerPool = sync.Pool{New: func() any { return &writer{buf: make([]byte, 0, 4096)} }}

func getWriter() *writer {
	w := writerPool.Get().(*writer)
	w.buf, w.changed = w.buf[:0], false
	return w
}

// release returns w to the pool unless its buffer grew unusually large.
func (w *writer) release() {
	if cap(w.buf) <= 1<<20 {
		writerPool.Put(w)
	}
}

// bytes returns a copy of the output that the caller owns.
func (w *writer) bytes() []byte { return append([]byte(nil), w.buf...) }

func (w *writer) open(c byte) { w.buf = append(w.buf, c) }

func (w *writer) close(c byte) { w.buf = append(w.buf, c) }

// sep writes the comma between members when one is needed.
func (w *writer) sep() {
	if n := len(w.buf); n > 0 {
		if c := w.buf[n-1]; c != '{' && c != '[' {
			w.buf = append(w.buf, ',')
		}
	}
}

// key writes a member name that is a plain ASCII identifier.
func (w *writer) key(k string) {
	w.sep()
	w.buf = append(w.buf, '"')
	w.buf = append(w.buf, k...)
	w.buf = append(w.buf, '"', ':')
}

// rawKey writes a member name exactly as the input spelled it.
func (w *writer) rawKey(k gjson.Result) {
	w.sep()
	w.buf = append(w.buf, k.Raw...)
	w.buf = append(w.buf, ':')
}

func (w *writer) raw(v string) { w.buf = append(w.buf, v...) }

func (w *writer) elem() { w.sep() }

// quoted writes s, which must need no escaping (enum names, table values).
func (w *writer) quoted(s string) {
	w.buf = append(w.buf, '"')
	w.buf = append(w.buf, s...)
	w.buf = append(w.buf, '"')
}

func (w *writer) string(s string) { w.buf = gjson.AppendJSONString(w.buf, s) }

func (w *writer) bool(b bool) { w.buf = strconv.AppendBool(w.buf, b) }

func (w *writer) int(n int64) { w.buf = strconv.AppendInt(w.buf, n, 10) }

// member copies one input member unchanged.
func (w *writer) member(k, v gjson.Result) {
	w.rawKey(k)
	w.raw(v.Raw)
}

// each calls fn for every member (key, value) of the object v, or every
// element (index, value) of the array v, exactly as gjson's ForEach does,
// which it replaces on the translation paths: gjson scans string contents
// byte by byte, each jumps over them with strings.IndexByte, and text is
// most of a message's bytes. Every nesting level is walked again by the
// level below, so that scan dominated translation time. v must come from a
// document Valid accepted; on anything else each stops early or reports
// odd values, but never panics. FuzzEach holds it to gjson's results.
func each(v gjson.Result, fn func(key, value gjson.Result) bool) {
	if v.Type != gjson.JSON {
		v.ForEach(fn)
		return
	}
	json := v.Raw
	i := skipSpace(json, 0)
	if i == len(json) || (json[i] != '{' && json[i] != '[') {
		return
	}
	obj := json[i] == '{'
	key := gjson.Result{Type: gjson.Number, Num: -1}
	i++
	for {
		for i < len(json) && (json[i] <= ' ' || json[i] == ',') {
			i++
		}
		if i == len(json) || json[i] == '}' || json[i] == ']' {
			return
		}
		if obj {
			if json[i] != '"' {
				return
			}
			end := skipString(json, i)
			key = stringResult(json[i:end], i+v.Index)
			for i = end; i < len(json) && (json[i] <= ' ' || json[i] == ':'); i++ {
			}
			if i == len(json) {
				return
			}
		} else {
			key.Num++
		}
		value, end := valueAt(json, i)
		if !value.Exists() {
			return
		}
		value.Index = i + v.Index
		i = end
		if !fn(key, value) {
			return
		}
	}
}

// valueAt reads the value starting at json[i] and returns it with the
// index just past it.
func valueAt(json string, i int) (gjson.Result, int) {
	switch json[i] {
	case '{', '[':
		end := skipContainer(json, i)
		return gjson.Result{Type: gjson.JSON, Raw: json[i:end]}, end
	case '"':
		end := skipString(json, i)
		return stringResult(json[i:end], 0), end
	}
	r := gjson.Parse(json[i:]) // a number or literal: gjson reads just that
	return r, i + len(r.Raw)
}

// stringResult is the gjson.Result of the string literal raw.
func stringResult(raw string, index int) gjson.Result {
	if len(raw) < 2 || raw[len(raw)-1] != '"' {
		return gjson.Result{}
	}
	r := gjson.Result{Type: gjson.String, Raw: raw, Str: raw[1 : len(raw)-1], Index: index}
	if strings.IndexByte(r.Str, '\\') >= 0 {
		r.Str = gjson.Parse(raw).Str // rare: let gjson unescape
	}
	return r
}

func skipSpace(json string, i int) int {
	for i < len(json) && json[i] <= ' ' {
		i++
	}
	return i
}

// skipString returns the index just past the string literal that starts
// with the quote at json[i]; len(json) if it is unterminated. A quote ends
// the string when an even number of backslashes precedes it.
func skipString(json string, i int) int {
	start := i + 1
	// Most strings are short (keys, ids, enum names): a plain loop ends
	// them before a call to IndexByte would pay off.
	for j := start; j < len(json) && j < start+16; j++ {
		if c := json[j]; c == '"' {
			return j + 1
		} else if c == '\\' {
			break
		}
	}
	for j := start; ; {
		q := strings.IndexByte(json[j:], '"')
		if q < 0 {
			return len(json)
		}
		q += j
		n := 0
		for q-1-n >= start && json[q-1-n] == '\\' {
			n++
		}
		if n%2 == 0 {
			return q + 1
		}
		j = q + 1
	}
}

// skipContainer returns the index just past the object or array that
// starts at json[i]; len(json) if it is unterminated.
func skipContainer(json string, i int) int {
	depth := 0
	for ; i < len(json); i++ {
		switch json[i] {
		case '"':
			i = skipString(json, i) - 1
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				return i + 1
			}
		}
	}
	return len(json)
}
