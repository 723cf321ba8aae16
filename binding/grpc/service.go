package grpcbind

import (
	"context"
	"net/http"
	"time"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/a2agate/gateway/dialect"
)

// service is lf.a2a.v1.A2AService served by the JSON-RPC core: each RPC is
// the JSON-RPC method of the same name.
type service struct {
	a2apb.UnimplementedA2AServiceServer
	rpc  http.Handler
	path string
	// limit is the agent's bound on a request body, which the JSON form of
	// a message may pass while the message itself is within it (0: none
	// of the binding's own).
	limit int64
	// maxEvent is Options.MaxEventBytes.
	maxEvent int64
	// authenticate is Options.Authenticate.
	authenticate http.Handler
	// admit is Options.Admit.
	admit func(*http.Request) (*http.Request, func(), bool)
	// refused is Options.Refused.
	refused func(context.Context, time.Time, dialect.ID, dialect.Op, dialect.ErrorKind)
}

// unary calls method with req and decodes the result into a new R.
func unary[R proto.Message](ctx context.Context, s *service, method string, req proto.Message, out R) (R, error) {
	if err := s.call(ctx, method, req, out); err != nil {
		var none R
		return none, err
	}
	return out, nil
}

func (s *service) SendMessage(ctx context.Context, req *a2apb.SendMessageRequest) (*a2apb.SendMessageResponse, error) {
	return unary(ctx, s, "SendMessage", req, new(a2apb.SendMessageResponse))
}

func (s *service) GetTask(ctx context.Context, req *a2apb.GetTaskRequest) (*a2apb.Task, error) {
	return unary(ctx, s, "GetTask", req, new(a2apb.Task))
}

func (s *service) ListTasks(ctx context.Context, req *a2apb.ListTasksRequest) (*a2apb.ListTasksResponse, error) {
	if req.PageSize != nil && *req.PageSize == 0 {
		// a2a-go's client sends page_size 0, with presence, for "not set",
		// and its server reads it so: the default page size.
		req.PageSize = nil
	}
	return unary(ctx, s, "ListTasks", req, new(a2apb.ListTasksResponse))
}

func (s *service) CancelTask(ctx context.Context, req *a2apb.CancelTaskRequest) (*a2apb.Task, error) {
	return unary(ctx, s, "CancelTask", req, new(a2apb.Task))
}

func (s *service) CreateTaskPushNotificationConfig(ctx context.Context, req *a2apb.TaskPushNotificationConfig) (*a2apb.TaskPushNotificationConfig, error) {
	return unary(ctx, s, "CreateTaskPushNotificationConfig", req, new(a2apb.TaskPushNotificationConfig))
}

func (s *service) GetTaskPushNotificationConfig(ctx context.Context, req *a2apb.GetTaskPushNotificationConfigRequest) (*a2apb.TaskPushNotificationConfig, error) {
	return unary(ctx, s, "GetTaskPushNotificationConfig", req, new(a2apb.TaskPushNotificationConfig))
}

func (s *service) ListTaskPushNotificationConfigs(ctx context.Context, req *a2apb.ListTaskPushNotificationConfigsRequest) (*a2apb.ListTaskPushNotificationConfigsResponse, error) {
	return unary(ctx, s, "ListTaskPushNotificationConfigs", req, new(a2apb.ListTaskPushNotificationConfigsResponse))
}

func (s *service) DeleteTaskPushNotificationConfig(ctx context.Context, req *a2apb.DeleteTaskPushNotificationConfigRequest) (*emptypb.Empty, error) {
	return unary(ctx, s, "DeleteTaskPushNotificationConfig", req, new(emptypb.Empty))
}

func (s *service) GetExtendedAgentCard(ctx context.Context, req *a2apb.GetExtendedAgentCardRequest) (*a2apb.AgentCard, error) {
	return unary(ctx, s, "GetExtendedAgentCard", req, new(a2apb.AgentCard))
}

func (s *service) SendStreamingMessage(req *a2apb.SendMessageRequest, stream grpc.ServerStreamingServer[a2apb.StreamResponse]) error {
	return s.stream(stream, "SendStreamingMessage", req)
}

func (s *service) SubscribeToTask(req *a2apb.SubscribeToTaskRequest, stream grpc.ServerStreamingServer[a2apb.StreamResponse]) error {
	return s.stream(stream, "SubscribeToTask", req)
}
