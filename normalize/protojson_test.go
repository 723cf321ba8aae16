package normalize

import (
	"bufio"
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"github.com/tidwall/gjson"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/jsontest"
)

// The 1.0 wire form is ProtoJSON of the lf.a2a.v1 proto (a2a-go v2's a2apb
// is generated from the same file as /work/shared/spec/a2a-v1.0.1.proto).
// TestGoldensAreProtoJSON holds every 1.0 golden the gateway emits or treats
// as canonical to exactly what protojson.Marshal writes for it: no
// default-valued fields (empty arrays, false, 0, ""), enums by name, but
// for the members of a ListTasksResponse the spec requires at their zero
// values. The proto has no int64 field, so no number is written as a
// string.
//
// Covered: the 1.0 side of every two-way pair and every expected 1.0 output
// (.to-v10.json) under testdata/request, result and event; the data lines of
// proxy's 1.0 stream goldens; agentcard's canonical and 1.0 cards. Not
// covered: 1.0 inputs that are deliberately lenient or invalid (they have
// a .to-v10.json or an .err), and errors (JSON-RPC error objects, not proto
// messages).
func TestGoldensAreProtoJSON(t *testing.T) {
	for _, dir := range []string{"request", "result", "event"} {
		for _, file := range protoJSONGoldens(t, dir) {
			t.Run(dir+"/"+filepath.Base(file), func(t *testing.T) {
				doc := goldenFile(t, file)
				switch dir {
				case "request":
					r := gjson.ParseBytes(doc)
					_, op, ok := dialect.Lookup(r.Get("method").Str)
					if !ok {
						t.Fatalf("unknown method %q", r.Get("method").Str)
					}
					if p := r.Get("params"); p.Exists() {
						checkProtoJSON(t, requestMessage(t, op), []byte(p.Raw))
					}
				case "result":
					op, ok := opFromName(file)
					if !ok {
						t.Fatalf("%s: no operation in the name", file)
					}
					checkProtoJSON(t, resultMessage(t, op), doc)
				case "event":
					checkProtoJSON(t, &a2apb.StreamResponse{}, doc)
				}
			})
		}
	}
	streams, _ := filepath.Glob("../proxy/testdata/stream/*.v10.sse")
	cards, _ := filepath.Glob("../agentcard/testdata/card/*.v10.json")
	canon, _ := filepath.Glob("../agentcard/testdata/card/*.canon.json")
	if len(streams) == 0 || len(cards) == 0 || len(canon) == 0 {
		t.Fatal("proxy's stream goldens or agentcard's card goldens are missing")
	}
	for _, file := range streams {
		t.Run("stream/"+filepath.Base(file), func(t *testing.T) {
			sc := bufio.NewScanner(bytes.NewReader(goldenFile(t, file)))
			for sc.Scan() {
				if data, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
					r := gjson.Parse(data)
					checkProtoJSON(t, &a2apb.StreamResponse{}, []byte(r.Get("result").Raw))
				}
			}
		})
	}
	for _, file := range append(cards, canon...) {
		t.Run("card/"+filepath.Base(file), func(t *testing.T) {
			checkProtoJSON(t, &a2apb.AgentCard{}, goldenFile(t, file))
		})
	}
}

// protoJSONGoldens lists the 1.0 files of dir that must be ProtoJSON.
func protoJSONGoldens(t *testing.T, dir string) []string {
	t.Helper()
	seen := map[string]bool{}
	var files []string
	add := func(f string) {
		if !seen[f] {
			seen[f] = true
			files = append(files, f)
		}
	}
	for _, g := range goldenCases(t, dir) {
		switch {
		case g.want != "" && g.to == dialect.V10:
			add(g.want)
		case g.pair && g.from == dialect.V10:
			add(g.in)
		}
	}
	return files
}

func requestMessage(t *testing.T, op dialect.Op) proto.Message {
	switch op {
	case dialect.SendMessage, dialect.SendStreamingMessage:
		return &a2apb.SendMessageRequest{}
	case dialect.GetTask:
		return &a2apb.GetTaskRequest{}
	case dialect.ListTasks:
		return &a2apb.ListTasksRequest{}
	case dialect.CancelTask:
		return &a2apb.CancelTaskRequest{}
	case dialect.SubscribeToTask:
		return &a2apb.SubscribeToTaskRequest{}
	case dialect.CreatePushConfig:
		return &a2apb.TaskPushNotificationConfig{}
	case dialect.GetPushConfig:
		return &a2apb.GetTaskPushNotificationConfigRequest{}
	case dialect.ListPushConfigs:
		return &a2apb.ListTaskPushNotificationConfigsRequest{}
	case dialect.DeletePushConfig:
		return &a2apb.DeleteTaskPushNotificationConfigRequest{}
	case dialect.GetExtendedCard:
		return &a2apb.GetExtendedAgentCardRequest{}
	}
	t.Fatalf("no request message for %s", op)
	return nil
}

func resultMessage(t *testing.T, op dialect.Op) proto.Message {
	switch op {
	case dialect.SendMessage:
		return &a2apb.SendMessageResponse{}
	case dialect.GetTask, dialect.CancelTask:
		return &a2apb.Task{}
	case dialect.ListTasks:
		return &a2apb.ListTasksResponse{}
	case dialect.CreatePushConfig, dialect.GetPushConfig:
		return &a2apb.TaskPushNotificationConfig{}
	case dialect.ListPushConfigs:
		return &a2apb.ListTaskPushNotificationConfigsResponse{}
	case dialect.DeletePushConfig:
		return &emptypb.Empty{}
	case dialect.GetExtendedCard:
		return &a2apb.AgentCard{}
	}
	t.Fatalf("no result message for %s", op)
	return nil
}

// checkProtoJSON reads doc strictly as ProtoJSON of m, writes it back with
// protojson.Marshal, and fails unless the two are the same JSON value.
func checkProtoJSON(t *testing.T, m proto.Message, doc []byte) {
	t.Helper()
	if string(doc) == "null" {
		if _, ok := m.(*emptypb.Empty); ok {
			return // JSON-RPC's empty result, not a message
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
		t.Errorf("not what protojson.Marshal writes for %s:\n golden: %s\nprotojson: %s", m.ProtoReflect().Descriptor().FullName(), jsontest.Compact(doc), out)
	}
}

// withListTasksRequired adds the members of a ListTasksResponse that
// protojson.Marshal leaves out at their defaults but the spec requires
// (1.0 §3.1.4; REQUIRED in the proto): the gateway's one exception.
func withListTasksRequired(t *testing.T, out []byte) []byte {
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
