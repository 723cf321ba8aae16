package agent10

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
)

// checkKeys reports the first key of data, in sorted order at each level,
// that type t has no JSON field for, at any depth. It makes the agent as
// strict as the Python 1.0 server, whose protobuf ParseDict rejects unknown
// fields, so that any 0.x key a peer leaks into a 1.0 request (kind, final,
// blocking, mimeType, ...) fails with -32602 instead of being ignored.
//
// Keys must match a field name exactly. ProtoJSON parsers also accept the
// original proto names (context_id); this agent does not, which is
// stricter, on purpose: 1.0 peers are expected to write lowerCamelCase.
//
// Values of the wrong JSON type are left for the decoder to report.
func checkKeys(data []byte, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if isLeaf(t) {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		var fields map[string]json.RawMessage
		if json.Unmarshal(data, &fields) != nil {
			return nil
		}
		known := jsonFields(t)
		for _, k := range slices.Sorted(maps.Keys(fields)) {
			ft, ok := known[k]
			if !ok {
				return fmt.Errorf("%s: unknown field %q", path, k)
			}
			if err := checkKeys(fields[k], ft, path+"."+k); err != nil {
				return err
			}
		}
	case reflect.Slice:
		var items []json.RawMessage
		if json.Unmarshal(data, &items) != nil {
			return nil
		}
		for i, item := range items {
			if err := checkKeys(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

var (
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	rawMessageType  = reflect.TypeFor[json.RawMessage]()
)

// isLeaf reports whether values of t are checked by their own decoder, or
// are free JSON (google.protobuf.Value and Struct).
func isLeaf(t reflect.Type) bool {
	return t == rawMessageType || t.Kind() == reflect.Interface ||
		reflect.PointerTo(t).Implements(unmarshalerType)
}

var fieldCache sync.Map // reflect.Type -> map[string]reflect.Type

// jsonFields maps the JSON names of t's fields to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	if m, ok := fieldCache.Load(t); ok {
		return m.(map[string]reflect.Type)
	}
	m := make(map[string]reflect.Type, t.NumField())
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" && name != "-" {
			m[name] = f.Type
		}
	}
	fieldCache.Store(t, m)
	return m
}
