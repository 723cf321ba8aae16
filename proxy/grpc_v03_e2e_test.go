package proxy

import (
	"context"
	"errors"
	"slices"
	"testing"

	a2a03 "github.com/a2aproject/a2a-go/a2a"
	a2aclient03 "github.com/a2aproject/a2a-go/a2aclient"
	"google.golang.org/grpc"
)

// TestGRPCV03 drives the 0.3 service a2a.v1.A2AService with the official
// a2a-go 0.3 gRPC transport, against a 0.2.5 and a 1.0 backend: the same
// core, reached through the 0.3 proto.
func TestGRPCV03(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backendKind) {
		hold := make(chan struct{})
		tg := newGateway(t, b.handler(t, hold), b.version, withAuth(t)).as(token(t, "alice"))
		g := newGRPCGateway(t, tg)
		client := a2aclient03.NewGRPCTransport(dialGRPC(t, g.addr, grpc.WithPerRPCCredentials(bearer{&tg.token})))
		defer client.Destroy()
		ctx := context.Background()
		text := func(s string) *a2a03.MessageSendParams {
			return &a2a03.MessageSendParams{Message: a2a03.NewMessage(a2a03.MessageRoleUser, a2a03.TextPart{Text: s})}
		}

		card, err := client.GetAgentCard(ctx)
		if err != nil || card.URL != tg.agent.cfg.PublicURL || !slices.ContainsFunc(card.Skills, func(s a2a03.AgentSkill) bool { return s.ID == "admin" }) {
			t.Fatalf("GetAgentCard, the extended card: %v %+v", err, card)
		}

		res, err := client.SendMessage(ctx, text("hello 0.3"))
		if err != nil {
			t.Fatal(err)
		}
		task, ok := res.(*a2a03.Task)
		if !ok || task.Status.State != a2a03.TaskStateCompleted || len(task.Artifacts) == 0 {
			t.Fatalf("send: %#v", res)
		}
		if p, ok := task.Artifacts[0].Parts[0].(a2a03.TextPart); !ok || p.Text != "done: hello 0.3" {
			t.Fatalf("artifact: %#v", task.Artifacts[0].Parts)
		}
		one := 1
		got, err := client.GetTask(ctx, &a2a03.TaskQueryParams{ID: task.ID, HistoryLength: &one})
		if err != nil || got.ID != task.ID || len(got.History) != 1 {
			t.Fatalf("get: %v %#v", err, got)
		}
		if res, err = client.SendMessage(ctx, text("what is 0.3?")); err != nil {
			t.Fatal(err)
		} else if _, ok := res.(*a2a03.Message); !ok {
			t.Fatalf("direct message: %#v", res)
		}

		// Push config CRUD on a task waiting for input.
		res, err = client.SendMessage(ctx, text("input please"))
		if err != nil {
			t.Fatal(err)
		}
		tid := res.(*a2a03.Task).ID
		set, err := client.SetTaskPushConfig(ctx, &a2a03.TaskPushConfig{TaskID: tid, Config: a2a03.PushConfig{ID: "cfg1", URL: "https://hooks.example/a2a", Token: "tok"}})
		if err != nil || set.Config.ID != "cfg1" || set.Config.URL != "https://hooks.example/a2a" {
			t.Fatalf("set: %v %#v", err, set)
		}
		if c, err := client.GetTaskPushConfig(ctx, &a2a03.GetTaskPushConfigParams{TaskID: tid, ConfigID: "cfg1"}); err != nil || c.Config.Token != "tok" {
			t.Fatalf("get config: %v %#v", err, c)
		}
		if l, err := client.ListTaskPushConfig(ctx, &a2a03.ListTaskPushConfigParams{TaskID: tid}); err != nil || len(l) != 1 {
			t.Fatalf("list configs: %v %d", err, len(l))
		}
		if err := client.DeleteTaskPushConfig(ctx, &a2a03.DeleteTaskPushConfigParams{TaskID: tid, ConfigID: "cfg1"}); err != nil {
			t.Fatal(err)
		}

		// A stream: the first event arrives while the backend is held.
		var taskID a2a03.TaskID
		n := 0
		for ev, err := range client.SendStreamingMessage(ctx, text("wait for it")) {
			if err != nil {
				t.Fatal(err)
			}
			n++
			if n == 1 {
				tk, ok := ev.(*a2a03.Task)
				if !ok {
					t.Fatalf("first event %#v", ev)
				}
				taskID = tk.ID
				close(hold)
			}
			if su, ok := ev.(*a2a03.TaskStatusUpdateEvent); ok && su.Status.State.Terminal() && su.Status.State != a2a03.TaskStateCompleted {
				t.Fatalf("stream ended in %s", su.Status.State)
			}
		}
		if n < 2 {
			t.Fatalf("%d events", n)
		}
		if c, err := client.CancelTask(ctx, &a2a03.TaskIDParams{ID: taskID}); err == nil {
			t.Fatalf("canceled a completed task: %#v", c)
		}

		_, err = client.GetTask(ctx, &a2a03.TaskQueryParams{ID: "no-such-task"})
		if !errors.Is(err, a2a03.ErrTaskNotFound) {
			t.Fatalf("unknown task: %v", err)
		}
		_, err = a2aclient03.NewGRPCTransport(dialGRPC(t, g.addr)).GetTask(ctx, &a2a03.TaskQueryParams{ID: "x"})
		if !errors.Is(err, a2a03.ErrUnauthenticated) {
			t.Fatalf("no token: %v", err)
		}
	})
}
