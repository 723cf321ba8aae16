package jsonscan

import (
	"encoding/binary"
	"math/bits"
)

// MaxDepth bounds how deeply a document may nest. ProtoJSON parsers stop at
// 100 as well; the bound also keeps validation off deep stacks.
const MaxDepth = 100

// Valid reports whether b is exactly one JSON value (RFC 8259) nested at
// most MaxDepth deep; UTF-8 is the caller's business. It is one pass with no
// recursion and no allocation, and it tests string contents eight bytes at
// a time: it replaced gjson's validator and the separate depth scan, which
// together were a quarter of a request's translation time. FuzzValid
// holds it to encoding/json.Valid.
func Valid(b []byte) bool { return valid(b, nil) }

// valid is Valid, recording in spans, when not nil, where containers end.
func valid(b []byte, spans *Spans) bool {
	var open [MaxDepth]byte  // the bracket of each enclosing container
	var slot [MaxDepth]int32 // and its slot in spans
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
			if i+1 < len(b) && b[i+1] == c+2 { // '}' is '{'+2, ']' is '['+2
				i += 2 // empty, and too short to record
				break
			}
			if spans != nil {
				slot[depth] = int32(spans.open(i))
			}
			open[depth] = c
			depth++
			if i = skipWS(b, i+1); i == len(b) {
				return false
			}
			if b[i] == c+2 {
				depth--
				i++
				if spans != nil {
					spans.close(int(slot[depth]), i)
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
			bracket := open[depth-1]
			if b[i] == bracket+2 {
				depth--
				i++
				if spans != nil {
					spans.close(int(slot[depth]), i)
				}
				continue
			}
			if b[i] != ',' {
				return false
			}
			i++
			if bracket == '{' {
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

// DepthOK reports whether b nests at most MaxDepth deep, without recursion,
// valid or not: it tells a too-deep document from a malformed one.
func DepthOK(b []byte) bool {
	depth := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			end, _ := skipString(String(b), i)
			i = end - 1
		case '{', '[':
			if depth++; depth > MaxDepth {
				return false
			}
		case '}', ']':
			depth--
		}
	}
	return true
}
