package grpcbind

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"

	pb03 "github.com/a2aproject/a2a-go/a2apb"
	a2agrpcv0 "github.com/a2aproject/a2a-go/v2/a2agrpc/v0"
	"github.com/tidwall/gjson"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// TestV03GoldenPairs: 0.3 proto requests, the canonical JSON-RPC call each
// becomes, the core's canonical answer and the 0.3 proto answer it comes
// back as. Message field 5 is "content" in the 0.3.0 spec proto and
// "parts" in a2a-go's: the same number, so the same gRPC bytes; the
// ProtoJSON here is a2a-go's spelling.
func TestV03GoldenPairs(t *testing.T) {
	task10 := `{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_CANCELED"},"artifacts":[{"artifactId":"a1","parts":[{"text":"done"}]}]}`
	cases := []struct {
		name    string
		call    func(h *a2agrpcv0.Handler, in string) (proto.Message, error)
		in      string // 0.3 ProtoJSON of the request
		method  string
		params  map[string]string // gjson path -> raw JSON the params must hold
		answer  string            // the core's canonical result
		out     map[string]string // gjson path -> raw JSON the 0.3 answer must hold
		outType proto.Message
	}{
		{"send", func(h *a2agrpcv0.Handler, in string) (proto.Message, error) {
			r := new(pb03.SendMessageRequest)
			must(t, protojson.Unmarshal([]byte(in), r))
			return h.SendMessage(context.Background(), r)
		}, `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}`,
			"SendMessage", map[string]string{"message.messageId": `"m1"`, "message.role": `"ROLE_USER"`, "message.parts.0.text": `"hi"`, "message.content": ``},
			`{"task":` + task10 + `}`, map[string]string{"task.id": `"t1"`, "task.status.state": `"TASK_STATE_CANCELLED"`, "task.artifacts.0.parts.0.text": `"done"`}, nil},
		{"get by name", func(h *a2agrpcv0.Handler, in string) (proto.Message, error) {
			r := new(pb03.GetTaskRequest)
			must(t, protojson.Unmarshal([]byte(in), r))
			return h.GetTask(context.Background(), r)
		}, `{"name":"tasks/t1","historyLength":2}`,
			"GetTask", map[string]string{"id": `"t1"`, "historyLength": `2`, "name": ``},
			task10, map[string]string{"id": `"t1"`, "status.state": `"TASK_STATE_CANCELLED"`}, nil},
		{"push config by name", func(h *a2agrpcv0.Handler, in string) (proto.Message, error) {
			r := new(pb03.GetTaskPushNotificationConfigRequest)
			must(t, protojson.Unmarshal([]byte(in), r))
			return h.GetTaskPushNotificationConfig(context.Background(), r)
		}, `{"name":"tasks/t1/pushNotificationConfigs/c1"}`,
			"GetTaskPushNotificationConfig", map[string]string{"taskId": `"t1"`, "id": `"c1"`},
			`{"taskId":"t1","id":"c1","url":"https://hooks.example/a2a"}`,
			map[string]string{"name": `"tasks/t1/pushNotificationConfigs/c1"`, "pushNotificationConfig.url": `"https://hooks.example/a2a"`}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			core := &core{answer: `{"jsonrpc":"2.0","id":1,"result":` + c.answer + `}`}
			h := a2agrpcv0.NewHandler(v03Handler{&service{rpc: core, path: "/"}})
			out, err := c.call(h, c.in)
			if err != nil {
				t.Fatal(err)
			}
			body := gjson.ParseBytes(core.body)
			if body.Get("method").Str != c.method {
				t.Fatalf("method %s: %s", body.Get("method").Str, core.body)
			}
			for path, want := range c.params {
				if got := body.Get("params." + path).Raw; got != want {
					t.Errorf("params.%s = %s, want %s: %s", path, got, want, core.body)
				}
			}
			js, _ := protojson.Marshal(out)
			res := gjson.ParseBytes(js)
			for path, want := range c.out {
				if got := res.Get(path).Raw; got != want {
					t.Errorf("0.3 answer %s = %s, want %s: %s", path, got, want, js)
				}
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// FuzzV03FrontEnd: any bytes a 0.3 caller sends as a SendMessage or
// GetTask request, and any canonical answer, end in a 0.3 response or a
// status, never a panic; a request that decodes becomes a JSON-RPC call of
// valid JSON.
func FuzzV03FrontEnd(f *testing.F) {
	seed, _ := proto.Marshal(&pb03.SendMessageRequest{Request: &pb03.Message{MessageId: "m", Role: pb03.Role_ROLE_USER,
		Parts: []*pb03.Part{{Part: &pb03.Part_Text{Text: "hi"}}}}})
	f.Add(false, seed, []byte(`{"jsonrpc":"2.0","id":1,"result":{"task":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_CANCELED"}}}}`))
	f.Add(true, []byte{0x0a, 0x08, 't', 'a', 's', 'k', 's', '/', 't', '1'}, []byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32001}}`))
	f.Fuzz(func(t *testing.T, get bool, in, answer []byte) {
		c := &core{answer: string(answer)}
		h := a2agrpcv0.NewHandler(v03Handler{&service{rpc: c, path: "/"}})
		if get {
			r := new(pb03.GetTaskRequest)
			if proto.Unmarshal(in, r) != nil {
				return
			}
			_, _ = h.GetTask(context.Background(), r)
		} else {
			r := new(pb03.SendMessageRequest)
			if proto.Unmarshal(in, r) != nil {
				return
			}
			_, _ = h.SendMessage(context.Background(), r)
		}
		if c.body != nil && !gjson.ValidBytes(c.body) {
			t.Fatalf("not JSON: %s", c.body)
		}
	})
}

// TestV03StreamFinalFlag: over a real gRPC connection, the 0.3 service's
// status updates carry final exactly where the cycle ends (completed,
// input-required), which a2a-go's 0.3 conversion leaves unset.
func TestV03StreamFinalFlag(t *testing.T) {
	frame := func(result string) string {
		return "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":" + result + "}\n\n"
	}
	update := func(state string) string {
		return frame(`{"statusUpdate":{"taskId":"t1","contextId":"c","status":{"state":"` + state + `"}}}`)
	}
	c := &core{header: http.Header{"Content-Type": {"text/event-stream"}},
		answer: frame(`{"task":{"id":"t1","contextId":"c","status":{"state":"TASK_STATE_SUBMITTED"}}}`) +
			update("TASK_STATE_WORKING") + update("TASK_STATE_INPUT_REQUIRED") + update("TASK_STATE_COMPLETED")}
	conn := served(t, c, Options{})
	stream, err := pb03.NewA2AServiceClient(conn).SendStreamingMessage(context.Background(), &pb03.SendMessageRequest{
		Request: &pb03.Message{MessageId: "m", Role: pb03.Role_ROLE_USER, Parts: []*pb03.Part{{Part: &pb03.Part_Text{Text: "hi"}}}}})
	must(t, err)
	var got []string
	for {
		ev, err := stream.Recv()
		if err == io.EOF {
			break
		}
		must(t, err)
		if u := ev.GetStatusUpdate(); u != nil {
			got = append(got, fmt.Sprintf("%s:%v", u.GetStatus().GetState(), u.GetFinal()))
		}
	}
	want := "[TASK_STATE_WORKING:false TASK_STATE_INPUT_REQUIRED:true TASK_STATE_COMPLETED:true]"
	if fmt.Sprint(got) != want {
		t.Fatalf("status updates %v, want %s", got, want)
	}
}
