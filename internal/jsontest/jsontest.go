// Package jsontest compares JSON documents in tests, as values rather than
// as bytes.
package jsontest

import (
	"bytes"
	"encoding/json"
	"reflect"
)

// Equal reports whether a and b are the same JSON value: members in any
// order, numbers compared as the float64 encoding/json decodes them to (so
// 1.5e10 equals 15000000000). It is false when either is not JSON.
func Equal(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// Compact is b without insignificant space, or b unchanged when it is not
// JSON: for failure messages.
func Compact(b []byte) string {
	var out bytes.Buffer
	if json.Compact(&out, b) != nil {
		return string(b)
	}
	return out.String()
}
