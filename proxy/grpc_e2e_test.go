package proxy

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/testnet"
)

// grpcGateway is a gateway whose listener speaks h2c next to HTTP/1.1, as
// cmd/gateway's does, and the official a2a-go v2 gRPC client dialed to it.
type grpcGateway struct {
	*testGateway
	addr   string
	conn   *grpc.ClientConn
	raw    a2apb.A2AServiceClient
	client *a2aclient.Client
}

// bearer sends a token with every call when set.
type bearer struct{ token *string }

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	if *b.token == "" {
		return nil, nil
	}
	return map[string]string{"authorization": "Bearer " + *b.token}, nil
}

func (bearer) RequireTransportSecurity() bool { return false }

func serveH2C(t testing.TB, h http.Handler) string {
	t.Helper()
	s := httptest.NewUnstartedServer(h)
	s.Config.Protocols = new(http.Protocols)
	s.Config.Protocols.SetHTTP1(true)
	s.Config.Protocols.SetUnencryptedHTTP2(true)
	s.Start()
	t.Cleanup(s.Close)
	return strings.TrimPrefix(s.URL, "http://")
}

func newGRPCGateway(t *testing.T, g *testGateway) *grpcGateway {
	t.Helper()
	return dialGRPCGateway(t, g, serveH2C(t, soleGateway(t, g.agent)))
}

// newNativeGRPCGateway serves the agent's gRPC binding as a grpc_listen
// does: grpc-go's own server and transport on a listener of its own.
func newNativeGRPCGateway(t *testing.T, g *testGateway) *grpcGateway {
	t.Helper()
	ln := testnet.Listen(t)
	s := NewGRPCListenerServer(http.HandlerFunc(g.agent.ServeRPC), http.HandlerFunc(g.agent.RefuseUnauthenticated), g.agent.AdmitEarly, g.agent.GRPCRefused, g.agent.cfg, 0, g.agent.readTimeout, 0)
	go func() { _ = s.Serve(ln) }()
	t.Cleanup(s.Stop)
	return dialGRPCGateway(t, g, ln.Addr().String())
}

// grpcTransports are the two ways the gateway serves gRPC.
var grpcTransports = []struct {
	name  string
	serve func(*testing.T, *testGateway) *grpcGateway
}{{"h2c-beside-http1", newGRPCGateway}, {"grpc_listen", newNativeGRPCGateway}}

func dialGRPCGateway(t *testing.T, g *testGateway, addr string) *grpcGateway {
	t.Helper()
	var err error
	gg := &grpcGateway{testGateway: g, addr: addr}
	token := grpc.WithPerRPCCredentials(bearer{&g.token})
	gg.conn = dialGRPC(t, gg.addr, token)
	gg.raw = a2apb.NewA2AServiceClient(gg.conn)
	// The client dials the card's gRPC URL, host:port, as a gRPC target.
	gg.client, err = a2aclient.NewFromEndpoints(context.Background(),
		[]*a2a.AgentInterface{a2a.NewAgentInterface(gg.addr, a2a.TransportProtocolGRPC)},
		a2agrpc.WithGRPCTransport(grpc.WithTransportCredentials(insecure.NewCredentials()), token))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gg.client.Destroy() })
	return gg
}

func userText(text string) *a2a.SendMessageRequest {
	return &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))}
}

func textOf(parts []*a2a.Part) string {
	var b strings.Builder
	for _, p := range parts {
		if s, ok := p.Content.(a2a.Text); ok {
			b.WriteString(string(s))
		}
	}
	return b.String()
}

// wantStatus checks err is a gRPC status of code whose ErrorInfo names
// reason in the A2A domain.
func wantStatus(t *testing.T, err error, code codes.Code, reason string) *status.Status {
	t.Helper()
	st, ok := status.FromError(err)
	if !ok || st.Code() != code {
		t.Fatalf("want %s, got %v", code, err)
	}
	if st.Message() == "" {
		t.Fatalf("%s without a message", code)
	}
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			if info.Reason != reason || info.Domain != dialect.Domain {
				t.Fatalf("ErrorInfo %v, want reason %s in %s", info, reason, dialect.Domain)
			}
			return st
		}
	}
	t.Fatalf("%s without an ErrorInfo detail: %v", code, st.Details())
	return nil
}

// TestGRPCEveryOperation drives every unary RPC of lf.a2a.v1.A2AService
// with the official a2a-go v2 gRPC client, against a 0.2.5 and a 1.0 backend.
func TestGRPCEveryOperation(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backendKind) {
		g := newGRPCGateway(t, newAuthGateway(t, b).as(token(t, "alice")))
		ctx := context.Background()

		// Blocking send: the finished task.
		res, err := g.client.SendMessage(ctx, userText("hello grpc"))
		if err != nil {
			t.Fatal(err)
		}
		task, ok := res.(*a2a.Task)
		if !ok || task.Status.State != a2a.TaskStateCompleted || len(task.Artifacts) == 0 || textOf(task.Artifacts[0].Parts) != "done: hello grpc" {
			t.Fatalf("blocking send: %#v", res)
		}

		// Get with history.
		one := 1
		got, err := g.client.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID, HistoryLength: &one})
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != task.ID || got.Status.State != a2a.TaskStateCompleted || len(got.History) != 1 {
			t.Fatalf("get with historyLength 1: %d messages, %#v", len(got.History), got)
		}

		// Direct message.
		res, err = g.client.SendMessage(ctx, userText("what is gRPC?"))
		if err != nil {
			t.Fatal(err)
		}
		if msg, ok := res.(*a2a.Message); !ok || msg.Role != a2a.MessageRoleAgent || !strings.Contains(textOf(msg.Parts), "what is gRPC?") {
			t.Fatalf("direct message: %#v", res)
		}

		// Non-blocking send returns the task at once; it can be canceled.
		req := userText("wait for me")
		req.Config = &a2a.SendMessageConfig{ReturnImmediately: true}
		res, err = g.client.SendMessage(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		waiting, ok := res.(*a2a.Task)
		if !ok || waiting.Status.State.Terminal() {
			t.Fatalf("non-blocking send: %#v", res)
		}
		canceled, err := g.client.CancelTask(ctx, &a2a.CancelTaskRequest{ID: waiting.ID})
		if err != nil {
			t.Fatal(err)
		}
		if canceled.Status.State != a2a.TaskStateCanceled {
			t.Fatalf("cancel: %s", canceled.Status.State)
		}

		// List: alice's tasks only, both of them.
		list, err := g.client.ListTasks(ctx, &a2a.ListTasksRequest{})
		if err != nil {
			t.Fatal(err)
		}
		ids := map[a2a.TaskID]bool{}
		for _, lt := range list.Tasks {
			ids[lt.ID] = true
		}
		if len(list.Tasks) != 2 || !ids[task.ID] || !ids[waiting.ID] {
			t.Fatalf("list: %#v", list.Tasks)
		}
		bob := newGRPCGateway(t, g.testGateway.as(token(t, "bob")))
		if _, err := bob.raw.GetTask(ctx, &a2apb.GetTaskRequest{Id: string(task.ID)}); status.Code(err) != codes.NotFound {
			t.Fatalf("bob reads alice's task: %v", err)
		}

		// Push config CRUD.
		input, err := g.client.SendMessage(ctx, userText("input please"))
		if err != nil {
			t.Fatal(err)
		}
		tid := input.(*a2a.Task).ID
		cfg := &a2a.PushConfig{TaskID: tid, ID: "cfg1", URL: "https://hooks.example/a2a", Token: "tok",
			Auth: &a2a.PushAuthInfo{Scheme: "Bearer", Credentials: "secret"}}
		check := func(what string, c *a2a.PushConfig) {
			t.Helper()
			if c.TaskID != tid || c.ID != "cfg1" || c.URL != "https://hooks.example/a2a" || c.Token != "tok" || c.Auth == nil || c.Auth.Scheme != "Bearer" {
				t.Fatalf("%s: %#v", what, c)
			}
		}
		created, err := g.client.CreateTaskPushConfig(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		check("create", created)
		fetched, err := g.client.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigRequest{TaskID: tid, ID: "cfg1"})
		if err != nil {
			t.Fatal(err)
		}
		check("get", fetched)
		all, err := g.client.ListTaskPushConfigs(ctx, &a2a.ListTaskPushConfigRequest{TaskID: tid})
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != 1 {
			t.Fatalf("list push configs: %d", len(all))
		}
		check("list", all[0])
		if err := g.client.DeleteTaskPushConfig(ctx, &a2a.DeleteTaskPushConfigRequest{TaskID: tid, ID: "cfg1"}); err != nil {
			t.Fatal(err)
		}
		if all, err = g.client.ListTaskPushConfigs(ctx, &a2a.ListTaskPushConfigRequest{TaskID: tid}); err != nil || len(all) != 0 {
			t.Fatalf("list after delete: %v, %d", err, len(all))
		}

		// Extended card.
		card, err := g.client.GetExtendedAgentCard(ctx, &a2a.GetExtendedAgentCardRequest{})
		if err != nil {
			t.Fatal(err)
		}
		admin := false
		for _, s := range card.Skills {
			admin = admin || s.ID == "admin"
		}
		if !admin {
			t.Fatalf("not the extended card: %#v", card.Skills)
		}
	})
}

// TestGRPCErrors: the core's errors as gRPC statuses with the code of the
// spec's mapping and an ErrorInfo detail, which the SDK client reads back
// into the same A2A error.
func TestGRPCErrors(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backendKind) {
		tg := newAuthGateway(t, b)
		g := newGRPCGateway(t, tg.as(token(t, "alice")))
		ctx := context.Background()

		_, err := g.raw.GetTask(ctx, &a2apb.GetTaskRequest{Id: "no-such-task"})
		wantStatus(t, err, codes.NotFound, "TASK_NOT_FOUND")
		if _, err := g.client.GetTask(ctx, &a2a.GetTaskRequest{ID: "no-such-task"}); !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Fatalf("the SDK reads %v, want ErrTaskNotFound", err)
		}
		_, err = g.raw.CancelTask(ctx, &a2apb.CancelTaskRequest{Id: "no-such-task"})
		wantStatus(t, err, codes.NotFound, "TASK_NOT_FOUND")

		_, err = g.raw.SendMessage(ctx, &a2apb.SendMessageRequest{})
		wantStatus(t, err, codes.InvalidArgument, "INVALID_PARAMS")

		done, err := g.client.SendMessage(ctx, userText("hello"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = g.raw.CancelTask(ctx, &a2apb.CancelTaskRequest{Id: string(done.(*a2a.Task).ID)})
		wantStatus(t, err, codes.FailedPrecondition, "TASK_NOT_CANCELABLE")

		var header metadata.MD
		anon := newGRPCGateway(t, tg)
		_, err = anon.raw.GetTask(ctx, &a2apb.GetTaskRequest{Id: "x"}, grpc.Header(&header))
		wantStatus(t, err, codes.Unauthenticated, "UNAUTHENTICATED")
		if w := header.Get("www-authenticate"); len(w) != 1 || !strings.HasPrefix(w[0], "Bearer ") {
			t.Fatalf("no challenge in the response headers: %v", header)
		}
		if _, err := anon.client.GetTask(ctx, &a2a.GetTaskRequest{ID: "x"}); !errors.Is(err, a2a.ErrUnauthenticated) {
			t.Fatalf("the SDK reads %v, want ErrUnauthenticated", err)
		}
		stream, err := anon.raw.SendStreamingMessage(ctx, &a2apb.SendMessageRequest{})
		if err == nil {
			_, err = stream.Recv()
		}
		wantStatus(t, err, codes.Unauthenticated, "UNAUTHENTICATED")

		// A version the gateway does not speak, named in the metadata.
		vctx := metadata.AppendToOutgoingContext(ctx, "a2a-version", "9.0")
		_, err = g.raw.GetTask(vctx, &a2apb.GetTaskRequest{Id: "x"})
		wantStatus(t, err, codes.FailedPrecondition, "VERSION_NOT_SUPPORTED")
	})
}

// TestGRPCStreams: SendStreamingMessage and SubscribeToTask send each event
// as the backend produces it: the first one reaches the client while the
// backend is still working, held until the test lets it finish.
func TestGRPCStreams(t *testing.T) {
	for _, tr := range grpcTransports {
		t.Run(tr.name, func(t *testing.T) { testGRPCStreams(t, tr.serve) })
	}
}

func testGRPCStreams(t *testing.T, serve func(*testing.T, *testGateway) *grpcGateway) {
	forEachBackend(t, func(t *testing.T, b backendKind) {
		hold := make(chan struct{})
		tg := newGateway(t, b.handler(t, hold), b.version, withAuth(t))
		g := serve(t, tg.as(token(t, "alice")))
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()

		stream, err := g.raw.SendStreamingMessage(ctx, &a2apb.SendMessageRequest{Message: &a2apb.Message{
			MessageId: "m1", Role: a2apb.Role_ROLE_USER, Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: "wait for it"}}}}})
		if err != nil {
			t.Fatal(err)
		}
		first, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		// The backend cannot finish before hold is closed: this event came
		// through while it was still working.
		taskID := first.GetTask().GetId()
		if taskID == "" {
			t.Fatalf("first event is not the task: %v", first)
		}

		// A second caller subscribes to the running task.
		sub, err := g.raw.SubscribeToTask(ctx, &a2apb.SubscribeToTaskRequest{Id: taskID})
		if err != nil {
			t.Fatal(err)
		}
		snap, err := sub.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if snap.GetTask().GetId() != taskID {
			t.Fatalf("subscribe's first event is not the task: %v", snap)
		}
		close(hold)

		last := func(s grpc.ServerStreamingClient[a2apb.StreamResponse]) a2apb.TaskState {
			t.Helper()
			state := a2apb.TaskState_TASK_STATE_UNSPECIFIED
			for {
				ev, err := s.Recv()
				if errors.Is(err, io.EOF) {
					return state
				}
				if err != nil {
					t.Fatal(err)
				}
				if su := ev.GetStatusUpdate(); su != nil {
					state = su.GetStatus().GetState()
				}
				if tk := ev.GetTask(); tk != nil {
					state = tk.GetStatus().GetState()
				}
			}
		}
		if s := last(stream); s != a2apb.TaskState_TASK_STATE_COMPLETED {
			t.Fatalf("stream ended in %s", s)
		}
		if s := last(sub); s != a2apb.TaskState_TASK_STATE_COMPLETED {
			t.Fatalf("subscription ended in %s", s)
		}

		// The SDK's streaming client reads the same stream.
		n := 0
		for ev, err := range g.client.SendStreamingMessage(ctx, userText("stream please")) {
			if err != nil {
				t.Fatal(err)
			}
			n++
			if su, ok := ev.(*a2a.TaskStatusUpdateEvent); ok && su.Status.State.Terminal() && su.Status.State != a2a.TaskStateCompleted {
				t.Fatalf("stream ended in %s", su.Status.State)
			}
		}
		if n < 3 {
			t.Fatalf("%d events", n)
		}
	})
}

// stalling is a 1.0 backend that never answers: it tells arrived when a
// call comes in and canceled when the gateway gives up on it.
type stalling struct{ arrived, canceled chan struct{} }

func (s stalling) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	// net/http notices a closed connection once the body is read.
	_, _ = io.Copy(io.Discard, r.Body)
	s.arrived <- struct{}{}
	<-r.Context().Done()
	s.canceled <- struct{}{}
}

// TestGRPCDeadlineAndCancel: the RPC's deadline bounds the backend call,
// and a caller that goes away ends it.
func TestGRPCDeadlineAndCancel(t *testing.T) {
	for _, tr := range grpcTransports {
		t.Run(tr.name, func(t *testing.T) { testGRPCDeadlineAndCancel(t, tr.serve) })
	}
}

func testGRPCDeadlineAndCancel(t *testing.T, serve func(*testing.T, *testGateway) *grpcGateway) {
	back := stalling{make(chan struct{}, 1), make(chan struct{}, 1)}
	g := serve(t, newGateway(t, back, dialect.Version10, func(a *AgentConfig) { a.Tasks.AllowUnknown = true }))
	get := &a2apb.GetTaskRequest{Id: "t1"}

	// Long enough for the call to reach the stalling backend on a loaded
	// machine, short enough for the test.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err := g.raw.GetTask(ctx, get)
	if status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("want DeadlineExceeded, got %v", err)
	}
	await(t, back.arrived, "the call to reach the backend")
	await(t, back.canceled, "the backend call to end with the deadline")

	ctx, cancel = context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := g.raw.GetTask(ctx, get)
		errc <- err
	}()
	await(t, back.arrived, "the second call to reach the backend")
	cancel()
	await(t, back.canceled, "the backend call to end with the caller")
	if err := <-errc; status.Code(err) != codes.Canceled {
		t.Fatalf("want Canceled, got %v", err)
	}

	ctx, cancel = context.WithCancel(context.Background())
	stream, err := g.raw.SubscribeToTask(ctx, &a2apb.SubscribeToTaskRequest{Id: "t1"})
	if err != nil {
		t.Fatal(err)
	}
	await(t, back.arrived, "the subscription to reach the backend")
	cancel()
	await(t, back.canceled, "the backend stream to end with the caller")
	if _, err := stream.Recv(); status.Code(err) != codes.Canceled {
		t.Fatalf("want Canceled, got %v", err)
	}
}

// TestGRPCNeedsOneAgent: several agents and none at "/" leave gRPC callers
// no agent to address: they are told so.
func TestGRPCNeedsOneAgent(t *testing.T) {
	gw, err := NewGateway([]*Agent{idleAgent(t, "a", "/a"), idleAgent(t, "b", "/b")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gw.Close)
	_, err = a2apb.NewA2AServiceClient(dialGRPC(t, serveH2C(t, gw))).GetTask(context.Background(), &a2apb.GetTaskRequest{Id: "x"})
	if st, _ := status.FromError(err); st.Code() != codes.Unimplemented || !strings.Contains(st.Message(), `none at "/"`) {
		t.Fatalf("want Unimplemented saying why, got %v", err)
	}
}

// await waits for a signal on c, bounded, so that a gateway that loses a
// cancellation fails the test by name instead of hanging the suite.
func await(t *testing.T, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(30 * time.Second):
		t.Fatalf("gave up waiting for %s", what)
	}
}
