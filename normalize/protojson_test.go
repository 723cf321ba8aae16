package normalize

import (
	"bufio"
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"github.com/tidwall/gjson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/protojsontest"
	"github.com/a2agate/gateway/internal/testfiles"
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
						protojsontest.Check(t, requestMessage(t, op), []byte(p.Raw))
					}
				case "result":
					op, ok := opFromName(file)
					if !ok {
						t.Fatalf("%s: no operation in the name", file)
					}
					protojsontest.Check(t, resultMessage(t, op), doc)
				case "event":
					protojsontest.Check(t, &a2apb.StreamResponse{}, doc)
				}
			})
		}
	}
	streams := testfiles.Glob(t, "../proxy/testdata/stream/*.v10.sse")
	cards := testfiles.Glob(t, "../agentcard/testdata/card/*.v10.json")
	canon := testfiles.Glob(t, "../agentcard/testdata/card/*.canon.json")
	for _, file := range streams {
		t.Run("stream/"+filepath.Base(file), func(t *testing.T) {
			sc := bufio.NewScanner(bytes.NewReader(goldenFile(t, file)))
			for sc.Scan() {
				if data, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
					r := gjson.Parse(data)
					protojsontest.Check(t, &a2apb.StreamResponse{}, []byte(r.Get("result").Raw))
				}
			}
		})
	}
	for _, file := range append(cards, canon...) {
		t.Run("card/"+filepath.Base(file), func(t *testing.T) {
			protojsontest.Check(t, &a2apb.AgentCard{}, goldenFile(t, file))
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
