package grpcbind

import (
	"context"
	"iter"
	"slices"
	"strings"

	pb03 "github.com/a2aproject/a2a-go/a2apb"
	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	a2agrpcv0 "github.com/a2aproject/a2a-go/v2/a2agrpc/v0"
	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"github.com/a2aproject/a2a-go/v2/a2apb/v1/pbconv"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	"github.com/a2agate/gateway/dialect"
)

// registerV03 serves the A2A 0.3 gRPC service, a2a.v1.A2AService of
// a2a.proto v0.3.0, with the same core. The 0.3 proto's messages differ from
// 1.0's (parts under content, TASK_STATE_CANCELLED, tasks/{id} resource
// names): a2a-go's own 0.3 gRPC handler reads and writes them, converting to
// and from its protocol types, which its pbconv converts to and from the
// 1.0 messages the 1.0 front end serves. So a 0.3 call becomes the same
// canonical JSON-RPC call as a 1.0 one, and no conversion is written here.
func registerV03(s grpc.ServiceRegistrar, svc *service) {
	// The SDK's RegisterWith, which takes the server itself.
	pb03.RegisterA2AServiceServer(s, a2agrpcv0.NewHandler(v03Handler{svc}))
}

// v03Service and v10Service are the prefixes of the services' full
// method names.
const (
	v03Service = "/a2a.v1.A2AService/"
	v10Service = "/lf.a2a.v1.A2AService/"
)

// v03Ops are the operations of the 0.3 service's methods (a2a.proto
// v0.3.0), whose names are not all 1.0's.
var v03Ops = map[string]dialect.Op{
	"SendMessage":                      dialect.SendMessage,
	"SendStreamingMessage":             dialect.SendStreamingMessage,
	"GetTask":                          dialect.GetTask,
	"CancelTask":                       dialect.CancelTask,
	"TaskSubscription":                 dialect.SubscribeToTask,
	"CreateTaskPushNotificationConfig": dialect.CreatePushConfig,
	"GetTaskPushNotificationConfig":    dialect.GetPushConfig,
	"ListTaskPushNotificationConfig":   dialect.ListPushConfigs,
	"GetAgentCard":                     dialect.GetExtendedCard,
	"DeleteTaskPushNotificationConfig": dialect.DeletePushConfig,
}

// v03FinalFlag sets the 0.3 final flag on the status updates the 0.3
// service streams: a2a-go v2.3.1's 0.3 conversion (a2apb/v0/pbconv
// ToProtoStreamResponse) never sets it, and 0.3 callers (a2a-go v0.3.x)
// take final as the end of the cycle. 1.0 has no flag: the stream ends at
// a terminal or interrupted state (a2a-dialects.md §5.4), as the 0.3
// HTTP+JSON binding writes it.
// A 0.x backend's own flag, which the core passes on in the event
// (normalize.WithFinalFlag), is written instead.
func v03FinalFlag(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	if !strings.HasPrefix(info.FullMethod, v03Service) {
		return handler(srv, ss)
	}
	fc := new(finalCarry)
	return handler(srv, finalFlagStream{ss, context.WithValue(ss.Context(), finalCarryKey{}, fc), fc})
}

// finalCarry takes a status update's final flag from the core's event to
// its 0.3 message, past a2a-go's conversions, which have no field for it:
// both run inside one call of the core's Write, under streamAnswer's mutex.
type finalCarry struct{ has, final bool }

type finalCarryKey struct{}

func finalCarryOf(ctx context.Context) *finalCarry {
	fc, _ := ctx.Value(finalCarryKey{}).(*finalCarry)
	return fc
}

type finalFlagStream struct {
	grpc.ServerStream
	ctx   context.Context
	carry *finalCarry
}

func (s finalFlagStream) Context() context.Context { return s.ctx }

func (s finalFlagStream) SendMsg(m any) error {
	has, final := s.carry.has, s.carry.final
	s.carry.has = false
	if r, ok := m.(*pb03.StreamResponse); ok {
		if u := r.GetStatusUpdate(); u != nil {
			u.Final = final
			if !has {
				u.Final = endsCycle03[u.GetStatus().GetState()]
			}
		}
	}
	return s.ServerStream.SendMsg(m)
}

var endsCycle03 = map[pb03.TaskState]bool{
	pb03.TaskState_TASK_STATE_COMPLETED:      true,
	pb03.TaskState_TASK_STATE_FAILED:         true,
	pb03.TaskState_TASK_STATE_CANCELLED:      true,
	pb03.TaskState_TASK_STATE_REJECTED:       true,
	pb03.TaskState_TASK_STATE_INPUT_REQUIRED: true,
	pb03.TaskState_TASK_STATE_AUTH_REQUIRED:  true,
}

// v03Handler is a2asrv.RequestHandler served by the 1.0 front end.
type v03Handler struct{ s *service }

var _ a2asrv.RequestHandler = v03Handler{}

// convert runs one SDK conversion of a request, refusing what it cannot
// convert as invalid params.
func convert[In, Out any](f func(In) (Out, error), in In) (Out, error) {
	out, err := f(in)
	if err != nil {
		return out, failure(codes.InvalidArgument, dialect.ErrInvalidParams, "the request cannot be read: "+err.Error())
	}
	return out, nil
}

// back runs one SDK conversion of an answer: one it cannot convert is the
// agent's invalid answer.
func back[In, Out any](f func(In) (Out, error), in In) (Out, error) {
	out, err := f(in)
	if err != nil {
		return out, failure(codes.Internal, dialect.ErrInvalidAgentResponse, "the agent's answer cannot be written in 0.3: "+err.Error())
	}
	return out, nil
}

// bridge serves one 0.3 unary call with the 1.0 method call: the request
// converted to 1.0 by to, the answer converted back by from.
func bridge[In, PbIn, PbOut, Out any](ctx context.Context, in In, to func(In) (PbIn, error),
	call func(context.Context, PbIn) (PbOut, error), from func(PbOut) (Out, error)) (Out, error) {
	var zero Out
	pb, err := convert(to, in)
	if err != nil {
		return zero, err
	}
	res, err := call(ctx, pb)
	if err != nil {
		return zero, err
	}
	return back(from, res)
}

func (h v03Handler) GetTask(ctx context.Context, req *a2a.GetTaskRequest) (*a2a.Task, error) {
	return bridge(ctx, req, pbconv.ToProtoGetTaskRequest, h.s.GetTask, pbconv.FromProtoTask)
}

func (h v03Handler) ListTasks(ctx context.Context, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	return bridge(ctx, req, pbconv.ToProtoListTasksRequest, h.s.ListTasks, pbconv.FromProtoListTasksResponse)
}

func (h v03Handler) CancelTask(ctx context.Context, req *a2a.CancelTaskRequest) (*a2a.Task, error) {
	return bridge(ctx, req, pbconv.ToProtoCancelTaskRequest, h.s.CancelTask, pbconv.FromProtoTask)
}

func (h v03Handler) SendMessage(ctx context.Context, req *a2a.SendMessageRequest) (a2a.SendMessageResult, error) {
	return bridge(ctx, req, pbconv.ToProtoSendMessageRequest, h.s.SendMessage, pbconv.FromProtoSendMessageResponse)
}

func (h v03Handler) SendStreamingMessage(ctx context.Context, req *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error] {
	return streamEvents(h, ctx, "SendStreamingMessage", func() (*a2apb.SendMessageRequest, error) {
		return convert(pbconv.ToProtoSendMessageRequest, req)
	})
}

func (h v03Handler) SubscribeToTask(ctx context.Context, req *a2a.SubscribeToTaskRequest) iter.Seq2[a2a.Event, error] {
	return streamEvents(h, ctx, "SubscribeToTask", func() (*a2apb.SubscribeToTaskRequest, error) {
		return convert(pbconv.ToProtoSubscribeToTaskRequest, req)
	})
}

// streamEvents streams method's events to the SDK's 0.3 handler as the
// core writes them: yield runs inside the core's Write, as Send does for 1.0.
func streamEvents[R proto.Message](h v03Handler, ctx context.Context, method string, build func() (R, error)) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		req, err := build()
		if err != nil {
			yield(nil, err)
			return
		}
		stopped := false
		err = h.s.streamTo(ctx, method, req, func(ev *a2apb.StreamResponse) error {
			e, err := back(pbconv.FromProtoStreamResponse, ev)
			if err != nil {
				return err
			}
			if !yield(e, nil) {
				stopped = true
				return errStreamEnded
			}
			return nil
		}, func(md metadata.MD) { _ = grpc.SetHeader(ctx, md) })
		if err != nil && !stopped {
			yield(nil, err)
		}
	}
}

func (h v03Handler) GetTaskPushConfig(ctx context.Context, req *a2a.GetTaskPushConfigRequest) (*a2a.PushConfig, error) {
	return bridge(ctx, req, pbconv.ToProtoGetTaskPushConfigRequest, h.s.GetTaskPushNotificationConfig, pbconv.FromProtoTaskPushConfig)
}

func (h v03Handler) ListTaskPushConfigs(ctx context.Context, req *a2a.ListTaskPushConfigRequest) (*a2a.ListTaskPushConfigResponse, error) {
	return bridge(ctx, req, pbconv.ToProtoListTaskPushConfigRequest, h.s.ListTaskPushNotificationConfigs, pbconv.FromProtoListTaskPushConfigResponse)
}

func (h v03Handler) CreateTaskPushConfig(ctx context.Context, req *a2a.PushConfig) (*a2a.PushConfig, error) {
	return bridge(ctx, req, pbconv.ToProtoTaskPushConfig, h.s.CreateTaskPushNotificationConfig, pbconv.FromProtoTaskPushConfig)
}

func (h v03Handler) DeleteTaskPushConfig(ctx context.Context, req *a2a.DeleteTaskPushConfigRequest) error {
	pb, err := convert(pbconv.ToProtoDeleteTaskPushConfigRequest, req)
	if err != nil {
		return err
	}
	_, err = h.s.DeleteTaskPushNotificationConfig(ctx, pb)
	return err
}

// GetExtendedAgentCard is the 0.3 GetAgentCard. The core's card is 1.0's,
// whose interfaces are all at 1.0, and the 0.3 card's url and
// preferredTransport must be an interface at 0.3 (a2a-go's conversion
// fails without one): the gateway serves 0.3 at every URL it serves 1.0
// at, so each is listed again at 0.3.
func (h v03Handler) GetExtendedAgentCard(ctx context.Context, req *a2a.GetExtendedAgentCardRequest) (*a2a.AgentCard, error) {
	card, err := bridge(ctx, req, pbconv.ToProtoGetExtendedAgentCardRequest, h.s.GetExtendedAgentCard, pbconv.FromProtoAgentCard)
	if err != nil || slices.ContainsFunc(card.SupportedInterfaces, func(i *a2a.AgentInterface) bool { return i.ProtocolVersion == a2av0.Version }) {
		return card, err
	}
	for _, i := range slices.Clone(card.SupportedInterfaces) {
		twin := *i
		twin.ProtocolVersion = a2av0.Version
		card.SupportedInterfaces = append(card.SupportedInterfaces, &twin)
	}
	return card, nil
}
