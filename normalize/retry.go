package normalize

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/cespare/xxhash/v2"
	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/jsonscan"
)

// AppendSendDigest identifies what a send asks for, for retries: the
// 64-bit xxHash (unseeded, so the same in every process and replica, as
// records are shared) of its params in 1.0 form, as 16 lowercase hex
// digits. The params are written canonically (objects' members sorted by
// name, no whitespace, strings with the fewest escapes), without the
// message id and without the configuration's members that shape the
// answer and not the work (blocking, returnImmediately, historyLength).
// Parts, every other id (context, task, references), metadata, accepted
// output modes and push config count. So a client that re-serialises the
// same message, with its members in another order or other whitespace, is
// still sending the same message.
//
// The digest is no security boundary: keys are scoped by principal, so it
// only tells a principal's retry from its own reuse of a key for another
// message, and a collision only lets that mistake go unnoticed. It is only
// ever compared with the one record under the same key, not among all
// records, so 64 bits make that a 2^-64 chance per reuse; a cryptographic
// hash cost more than the canonical writing itself.
//
// v10 must be valid JSON (the gateway's requests are validated as they are
// read). scratch is room for what is hashed, returned for reuse.
func AppendSendDigest(scratch, v10 []byte) (digest string, room []byte, err error) {
	if i := skipJSONSpace(v10, 0); i == len(v10) || v10[i] != '{' {
		return "", scratch, errors.New("send params are not an object")
	}
	cw := canonWriters.Get().(*canonWriter)
	cw.out = scratch[:0]
	cw.value(v10, 0, canonParams)
	sum := xxhash.Sum64(cw.out)
	room = cw.out
	// The members' names may point into v10: cleared, so the pool keeps
	// no request alive.
	clear(cw.members[:cap(cw.members)])
	cw.out, cw.members = nil, cw.members[:0]
	canonWriters.Put(cw)
	return digestHex(sum), room, nil
}

// digestHex spells sum as 16 lowercase hex digits, big-endian.
func digestHex(sum uint64) string {
	var raw [8]byte
	var text [2 * len(raw)]byte
	binary.BigEndian.PutUint64(raw[:], sum)
	hex.Encode(text[:], raw[:])
	return string(text[:])
}

// canonWriters keep the buffers of digests for reuse.
var canonWriters = sync.Pool{New: func() any { return &canonWriter{members: make([]canonMember, 0, 32)} }}

// canonScope says which members a canonical object leaves out.
type canonScope uint8

const (
	canonAll     canonScope = iota // nothing left out
	canonParams                    // the send's params: descend into message and configuration
	canonMessage                   // params.message: its messageId is left out
	canonConfig                    // params.configuration: the answer-shaping members are left out
)

// canonMember is one member of an object being written: its name, and
// where `"name":value,` was written in out.
type canonMember struct {
	name       string
	start, end int
}

// canonWriter writes a valid JSON document canonically in one pass: each
// object's members are written as they come, then put in order by name in
// place (an object's own bytes only move within it). members is a stack of
// the objects being written; moved is room for the reordering.
type canonWriter struct {
	out     []byte
	members []canonMember
	moved   []byte
}

// value writes the value at doc[i] and returns the index past it.
func (cw *canonWriter) value(doc []byte, i int, scope canonScope) int {
	i = skipJSONSpace(doc, i)
	switch doc[i] {
	case '{':
		return cw.object(doc, i, scope)
	case '[':
		cw.out = append(cw.out, '[')
		i++
		for n := 0; ; n++ {
			i = skipJSONSpace(doc, i)
			if doc[i] == ',' {
				i = skipJSONSpace(doc, i+1)
			}
			if doc[i] == ']' {
				cw.out = append(cw.out, ']')
				return i + 1
			}
			if n > 0 {
				cw.out = append(cw.out, ',')
			}
			i = cw.value(doc, i, canonAll)
		}
	case '"':
		end, escaped := scanJSONString(doc, i)
		if escaped {
			cw.out = appendEscapedString(cw.out, unescapeJSONString(doc[i:end]))
		} else {
			cw.out = append(cw.out, doc[i:end]...)
		}
		return end
	}
	end := i
	for end < len(doc) && !strings.ContainsRune(",]} \t\r\n", rune(doc[end])) {
		end++
	}
	cw.out = append(cw.out, doc[i:end]...)
	return end
}

func (cw *canonWriter) object(doc []byte, i int, scope canonScope) int {
	base, at := len(cw.members), len(cw.out)
	cw.out = append(cw.out, '{')
	i++
	for {
		i = skipJSONSpace(doc, i)
		if doc[i] == ',' {
			i = skipJSONSpace(doc, i+1)
		}
		if doc[i] == '}' {
			i++
			break
		}
		end, escaped := scanJSONString(doc, i)
		start := len(cw.out)
		var name string
		if escaped {
			name = unescapeJSONString(doc[i:end])
			cw.out = appendEscapedString(cw.out, name)
		} else {
			name = jsonscan.String(doc[i+1 : end-1])
			cw.out = append(cw.out, doc[i:end]...)
		}
		cw.out = append(cw.out, ':')
		i = skipJSONSpace(doc, end)
		valueAt := len(cw.out)
		i = cw.value(doc, i+1, childScope(scope, name)) // past the colon
		if leftOut(scope, name) || emptyConfig(scope, name, cw.out[valueAt:]) {
			cw.out = cw.out[:start]
			continue
		}
		cw.out = append(cw.out, ',')
		cw.members = append(cw.members, canonMember{name: name, start: start, end: len(cw.out)})
	}
	if ms := cw.members[base:]; !membersSorted(ms) {
		body := cw.out[at+1:]
		cw.moved = append(cw.moved[:0], body...)
		sortMembers(ms)
		w := body[:0]
		for _, m := range ms {
			w = append(w, cw.moved[m.start-at-1:m.end-at-1]...)
		}
	}
	if len(cw.members) > base {
		cw.out = cw.out[:len(cw.out)-1] // the last member's comma
	}
	cw.out = append(cw.out, '}')
	cw.members = cw.members[:base]
	return i
}

func membersSorted(ms []canonMember) bool {
	for i := 1; i < len(ms); i++ {
		if ms[i].name < ms[i-1].name {
			return false
		}
	}
	return true
}

// sortMembers sorts an object's members by name, keeping the order of
// equal names: an insertion sort, as an object has few members.
func sortMembers(ms []canonMember) {
	for i := 1; i < len(ms); i++ {
		for j := i; j > 0 && ms[j].name < ms[j-1].name; j-- {
			ms[j], ms[j-1] = ms[j-1], ms[j]
		}
	}
}

func leftOut(scope canonScope, name string) bool {
	switch scope {
	case canonMessage:
		return name == "messageId"
	case canonConfig:
		return name == "blocking" || name == "returnImmediately" || name == "historyLength"
	}
	return false
}

// emptyConfig reports whether a member is a configuration left empty by
// leftOut: a send that only says its blocking mode or historyLength asks
// for the same work as one that says nothing.
func emptyConfig(scope canonScope, name string, value []byte) bool {
	return scope == canonParams && name == "configuration" && string(value) == "{}"
}

func childScope(scope canonScope, name string) canonScope {
	if scope != canonParams {
		return canonAll
	}
	switch name {
	case "message":
		return canonMessage
	case "configuration":
		return canonConfig
	}
	return canonAll
}

func skipJSONSpace(doc []byte, i int) int {
	for i < len(doc) && (doc[i] == ' ' || doc[i] == '\t' || doc[i] == '\r' || doc[i] == '\n') {
		i++
	}
	return i
}

// scanJSONString returns the index past the string literal at doc[i], and
// whether it holds an escape.
func scanJSONString(doc []byte, i int) (end int, escaped bool) {
	for j := i + 1; ; {
		q := bytes.IndexByte(doc[j:], '"')
		if q < 0 {
			return len(doc), escaped
		}
		b := bytes.IndexByte(doc[j:j+q], '\\')
		if b < 0 {
			return j + q + 1, escaped
		}
		escaped = true
		j += b + 2
	}
}

// unescapeJSONString is the value of a string literal that holds an
// escape. One without escapes is its own canonical form already (a valid
// document holds no quote, backslash or control byte unescaped), so only
// an escaped one is decoded and written anew.
func unescapeJSONString(literal []byte) string {
	return gjson.Parse(jsonscan.String(literal)).Str
}

// appendEscapedString writes s as a string literal with only the escapes
// JSON requires.
func appendEscapedString(dst []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; {
		case ch == '"' || ch == '\\':
			dst = append(dst, '\\', ch)
		case ch < ' ':
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[ch>>4], hexDigits[ch&0xf])
		default:
			dst = append(dst, ch)
		}
	}
	return append(dst, '"')
}

// GetTaskParams are the params of a GetTask call for id, the same in both
// dialects.
func GetTaskParams(id string) []byte {
	quoted, _ := json.Marshal(id) // a string always marshals
	return append(append(append(make([]byte, 0, len(quoted)+8), `{"id":`...), quoted...), '}')
}

// SendResultOfTask wraps a task (a GetTask result in dialect d) as a send's
// result: 1.0 names the task member, 0.x answers the task itself. The
// result is a copy.
func SendResultOfTask(d dialect.ID, task []byte) []byte {
	if d != dialect.V10 {
		return slices.Clone(task)
	}
	return append(append(append(make([]byte, 0, len(task)+9), `{"task":`...), task...), '}')
}
