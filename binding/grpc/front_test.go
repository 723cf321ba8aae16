package grpcbind

import (
	"cmp"
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"github.com/tidwall/gjson"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/a2agate/gateway/dialect"
)

// core is a stand-in for the JSON-RPC core: it records the request it is
// given and writes a canned answer.
type core struct {
	req    *http.Request
	body   []byte
	status int
	header http.Header
	answer string
}

func (c *core) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.req = r
	c.body, _ = io.ReadAll(r.Body)
	for k, v := range c.header {
		w.Header()[k] = v
	}
	if c.status == 0 {
		c.status = http.StatusOK
	}
	w.WriteHeader(c.status)
	_, _ = io.WriteString(w, c.answer)
}

// TestRequestIsCanonicalJSONRPC: the JSON-RPC request made of an RPC.
func TestRequestIsCanonicalJSONRPC(t *testing.T) {
	c := &core{answer: `{"jsonrpc":"2.0","id":1,"result":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING"},"futureField":true}}`}
	s := &service{rpc: c, path: "/agent"}
	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs(
		":authority", "gw.example:443", "authorization", "Bearer tok", "a2a-extensions", "urn:x",
		"grpc-timeout", "1S", "te", "trailers", "content-type", "application/grpc", "trace-bin", "\x00"))
	n := int32(2)
	task, err := s.GetTask(ctx, &a2apb.GetTaskRequest{Id: "t1", HistoryLength: &n})
	if err != nil {
		t.Fatal(err)
	}
	if task.GetId() != "t1" || task.GetStatus().GetState() != a2apb.TaskState_TASK_STATE_WORKING {
		t.Fatalf("result %v", task)
	}
	b := gjson.ParseBytes(c.body)
	if b.Get("jsonrpc").Str != "2.0" || b.Get("method").Str != "GetTask" || b.Get("params.id").Str != "t1" || b.Get("params.historyLength").Int() != 2 || b.Get("params.history_length").Exists() {
		t.Fatalf("body %s", c.body)
	}
	r := c.req
	if r.Method != http.MethodPost || r.URL.Path != "/agent" || r.Host != "gw.example:443" {
		t.Fatalf("request %s %s host %s", r.Method, r.URL.Path, r.Host)
	}
	want := map[string]string{"Authorization": "Bearer tok", "A2a-Extensions": "urn:x", "A2a-Version": "1.0", "Content-Type": "application/json", "Accept": "application/json"}
	for k, v := range want {
		if got := r.Header.Get(k); got != v {
			t.Errorf("header %s = %q, want %q", k, got, v)
		}
	}
	for _, k := range []string{"Grpc-Timeout", "Te", "Trace-Bin", ":authority"} {
		if _, ok := r.Header[k]; ok {
			t.Errorf("gRPC framing %s became a header", k)
		}
	}
	if md, _ := metadata.FromIncomingContext(r.Context()); md.Get("authorization")[0] != "Bearer tok" {
		t.Error("the request does not carry the RPC's context")
	}
	if b, d := dialect.BindingOf(r.Context()), dialect.CallerDialectOf(r.Context()); b != dialect.GRPC || d != 0 {
		t.Errorf("the request is marked binding %v caller dialect %v, want grpc and none (a 1.0 call)", b, d)
	}
}

// TestUnaryAnswers: results, errors and broken answers of the core.
func TestUnaryAnswers(t *testing.T) {
	c := &core{answer: `{"jsonrpc":"2.0","id":1,"result":{}}`}
	s := &service{rpc: c, path: "/"}
	if _, err := s.DeleteTaskPushNotificationConfig(context.Background(), &a2apb.DeleteTaskPushNotificationConfigRequest{TaskId: "t", Id: "c"}); err != nil {
		t.Fatal(err)
	}
	for _, a := range []struct {
		answer string
		status int
		code   codes.Code
		reason string
	}{
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"Task not found"}}`, 200, codes.NotFound, "TASK_NOT_FOUND"},
		{`{"jsonrpc":"2.0","id":1,"result":{"id":7}}`, 200, codes.Internal, "INVALID_AGENT_RESPONSE"},
		{`upstream timed out`, http.StatusGatewayTimeout, codes.DeadlineExceeded, "INTERNAL_ERROR"},
		{``, 200, codes.Internal, "INTERNAL_ERROR"},
	} {
		c.answer, c.status = a.answer, a.status
		_, err := s.GetTask(context.Background(), &a2apb.GetTaskRequest{Id: "t"})
		st, _ := status.FromError(err)
		if st.Code() != a.code || errorInfo(t, st).Reason != a.reason {
			t.Errorf("answer %q: got %v, want %s %s", a.answer, err, a.code, a.reason)
		}
	}
}

// bareCore answers as the gateway's core answers a successful unary call
// to a writer that takes the bare result (proxy's resultWriter): through
// WriteResult, then reusing the buffer the result was in.
type bareCore struct{ result string }

func (c *bareCore) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	buf := []byte(c.result)
	w.(interface{ WriteResult([]byte) }).WriteResult(buf)
	for i := range buf {
		buf[i] = 'x' // the core's pooled buffer, given to the next call
	}
}

// TestUnaryBareResult: a result the core hands over bare is decoded before
// WriteResult returns (the core's buffer is reused after), null is
// google.protobuf.Empty, and a result that is no valid message is the
// agent's invalid answer, as it is in an envelope.
func TestUnaryBareResult(t *testing.T) {
	c := &bareCore{result: `{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING"}}`}
	s := &service{rpc: c, path: "/"}
	task, err := s.GetTask(context.Background(), &a2apb.GetTaskRequest{Id: "t1"})
	if err != nil || task.GetId() != "t1" || task.GetContextId() != "c1" || task.GetStatus().GetState() != a2apb.TaskState_TASK_STATE_WORKING {
		t.Fatalf("task %v, err %v", task, err)
	}
	c.result = "null"
	if _, err := s.DeleteTaskPushNotificationConfig(context.Background(), &a2apb.DeleteTaskPushNotificationConfigRequest{TaskId: "t", Id: "c"}); err != nil {
		t.Fatalf("null result: %v", err)
	}
	c.result = `{"id":7}`
	_, err = s.GetTask(context.Background(), &a2apb.GetTaskRequest{Id: "t1"})
	if st, _ := status.FromError(err); st.Code() != codes.Internal || errorInfo(t, st).Reason != "INVALID_AGENT_RESPONSE" {
		t.Fatalf("invalid result: got %v, want Internal INVALID_AGENT_RESPONSE", err)
	}
}

// TestStreamAnswer: events split across writes and joined in one, keep-alive
// comments, and an error event that ends the stream.
func TestStreamAnswer(t *testing.T) {
	var got []*a2apb.StreamResponse
	a := &streamAnswer{send: func(ev *a2apb.StreamResponse) error { got = append(got, ev); return nil }, ctx: context.Background(), header: http.Header{}}
	a.Header().Set("Content-Type", "text/event-stream")
	a.WriteHeader(http.StatusOK)
	writes := []string{
		"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"task\":{\"id\":\"t1\",\"contextId\":\"c\",\"status\":{\"state\":\"TASK_STATE_SUBMITTED\"}}}}\n\n: keep-alive\n\n",
		"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"statusUpdate\":",
		"{\"taskId\":\"t1\",\"contextId\":\"c\",\"status\":{\"state\":\"TASK_STATE_WORKING\"}}}}\n\n",
	}
	for i, w := range writes {
		if _, err := a.Write([]byte(w)); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		if want := []int{1, 1, 2}[i]; len(got) != want {
			t.Fatalf("after write %d: %d events sent, want %d", i, len(got), want)
		}
	}
	if _, err := a.Write([]byte("data: {\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32603,\"message\":\"backend gone\"}}\n\n")); err == nil {
		t.Fatal("the core may write on after an error event")
	}
	err := a.finish()
	if st, _ := status.FromError(err); st.Code() != codes.Internal || st.Message() != "backend gone" {
		t.Fatalf("stream end %v", err)
	}
	if got[1].GetStatusUpdate().GetStatus().GetState() != a2apb.TaskState_TASK_STATE_WORKING {
		t.Fatalf("events %v", got)
	}
}

// requestTypes are the request messages of the service's RPCs, by method.
var requestTypes = []struct {
	method string
	msg    func() proto.Message
}{
	{"SendMessage", func() proto.Message { return new(a2apb.SendMessageRequest) }},
	{"GetTask", func() proto.Message { return new(a2apb.GetTaskRequest) }},
	{"ListTasks", func() proto.Message { return new(a2apb.ListTasksRequest) }},
	{"CancelTask", func() proto.Message { return new(a2apb.CancelTaskRequest) }},
	{"SubscribeToTask", func() proto.Message { return new(a2apb.SubscribeToTaskRequest) }},
	{"CreateTaskPushNotificationConfig", func() proto.Message { return new(a2apb.TaskPushNotificationConfig) }},
	{"GetTaskPushNotificationConfig", func() proto.Message { return new(a2apb.GetTaskPushNotificationConfigRequest) }},
	{"ListTaskPushNotificationConfigs", func() proto.Message { return new(a2apb.ListTaskPushNotificationConfigsRequest) }},
	{"DeleteTaskPushNotificationConfig", func() proto.Message { return new(a2apb.DeleteTaskPushNotificationConfigRequest) }},
	{"GetExtendedAgentCard", func() proto.Message { return new(a2apb.GetExtendedAgentCardRequest) }},
}

// FuzzProtoFrontEnd: any bytes a caller sends as a request message either
// fail to decode (grpc-go answers that itself) or become a JSON-RPC request
// whose params are valid JSON that reads back into the same message; any
// bytes the core answers become a response or a status, never a panic.
func FuzzProtoFrontEnd(f *testing.F) {
	seed, _ := proto.Marshal(&a2apb.SendMessageRequest{Message: &a2apb.Message{MessageId: "m", Role: a2apb.Role_ROLE_USER,
		Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: "hi"}}}}})
	f.Add(uint8(0), seed, []byte(`{"jsonrpc":"2.0","id":1,"result":{"message":{"messageId":"r","role":"ROLE_AGENT","parts":[{"text":"x"}]}}}`))
	f.Add(uint8(1), []byte{0x0a, 0x02, 't', '1'}, []byte(`data: {"result":{"task":{"id":"t"}}}`+"\n\n"))
	f.Fuzz(func(t *testing.T, which uint8, in, answer []byte) {
		rt := requestTypes[int(which)%len(requestTypes)]
		req := rt.msg()
		if proto.Unmarshal(in, req) != nil {
			return
		}
		c := &core{answer: string(answer)}
		s := &service{rpc: c, path: "/"}
		r, err := s.request(context.Background(), rt.method, req, false)
		if err != nil {
			if status.Code(err) != codes.InvalidArgument {
				t.Fatalf("%s: %v", rt.method, err)
			}
			return
		}
		body, _ := io.ReadAll(r.Body)
		env := gjson.ParseBytes(body)
		if !gjson.ValidBytes(body) || env.Get("method").Str != rt.method || !env.Get("params").IsObject() {
			t.Fatalf("%s: not a JSON-RPC request: %s", rt.method, body)
		}
		back := rt.msg()
		if err := fromJSON.Unmarshal([]byte(env.Get("params").Raw), back); err != nil {
			t.Fatalf("%s: params do not read back: %v: %s", rt.method, err, body)
		}
		if !proto.Equal(clearUnknown(req), back) {
			t.Fatalf("%s: round trip changed the message: %v vs %v", rt.method, req, back)
		}

		var out proto.Message = new(a2apb.Task)
		if rt.method == "DeleteTaskPushNotificationConfig" {
			out = new(emptypb.Empty)
		}
		_ = s.call(context.Background(), rt.method, req, out)
		a := &streamAnswer{send: func(*a2apb.StreamResponse) error { return nil }, ctx: context.Background(), header: http.Header{"Content-Type": {"text/event-stream"}}}
		for chunk := range strings.SplitSeq(string(answer), "\n") {
			_, _ = a.Write([]byte(chunk + "\n"))
		}
		_ = a.finish()
	})
}

// clearUnknown drops the unknown fields of m and its messages: they have no
// JSON form.
func clearUnknown(m proto.Message) proto.Message {
	m = proto.Clone(m)
	var walk func(protoreflect.Message)
	walk = func(pm protoreflect.Message) {
		pm.SetUnknown(nil)
		pm.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.IsList() && fd.Message() != nil:
				for i := 0; i < v.List().Len(); i++ {
					walk(v.List().Get(i).Message())
				}
			case fd.IsMap() && fd.MapValue().Message() != nil:
				v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool { walk(mv.Message()); return true })
			case !fd.IsList() && !fd.IsMap() && fd.Message() != nil:
				walk(v.Message())
			}
			return true
		})
	}
	walk(m.ProtoReflect())
	return m
}

// TestStreamAnswerEventBound: an event the core writes in pieces is held
// up to the agent's bound (Options.MaxEventBytes), not a fixed 16 MiB:
// within it the event is kept for its end and sent whole, past it the
// stream ends INTERNAL naming the bound.
func TestStreamAnswerEventBound(t *testing.T) {
	text := strings.Repeat("x", 20<<20)
	head := `data: {"jsonrpc":"2.0","id":1,"result":{"artifactUpdate":{"taskId":"t1","contextId":"c","artifact":{"artifactId":"a","parts":[{"text":"` + text[:18<<20]
	tail := text[18<<20:] + `"}]}}}}` + "\n\n"
	for _, c := range []struct {
		limit int64
		fails bool
	}{{0, true}, {24 << 20, false}, {1 << 20, true}} {
		var got []*a2apb.StreamResponse
		a := &streamAnswer{send: func(ev *a2apb.StreamResponse) error { got = append(got, ev); return nil }, ctx: context.Background(), header: http.Header{}, maxEvent: c.limit}
		a.Header().Set("Content-Type", "text/event-stream")
		a.WriteHeader(http.StatusOK)
		_, err1 := a.Write([]byte(head))
		_, err2 := a.Write([]byte(tail))
		if c.fails {
			st, _ := status.FromError(a.finish())
			if err1 == nil && err2 == nil || st.Code() != codes.Internal || !strings.Contains(st.Message(), strconv.FormatInt(cmp.Or(c.limit, DefaultMaxEventBytes), 10)) {
				t.Errorf("limit %d: writes %v, %v, end %v; want the event refused naming the bound", c.limit, err1, err2, st)
			}
			continue
		}
		if err1 != nil || err2 != nil || len(got) != 1 || len(got[0].GetArtifactUpdate().GetArtifact().GetParts()[0].GetText()) != len(text) {
			t.Errorf("limit %d: writes %v, %v, %d events; want the event sent whole", c.limit, err1, err2, len(got))
		}
	}
}
