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
// twice (jsonscan.RepeatedKey). Such an object is a map in the proto
// (Struct, Value) that protojson, hence every gRPC caller, refuses outright.
// It is refused where normalize reads the bytes, toward the peer that sent
// them, so every binding gives the same answer, naming the key.
func uniqueKeys(v gjson.Result) error {
	key, path, found := jsonscan.RepeatedKey(v)
	if !found {
		return nil
	}
	err := fail("repeats key %.128q (a google.protobuf.Struct holds each key once)", key)
	for i := len(path) - 1; i >= 0; i-- {
		switch step := path[i].(type) {
		case int:
			err = atIndex(err, step)
		case string:
			err = at(err, fmt.Sprintf("%.64s", step))
		}
	}
	return err
}
