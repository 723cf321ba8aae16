package normalize

import (
	"fmt"

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/internal/jsonscan"
)

// wantStruct checks that v, member name, is absent or an object fit for a
// google.protobuf.Struct (every metadata member): see uniqueKeys.
func wantStruct(v gjson.Result, name string) error {
	if err := wantObject(v, name); err != nil || !v.Exists() {
		return err
	}
	return at(uniqueKeys(v), name)
}

// uniqueKeys fails when v, or an object anywhere inside it, names a member
// twice. Such an object is a map in the proto (Struct, Value) that the
// gateway's readers (gjson: the first) and a peer's (ECMAScript, encoding/json:
// the last) read differently, and that protojson, hence every gRPC caller,
// refuses outright. It is refused where normalize reads the bytes, toward the
// peer that sent them, so every binding gives the same answer, naming the key.
func uniqueKeys(v gjson.Result) error {
	if (!v.IsObject() && !v.IsArray()) || !jsonscan.MayRepeatKey(v.Raw) {
		return nil
	}
	return repeatedKey(v)
}

// repeatedKey is uniqueKeys' exact walk, which names the key and its path.
func repeatedKey(v gjson.Result) error {
	if !v.IsObject() && !v.IsArray() {
		return nil
	}
	obj := v.IsObject()
	var err error
	var few [8]string // the names seen, while they are few
	var many map[string]struct{}
	n := 0
	jsonscan.Each(v, func(k, e gjson.Result) bool {
		if obj {
			if repeated(k.Str, few[:min(n, len(few))], many) {
				err = fail("repeats key %.128q (a google.protobuf.Struct holds each key once)", k.Str)
				return false
			}
			switch {
			case n < len(few):
				few[n] = k.Str
			case many == nil:
				many = make(map[string]struct{}, 2*len(few))
				for _, s := range few {
					many[s] = struct{}{}
				}
				fallthrough
			default:
				many[k.Str] = struct{}{}
			}
			n++
		}
		if e.IsObject() || e.IsArray() {
			if err = repeatedKey(e); err != nil {
				if obj {
					err = at(err, fmt.Sprintf("%.64s", k.Str)) // a copy: k is a view of the body
				} else {
					err = atIndex(err, int(k.Int()))
				}
				return false
			}
		}
		return true
	})
	return err
}

func repeated(k string, few []string, many map[string]struct{}) bool {
	if many != nil {
		_, ok := many[k]
		return ok
	}
	for _, s := range few {
		if s == k {
			return true
		}
	}
	return false
}
