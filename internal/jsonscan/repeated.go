package jsonscan

import (
	"strings"

	"github.com/tidwall/gjson"
)

// manyKeys is the number of members past which mayRepeatKey stops comparing
// an object's keys one against another (the cost would grow with their
// square) and leaves the verdict to RepeatedKey's exact walk.
const manyKeys = 32

// RepeatedKey returns a key that an object in v (v itself or one within it)
// names twice, and the path to that object: member names (strings, copied)
// and array indexes (ints), outermost first. A google.protobuf.Struct holds
// each key once, and the gateway's readers (gjson: the first) and a peer's
// (ECMAScript, encoding/json: the last) read such an object differently.
// v must come from a UTF-8 document Valid accepted: encoding/json reads
// each invalid byte as U+FFFD, and so takes keys for one that differ here.
func RepeatedKey(v gjson.Result) (key string, path []any, found bool) {
	if (!v.IsObject() && !v.IsArray()) || !mayRepeatKey(v.Raw) {
		return "", nil, false
	}
	return repeatedKey(v)
}

// repeatedKey is RepeatedKey's exact walk, for the rare value mayRepeatKey
// did not clear: a set of keys per object.
func repeatedKey(v gjson.Result) (key string, path []any, found bool) {
	obj := v.IsObject()
	var seen map[string]bool
	if obj {
		seen = map[string]bool{}
	}
	Each(v, func(k, e gjson.Result) bool {
		if obj {
			if seen[k.Str] {
				key, found = strings.Clone(k.Str), true
				return false
			}
			seen[k.Str] = true
		}
		if !e.IsObject() && !e.IsArray() {
			return true
		}
		sub, subPath, ok := repeatedKey(e)
		if !ok {
			return true
		}
		var step any = int(k.Int())
		if obj {
			step = strings.Clone(k.Str)
		}
		key, path, found = sub, append([]any{step}, subPath...), true
		return false
	})
	return key, path, found
}

// mayRepeatKey reports whether an object anywhere in the JSON value raw (one
// Valid accepted) may name a member twice: false means none does. It reads
// raw once, keys compared as strings (unescaped when they hold a
// backslash), and answers true as well, without deciding, for an object of
// more than manyKeys members. Walking every member with Each, as the exact
// walk does, costs several times as much, and almost no document repeats a
// key.
func mayRepeatKey(raw string) bool {
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
