package proxy

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	pb03 "github.com/a2aproject/a2a-go/a2apb"
	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestV03BindingsSubscribeToFinalTask: a caller of the 0.3 gRPC or REST
// binding that subscribes to a task in a final state gets the task, then
// the end of the stream, as the 0.3 spec says (TaskSubscription) and as a
// 0.x JSON-RPC caller gets, behind either backend; a 1.0 gRPC caller still
// gets UNSUPPORTED_OPERATION. Before, the 0.3 bindings' callers got the
// 1.0 refusal, their calls reaching the core as 1.0.
func TestV03BindingsSubscribeToFinalTask(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backendKind) {
		tg := newGateway(t, b.handler(t, nil), b.version)
		id := mustResult(t, tg.call("1", "SendMessage", `{"message":{"messageId":"s1","role":"ROLE_USER","parts":[{"text":"hi"}]}}`)).Get("task.id").Str
		g := newGRPCGateway(t, tg)
		s, err := pb03.NewA2AServiceClient(g.conn).TaskSubscription(context.Background(), &pb03.TaskSubscriptionRequest{Name: "tasks/" + id})
		if err != nil {
			t.Fatal(err)
		}
		ev, err := s.Recv()
		if err != nil || ev.GetTask().GetId() != id || ev.GetTask().GetStatus().GetState() != pb03.TaskState_TASK_STATE_COMPLETED {
			t.Fatalf("0.3 gRPC: %v, %v; want the completed task", ev, err)
		}
		if _, err := s.Recv(); err != io.EOF {
			t.Fatalf("0.3 gRPC: %v after the task, want the end", err)
		}
		res, body := tg.request(t, http.MethodGet, "/v1/tasks/"+id+":subscribe", "")
		events := strings.Count(string(body), "data:")
		if res.StatusCode != http.StatusOK || events != 1 || !strings.Contains(string(body), `"TASK_STATE_COMPLETED"`) || !strings.Contains(string(body), `"task"`) {
			t.Fatalf("0.3 REST: HTTP %d, %d events: %s", res.StatusCode, events, body)
		}
		s10, err := g.raw.SubscribeToTask(context.Background(), &a2apb.SubscribeToTaskRequest{Id: id})
		if err == nil {
			_, err = s10.Recv()
		}
		if st := status.Convert(err); st.Code() != codes.FailedPrecondition {
			t.Fatalf("1.0 gRPC: %v, want FAILED_PRECONDITION", err)
		}
	})
}

// TestV03BindingsCancelFinalTask: a caller of the 0.3 gRPC or REST binding
// that cancels a task already final gets TaskNotCancelable, as a 0.x
// JSON-RPC caller does, from an a2a-go v2 backend too, which answers the
// task instead. Before, the 0.3 bindings' callers got the task, as a 1.0
// caller does.
func TestV03BindingsCancelFinalTask(t *testing.T) {
	b := sdkBackends[3] // a2a-go v2: a cancel of a final task answers the task
	tg := newGateway(t, b.handler(t, nil), b.version)
	id := mustResult(t, tg.call("1", "SendMessage", `{"message":{"messageId":"s1","role":"ROLE_USER","parts":[{"text":"hi"}]}}`)).Get("task.id").Str
	g := newGRPCGateway(t, tg)
	_, err := pb03.NewA2AServiceClient(g.conn).CancelTask(context.Background(), &pb03.CancelTaskRequest{Name: "tasks/" + id})
	wantStatus(t, err, codes.FailedPrecondition, "TASK_NOT_CANCELABLE")
	res, body := tg.request(t, http.MethodPost, "/v1/tasks/"+id+":cancel", "")
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "-32002") {
		t.Fatalf("0.3 REST: HTTP %d %s", res.StatusCode, body)
	}
}

// TestV03BindingsMessageToFinalTask: a caller of the 0.3 gRPC or REST
// binding that sends a message to a task in a final state gets
// InvalidRequest (-32600: gRPC INVALID_ARGUMENT, as a2a-go v0.3's server
// answers it; REST HTTP 400 with the JSON-RPC error object, as
// @a2a-js/sdk 0.3's REST server writes it), as a 0.x JSON-RPC caller does,
// behind either backend; a 1.0 gRPC caller still gets
// UNSUPPORTED_OPERATION. Before, the 0.3 bindings' callers got the 1.0
// answer (-32004, FAILED_PRECONDITION), their calls reaching the core as
// 1.0.
func TestV03BindingsMessageToFinalTask(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backendKind) {
		tg := newGateway(t, b.handler(t, nil), b.version)
		id := mustResult(t, tg.call("1", "SendMessage", `{"message":{"messageId":"s1","role":"ROLE_USER","parts":[{"text":"hi"}]}}`)).Get("task.id").Str
		g := newGRPCGateway(t, tg)
		_, err := pb03.NewA2AServiceClient(g.conn).SendMessage(context.Background(), &pb03.SendMessageRequest{Request: &pb03.Message{
			MessageId: "s2", TaskId: id, Role: pb03.Role_ROLE_USER, Parts: []*pb03.Part{{Part: &pb03.Part_Text{Text: "more"}}}}})
		wantStatus(t, err, codes.InvalidArgument, "INVALID_REQUEST")
		res, body := tg.request(t, http.MethodPost, "/v1/message:send",
			`{"message":{"messageId":"s3","taskId":"`+id+`","role":"ROLE_USER","content":[{"text":"more"}]}}`, "Content-Type", "application/json")
		if res.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), `"code":-32600`) || !strings.Contains(string(body), "final state") {
			t.Fatalf("0.3 REST: HTTP %d %s", res.StatusCode, body)
		}
		_, err = g.raw.SendMessage(context.Background(), &a2apb.SendMessageRequest{Message: &a2apb.Message{
			MessageId: "s4", TaskId: id, Role: a2apb.Role_ROLE_USER, Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: "more"}}}}})
		wantStatus(t, err, codes.FailedPrecondition, "UNSUPPORTED_OPERATION")
	})
}
