// Package rpcerror reads the JSON-RPC error object the core answers with (the
// 1.0 wire form) into the parts of a google.rpc.Status, which the REST and
// gRPC bindings both answer with.
package rpcerror

import (
	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/dialect"
)

// Error is one JSON-RPC error object, read.
type Error struct {
	Code int
	// Message is the error's message, or its code's standard one when empty.
	Message string
	// Reason is the reason of the first A2A ErrorInfo in data, else the
	// code's; "" when neither names one.
	Reason string
	// Metadata is that ErrorInfo's metadata, or the members of a 0.x-shaped
	// data object.
	Metadata map[string]string
	// Details are data's other objects, in order: the further details.
	Details []gjson.Result
}

// Parse reads the error object obj.
func Parse(obj gjson.Result) Error {
	e := Error{Code: int(obj.Get("code").Int()), Message: obj.Get("message").String()}
	if row, ok := dialect.ErrorByCode(e.Code); ok {
		e.Reason = row.Reason
		if e.Message == "" {
			e.Message = row.Message
		}
	}
	data := obj.Get("data")
	switch {
	case data.IsArray():
		seen := false
		for _, d := range data.Array() {
			if !d.IsObject() {
				continue
			}
			if d.Get("@type").Str == dialect.ErrorInfoType && d.Get("domain").Str == dialect.Domain && !seen {
				seen = true
				if r := d.Get("reason").Str; r != "" {
					e.Reason = r
				}
				e.Metadata = stringMap(d.Get("metadata"))
				continue
			}
			e.Details = append(e.Details, d)
		}
	case data.IsObject():
		// A 0.x-shaped data object: its members become ErrorInfo metadata.
		e.Metadata = stringMap(data)
	}
	return e
}

// stringMap reads a JSON object as ErrorInfo metadata, whose values are
// strings: other values keep their JSON text.
func stringMap(obj gjson.Result) map[string]string {
	if !obj.IsObject() {
		return nil
	}
	m := map[string]string{}
	obj.ForEach(func(k, v gjson.Result) bool {
		if v.Type == gjson.String {
			m[k.String()] = v.Str
		} else {
			m[k.String()] = v.Raw
		}
		return true
	})
	if len(m) == 0 {
		return nil
	}
	return m
}
