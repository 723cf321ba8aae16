package proxy

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"github.com/tidwall/gjson"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/a2agate/gateway/dialect"
)

// TestV10AnswersAreProtoJSON: what a 1.0 caller gets, from a backend of
// either dialect, is exactly what protojson.Marshal writes for the proto
// message (a2a-go v2's lf.a2a.v1 types): no default-valued members, enums
// by name; ListTasks keeps the members its spec requires. Each answer is read strictly into its message, written back and
// compared as a JSON value.
func TestV10AnswersAreProtoJSON(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backendKind) {
		g := newGateway(t, b.handler(t, nil), b.version)
		c := caller{dialect.V10}
		sent := mustResult(t, g.call("1", "SendMessage", c.send("m1", c.text("hello"), "")))
		checkProtoJSONValue(t, &a2apb.SendMessageResponse{}, sent.Raw)
		id := c.task(t, sent).Get("id").Str
		checkProtoJSONValue(t, &a2apb.Task{}, mustResult(t, g.call("2", "GetTask", `{"id":"`+id+`"}`)).Raw)
		checkProtoJSONValue(t, &a2apb.Task{}, mustResult(t, g.call("3", "GetTask", `{"id":"`+id+`","historyLength":0}`)).Raw)
		// A ListTasksResponse keeps the members the spec requires at zero
		// values (the one exception); its tasks are ProtoJSON.
		list := mustResult(t, g.call("4", "ListTasks", `{}`))
		for _, k := range []string{"tasks", "nextPageToken", "pageSize", "totalSize"} {
			if !list.Get(k).Exists() {
				t.Errorf("ListTasks result lacks the required %s: %s", k, list.Raw)
			}
		}
		if err := protojson.Unmarshal([]byte(list.Raw), &a2apb.ListTasksResponse{}); err != nil {
			t.Errorf("ListTasks result is not ProtoJSON: %v", err)
		}
		for _, task := range list.Get("tasks").Array() {
			checkProtoJSONValue(t, &a2apb.Task{}, task.Raw)
		}
		s := g.stream("5", "SendStreamingMessage", c.send("m2", c.text("stream me"), ""))
		events := s.all()
		if len(events) == 0 {
			t.Fatal("no stream events")
		}
		for _, ev := range events {
			checkProtoJSONValue(t, &a2apb.StreamResponse{}, mustResult(t, ev).Raw)
		}
		req, _ := http.NewRequest(http.MethodGet, strings.TrimSuffix(g.url, "/")+"/.well-known/agent-card.json", nil)
		req.Header.Set("A2A-Version", "1.0")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var card json.RawMessage
		if err := json.NewDecoder(res.Body).Decode(&card); err != nil {
			t.Fatal(err)
		}
		checkProtoJSONValue(t, &a2apb.AgentCard{}, string(card))
	})
}

func checkProtoJSONValue(t *testing.T, m proto.Message, doc string) {
	t.Helper()
	if err := protojson.Unmarshal([]byte(doc), m); err != nil {
		t.Fatalf("not ProtoJSON of %s: %v\n%s", m.ProtoReflect().Descriptor().FullName(), err, doc)
	}
	out, err := protojson.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var x, y any
	if json.Unmarshal(out, &x) != nil || json.Unmarshal([]byte(doc), &y) != nil || !reflect.DeepEqual(x, y) {
		t.Errorf("not what protojson.Marshal writes for %s:\n   got: %s\nproto: %s", m.ProtoReflect().Descriptor().FullName(), gjson.Parse(doc).Raw, out)
	}
}
