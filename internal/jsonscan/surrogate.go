package jsonscan

import (
	"bytes"
	"unicode/utf16"
)

// NextLoneSurrogate returns the index in raw, from from on, of the next \u
// escape of a lone UTF-16 surrogate (a high one with no low one after it,
// or a low one alone), or -1. JSON allows such escapes (RFC 8259 §8.2), but
// they stand for no character: encoding/json reads each as U+FFFD and
// protojson refuses them. Escapes occur only inside strings, so the scan
// needs no more of the JSON than its backslashes.
func NextLoneSurrogate(raw []byte, from int) int {
	for i := from; i < len(raw); i++ {
		j := bytes.IndexByte(raw[i:], '\\')
		if j < 0 {
			return -1
		}
		i += j
		r, ok := escapedRune(raw, i)
		switch {
		case !ok:
			i++ // another escape: its second byte is no backslash to read
		case !utf16.IsSurrogate(r):
			i += 5
		case r < 0xdc00:
			if lo, ok := escapedRune(raw, i+6); ok && lo >= 0xdc00 && lo <= 0xdfff {
				i += 11 // a pair: one character
				continue
			}
			return i
		default:
			return i
		}
	}
	return -1
}

// ReplaceLoneSurrogates returns raw with each \u escape of a lone UTF-16
// surrogate replaced by \ufffd, the character encoding/json reads it as;
// raw itself when it holds none.
func ReplaceLoneSurrogates(raw []byte) []byte {
	i := NextLoneSurrogate(raw, 0)
	if i < 0 {
		return raw
	}
	out := bytes.Clone(raw)
	for ; i >= 0; i = NextLoneSurrogate(out, i+6) {
		copy(out[i:i+6], `\ufffd`)
	}
	return out
}

// escapedRune reads the \uXXXX escape at raw[i:], if there is one,
// without strconv, whose error for a bad escape would allocate the text.
func escapedRune(raw []byte, i int) (rune, bool) {
	if i+6 > len(raw) || raw[i] != '\\' || raw[i+1] != 'u' {
		return 0, false
	}
	var r rune
	for _, c := range raw[i+2 : i+6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
