// Package jsonscan is the JSON scanner under the translators: a validator
// (RFC 8259, bounded depth, no allocation) and a walk over gjson values that
// skips string contents eight bytes at a time, where gjson reads them byte by
// byte. Both are held to a reference (encoding/json.Valid, gjson's ForEach) by
// their fuzz targets.
package jsonscan

import (
	"math/bits"
	"unsafe"

	"github.com/tidwall/gjson"
)

// String views b as a string without copying. The translators only read their
// input and every gjson.Result they keep points into it, so the input must
// not change while a translation runs; callers never hand us a buffer they
// write to concurrently.
func String(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// Parse returns the gjson view of an already validated document.
func Parse(b []byte) gjson.Result { return gjson.Parse(String(b)) }

// Each calls fn for every member (key, value) of the object v, or every
// element (index, value) of the array v, exactly as gjson's ForEach does,
// which it replaces on the translation paths: gjson scans string contents
// byte by byte, Each (skipString) eight bytes at a time, and text is most
// of a message's bytes. Every nesting level is walked again by the level
// below, so that scan dominated translation time. v must come from a
// document Valid accepted; on anything else Each stops early or reports
// odd values, but never panics. FuzzEach holds it to gjson's results.
func Each(v gjson.Result, fn func(key, value gjson.Result) bool) {
	each(nil, v, fn)
}

// each is Each, stepping over the containers spans knows by lookup.
func each(spans *Spans, v gjson.Result, fn func(key, value gjson.Result) bool) {
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
		value, end := valueAt(spans, json, i)
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

// Member returns obj's first member named key, like obj.Get(key) for a
// plain key, but skipping the other members' values eight bytes at a time
// where gjson reads them byte by byte.
func Member(obj gjson.Result, key string) gjson.Result {
	var found gjson.Result
	Each(obj, func(k, v gjson.Result) bool {
		if k.Str == key {
			found = v
			return false
		}
		return true
	})
	return found
}

// valueAt reads the value starting at json[i] and returns it with the
// index just past it; spans, when not nil, may know where a container ends.
func valueAt(spans *Spans, json string, i int) (gjson.Result, int) {
	switch json[i] {
	case '{', '[':
		end := spans.end(json, i)
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
