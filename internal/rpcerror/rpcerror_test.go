package rpcerror

import (
	"reflect"
	"testing"

	"github.com/tidwall/gjson"
)

func TestParse(t *testing.T) {
	t.Parallel()
	e := Parse(gjson.Parse(`{"code":-32001,"data":[
		"not an object",
		{"@type":"type.googleapis.com/google.rpc.ErrorInfo","domain":"a2a-protocol.org","reason":"MINE","metadata":{"taskId":"t1","n":2}},
		{"@type":"type.googleapis.com/google.rpc.ErrorInfo","domain":"a2a-protocol.org","reason":"SECOND"},
		{"@type":"type.googleapis.com/google.rpc.BadRequest"}]}`))
	if e.Code != -32001 || e.Reason != "MINE" || e.Message == "" {
		t.Fatalf("code, reason, message = %d, %q, %q; want -32001, MINE and the code's message", e.Code, e.Reason, e.Message)
	}
	if want := map[string]string{"taskId": "t1", "n": "2"}; !reflect.DeepEqual(e.Metadata, want) {
		t.Fatalf("metadata = %v, want %v", e.Metadata, want)
	}
	if len(e.Details) != 2 || e.Details[0].Get("reason").Str != "SECOND" {
		t.Fatalf("details = %v, want the second ErrorInfo and the BadRequest", e.Details)
	}

	legacy := Parse(gjson.Parse(`{"code":-1,"message":"m","data":{"id":"t2"}}`))
	if legacy.Reason != "" || legacy.Message != "m" || !reflect.DeepEqual(legacy.Metadata, map[string]string{"id": "t2"}) {
		t.Fatalf("0.x data = %+v, want no reason, message m, metadata id=t2", legacy)
	}
}
