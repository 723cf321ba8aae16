package proxy

import (
	"net/http"
	"strings"
	"testing"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/protojsontest"
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
		protojsontest.Check(t, &a2apb.SendMessageResponse{}, []byte(sent.Raw))
		id := c.task(t, sent).Get("id").Str
		protojsontest.Check(t, &a2apb.Task{}, []byte(mustResult(t, g.call("2", "GetTask", `{"id":"`+id+`"}`)).Raw))
		protojsontest.Check(t, &a2apb.Task{}, []byte(mustResult(t, g.call("3", "GetTask", `{"id":"`+id+`","historyLength":0}`)).Raw))
		// A ListTasksResponse keeps the members the spec requires at zero
		// values (the one exception); its tasks are ProtoJSON.
		list := mustResult(t, g.call("4", "ListTasks", `{}`))
		for _, k := range []string{"tasks", "nextPageToken", "pageSize", "totalSize"} {
			if !list.Get(k).Exists() {
				t.Errorf("ListTasks result lacks the required %s: %s", k, list.Raw)
			}
		}
		protojsontest.Check(t, &a2apb.ListTasksResponse{}, []byte(list.Raw))
		s := g.stream("5", "SendStreamingMessage", c.send("m2", c.text("stream me"), ""))
		events := s.all()
		if len(events) == 0 {
			t.Fatal("no stream events")
		}
		for _, ev := range events {
			protojsontest.Check(t, &a2apb.StreamResponse{}, []byte(mustResult(t, ev).Raw))
		}
		req, _ := http.NewRequest(http.MethodGet, strings.TrimSuffix(g.url, "/")+"/.well-known/agent-card.json", nil)
		req.Header.Set("A2A-Version", "1.0")
		_, card := roundTrip(t, req)
		protojsontest.Check(t, &a2apb.AgentCard{}, card)
	})
}
