package normalize

import (
	"encoding/binary"
	"math/bits"
	"strconv"
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
	// spans is the container index of the document being translated.
	spans []int
}

var writerPool = sync.Pool{New: func() any { return &writer{buf: make([]byte, 0, 4096)} }}

func getWriter() *writer {
	w := writerPool.Get().(*writer)
	w.buf, w.changed = w.buf[:0], false
	return w
}

// release returns w to the pool unless its buffers grew unusually large.
func (w *writer) release() {
	if cap(w.buf) <= 1<<20 && cap(w.spans) <= 1<<16 {
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
// byte by byte, each (skipString) eight bytes at a time, and text is most
// of a message's bytes. Every nesting level is walked again by the level
// below, so that scan dominated translation time. v must come from a
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
			end, esc := skipString(json, i)
			key = stringResult(json[i:end], esc, i+v.Index)
			for i = end; i < len(json) && (json[i] <= ' ' || json[i] == ':'); i++ {
			}
			if i == len(json) {
				return
			}
		} else {
			key.Num++
		}
		value, end := valueAt(json, i, v)
		if !value.Exists() {
			return
		}
		value.Index = i + v.Index
		value.Indexes = v.Indexes
		i = end
		if !fn(key, value) {
			return
		}
	}
}

// member returns obj's first member named key, like obj.Get(key) for a
// plain key, but skipping the other members' values eight bytes at a time
// where gjson reads them byte by byte.
func member(obj gjson.Result, key string) gjson.Result {
	var found gjson.Result
	each(obj, func(k, v gjson.Result) bool {
		if k.Str == key {
			found = v
			return false
		}
		return true
	})
	return found
}

// valueAt reads the value starting at json[i], inside the container
// parent whose Raw json is, and returns it with the index just past it.
func valueAt(json string, i int, parent gjson.Result) (gjson.Result, int) {
	switch json[i] {
	case '{', '[':
		end := -1
		if parent.Indexes != nil {
			// Offsets in spans are the document's; Index is where parent
			// starts in it.
			if e := spanEnd(parent.Indexes, parent.Index+i); e > parent.Index+i && e-parent.Index <= len(json) {
				end = e - parent.Index
			}
		}
		if end < 0 {
			end = skipContainer(json, i)
		}
		return gjson.Result{Type: gjson.JSON, Raw: json[i:end]}, end
	case '"':
		end, esc := skipString(json, i)
		return stringResult(json[i:end], esc, 0), end
	}
	r := gjson.Parse(json[i:]) // a number or literal: gjson reads just that
	return r, i + len(r.Raw)
}

// stringResult is the gjson.Result of the string literal raw; esc tells
// that it holds a backslash.
func stringResult(raw string, esc bool, index int) gjson.Result {
	if len(raw) < 2 || raw[len(raw)-1] != '"' {
		return gjson.Result{}
	}
	if esc {
		r := gjson.Parse(raw) // rare: let gjson unescape
		r.Index = index
		return r
	}
	return gjson.Result{Type: gjson.String, Raw: raw, Str: raw[1 : len(raw)-1], Index: index}
}

func skipSpace(json string, i int) int {
	for i < len(json) && json[i] <= ' ' {
		i++
	}
	return i
}

// skipString returns the index just past the string literal that starts
// with the quote at json[i] (len(json) if it is unterminated), and whether
// the string holds a backslash. It tests eight bytes at a time for a quote
// or a backslash, the bulk of the work on text.
func skipString(json string, i int) (int, bool) {
	esc := false
	for j := i + 1; ; {
		for j+8 <= len(json) {
			x := load64(json, j)
			q, s := x^('"'*swarOnes), x^('\\'*swarOnes)
			if special := ((q-swarOnes)&^q | (s-swarOnes)&^s) & swarHigh; special != 0 {
				j += bits.TrailingZeros64(special) / 8
				break
			}
			j += 8
		}
		if j >= len(json) {
			return len(json), esc
		}
		switch json[j] {
		case '"':
			return j + 1, esc
		case '\\':
			esc = true
			j += 2
		default:
			j++
		}
	}
}

// load64 reads json[i:i+8] as a little-endian word; the compiler turns the
// shifts into one load.
func load64(json string, i int) uint64 {
	s := json[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// skipContainer returns the index just past the object or array that
// starts at json[i]; len(json) if it is unterminated.
func skipContainer(json string, i int) int {
	depth := 0
	for ; i < len(json); i++ {
		switch json[i] {
		case '"':
			end, _ := skipString(json, i)
			i = end - 1
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

// validJSON reports whether b is exactly one JSON value (RFC 8259) nested
// at most MaxDepth deep; UTF-8 is Valid's business. It is one pass with no
// recursion and no allocation, and it tests string contents eight bytes at
// a time: it replaced gjson's validator and the separate depth scan, which
// together were a quarter of a request's translation time. FuzzValidJSON
// holds it to encoding/json.Valid.
func validJSON(b []byte) bool { return validJSONSpans(b, nil) }

// validJSONSpans is validJSON that also appends to *spans, unless spans is
// nil, where each container opens and ends, as containerSpans does: a
// document validated here need not be scanned for them again. On false,
// *spans holds nothing of use.
func validJSONSpans(b []byte, spans *[]int) bool {
	var open [MaxDepth]byte // the bracket of each enclosing container
	var at [MaxDepth]int32  // where in *spans each enclosing container is
	depth := 0
	i := 0
	for {
		// A value must start at b[i].
		i = skipWS(b, i)
		if i == len(b) {
			return false
		}
		switch c := b[i]; c {
		case '{', '[':
			if depth == MaxDepth {
				return false
			}
			if spans != nil {
				at[depth] = int32(len(*spans))
				*spans = append(*spans, i, 0)
			}
			open[depth] = c
			depth++
			if i = skipWS(b, i+1); i == len(b) {
				return false
			}
			if b[i] == c+2 { // '}' is '{'+2, ']' is '['+2
				depth--
				i++
				if spans != nil {
					(*spans)[at[depth]+1] = i
				}
				break
			}
			if c == '{' {
				if i = validKey(b, i); i < 0 {
					return false
				}
			}
			continue
		case '"':
			if i = validString(b, i); i < 0 {
				return false
			}
		case 't':
			if i = validLiteral(b, i, "true"); i < 0 {
				return false
			}
		case 'f':
			if i = validLiteral(b, i, "false"); i < 0 {
				return false
			}
		case 'n':
			if i = validLiteral(b, i, "null"); i < 0 {
				return false
			}
		default:
			if i = validNumber(b, i); i < 0 {
				return false
			}
		}
		// A value ended: close containers, or find the next element.
		for {
			i = skipWS(b, i)
			if depth == 0 {
				return i == len(b)
			}
			if i == len(b) {
				return false
			}
			top := open[depth-1]
			if b[i] == top+2 {
				depth--
				i++
				if spans != nil {
					(*spans)[at[depth]+1] = i
				}
				continue
			}
			if b[i] != ',' {
				return false
			}
			i++
			if top == '{' {
				if i = validKey(b, skipWS(b, i)); i < 0 {
					return false
				}
			}
			break
		}
	}
}

// validKey checks a member name and its colon at b[i]; it returns the
// index after the colon, or -1.
func validKey(b []byte, i int) int {
	if i == len(b) || b[i] != '"' {
		return -1
	}
	if i = validString(b, i); i < 0 {
		return -1
	}
	if i = skipWS(b, i); i == len(b) || b[i] != ':' {
		return -1
	}
	return i + 1
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}

func validLiteral(b []byte, i int, lit string) int {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

const (
	swarOnes = 0x0101010101010101
	swarHigh = 0x8080808080808080
)

// validString checks the string literal whose quote is at b[i] and returns
// the index just past it, or -1: no raw control characters, only JSON's
// escapes.
func validString(b []byte, i int) int {
	i++
	for {
		// Eight bytes at a time while none is a quote, a backslash or a
		// control character: the bulk of a message's text.
		for i+8 <= len(b) {
			x := binary.LittleEndian.Uint64(b[i:])
			q, s := x^('"'*swarOnes), x^('\\'*swarOnes)
			// The lowest flagged byte is exact (no borrow reaches it), so
			// the jump lands on the first special byte.
			special := ((q-swarOnes)&^q | (s-swarOnes)&^s | (x - ' '*swarOnes)) &^ x & swarHigh
			if special != 0 {
				i += bits.TrailingZeros64(special) / 8
				break
			}
			i += 8
		}
		if i == len(b) {
			return -1
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1
		case c < ' ':
			return -1
		case c == '\\':
			if i+1 == len(b) {
				return -1
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if len(b)-i < 6 || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) || !isHex(b[i+5]) {
					return -1
				}
				i += 6
			default:
				return -1
			}
		default:
			i++
		}
	}
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// validNumber checks the number at b[i] and returns the index just past
// it, or -1: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func validNumber(b []byte, i int) int {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i == len(b):
		return -1
	case b[i] == '0':
		i++
	case '1' <= b[i] && b[i] <= '9':
		i = skipDigits(b, i)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		if j := skipDigits(b, i+1); j > i+1 {
			i = j
		} else {
			return -1
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := skipDigits(b, i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

func skipDigits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}
