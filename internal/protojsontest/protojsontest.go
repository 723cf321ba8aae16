// Package protojsontest holds A2A 1.0 JSON, in tests, to exactly what
// protojson.Marshal writes for the lf.a2a.v1 proto message it spells (a2a-go
// v2's a2apb is generated from the spec's proto file).
package protojsontest

import (
	"encoding/json"
	"testing"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/a2agate/gateway/internal/jsontest"
)

// Check reads doc strictly as ProtoJSON of m, writes it back with
// protojson.Marshal, and fails t unless the two are the same JSON value. A
// JSON null is JSON-RPC's empty result when m is an Empty.
func Check(t testing.TB, m proto.Message, doc []byte) {
	t.Helper()
	if string(doc) == "null" {
		if _, ok := m.(*emptypb.Empty); ok {
			return
		}
	}
	if err := protojson.Unmarshal(doc, m); err != nil {
		t.Fatalf("not ProtoJSON of %s: %v\n%s", m.ProtoReflect().Descriptor().FullName(), err, doc)
	}
	out, err := protojson.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m.(*a2apb.ListTasksResponse); ok {
		out = withListTasksRequired(t, out)
	}
	if !jsontest.Equal(out, doc) {
		t.Errorf("not what protojson.Marshal writes for %s:\n      got: %s\nprotojson: %s", m.ProtoReflect().Descriptor().FullName(), jsontest.Compact(doc), out)
	}
}

// withListTasksRequired adds the members of a ListTasksResponse that
// protojson.Marshal leaves out at their defaults but the spec requires
// (1.0 §3.1.4; REQUIRED in the proto): the gateway's one exception.
func withListTasksRequired(t testing.TB, out []byte) []byte {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatal(err)
	}
	for k, zero := range map[string]any{"tasks": []any{}, "nextPageToken": "", "pageSize": 0, "totalSize": 0} {
		if _, ok := v[k]; !ok {
			v[k] = zero
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
