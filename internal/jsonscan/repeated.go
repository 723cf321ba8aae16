package jsonscan

import "github.com/tidwall/gjson"

// manyKeys is the number of members past which MayRepeatKey stops comparing
// an object's keys one against another (the cost would grow with their
// square) and leaves the verdict to a caller's exact check.
const manyKeys = 32

// MayRepeatKey reports whether an object anywhere in the JSON value raw (one
// Valid accepted) may name a member twice: false means none does. It reads
// raw once, keys compared as strings (unescaped when they hold a
// backslash), and answers true as well, without deciding, for an object of
// more than manyKeys members. It is the cheap test in front of an exact
// check that names the key and where it is: walking every member with Each
// costs several times as much, and almost no document repeats a key.
func MayRepeatKey(raw string) bool {
	var keyBuf [manyKeys]string
	var openBuf [16]int
	keys := keyBuf[:0]   // the keys of the open objects, innermost last
	opens := openBuf[:0] // where each open object's keys start in keys; -1 for an array
	for i := 0; i < len(raw); {
		switch raw[i] {
		case '{':
			opens = append(opens, len(keys))
		case '[':
			opens = append(opens, -1)
		case '}', ']':
			if len(opens) == 0 {
				return false
			}
			if start := opens[len(opens)-1]; start >= 0 {
				keys = keys[:start]
			}
			opens = opens[:len(opens)-1]
		case '"':
			end, esc := skipString(raw, i)
			if len(opens) == 0 || opens[len(opens)-1] < 0 {
				i = end
				continue
			}
			j := skipSpace(raw, end)
			if j == len(raw) || raw[j] != ':' {
				i = end // a value
				continue
			}
			k := raw[min(i+1, end):max(i+1, end-1)]
			if esc {
				k = gjson.Parse(raw[i:end]).Str
			}
			own := keys[opens[len(opens)-1]:]
			if len(own) == manyKeys {
				return true
			}
			for _, s := range own {
				if s == k {
					return true
				}
			}
			keys = append(keys, k)
			i = j + 1
			continue
		}
		i++
	}
	return false
}
