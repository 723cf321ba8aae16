package main

import (
	"context"
	"fmt"
	"iter"

	"github.com/a2agate/gateway/interop/harness"
	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
)

// adapter is a2a-go v2.3.1's client as the shared scenarios' Client.
type adapter struct{ sdk *a2aclient.Client }

// adapt and resolve are how the harness dials: it resolves the card, then
// builds the client (newClient) and adapts it.
func adapt(sdk *a2aclient.Client) harness.Client { return adapter{sdk} }

func resolve(ctx context.Context, s harness.Setup) (*a2a.AgentCard, error) {
	return agentcard.NewResolver(s.HTTPClient).Resolve(ctx, s.BaseURL)
}

func (a adapter) Send(ctx context.Context, req harness.SendRequest) (harness.Result, error) {
	res, err := a.sdk.SendMessage(ctx, sendParams(req))
	if err != nil {
		return harness.Result{}, err
	}
	return harness.ResultOf(res, task, message), nil
}

func (a adapter) Stream(ctx context.Context, req harness.SendRequest) iter.Seq2[harness.Event, error] {
	return harness.Events(a.sdk.SendStreamingMessage(ctx, sendParams(req)), event)
}

func (a adapter) Subscribe(ctx context.Context, taskID string) iter.Seq2[harness.Event, error] {
	return harness.Events(a.sdk.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: a2a.TaskID(taskID)}), event)
}

func (a adapter) GetTask(ctx context.Context, taskID string, historyLength *int) (*harness.Task, error) {
	t, err := a.sdk.GetTask(ctx, &a2a.GetTaskRequest{ID: a2a.TaskID(taskID), HistoryLength: historyLength})
	return task(t), err
}

func (a adapter) Cancel(ctx context.Context, taskID string) (*harness.Task, error) {
	t, err := a.sdk.CancelTask(ctx, &a2a.CancelTaskRequest{ID: a2a.TaskID(taskID)})
	return task(t), err
}

func (a adapter) SetPushConfig(ctx context.Context, config harness.PushConfig) (*harness.PushConfig, error) {
	sdk := a2a.PushConfig{Tenant: config.Tenant, TaskID: a2a.TaskID(config.TaskID), ID: config.ID, URL: config.URL, Token: config.Token}
	if config.Auth != nil {
		// 1.0 names one scheme.
		if len(config.Auth.Schemes) != 1 {
			panic(fmt.Sprintf("a 1.0 push config names one auth scheme, not %q", config.Auth.Schemes))
		}
		sdk.Auth = &a2a.PushAuthInfo{Scheme: config.Auth.Schemes[0], Credentials: config.Auth.Credentials}
	}
	created, err := a.sdk.CreateTaskPushConfig(ctx, &sdk)
	return pushConfig(created), err
}

func (a adapter) GetPushConfig(ctx context.Context, taskID, configID string) (*harness.PushConfig, error) {
	got, err := a.sdk.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigRequest{TaskID: a2a.TaskID(taskID), ID: configID})
	return pushConfig(got), err
}

func (a adapter) ListPushConfigs(ctx context.Context, taskID string) ([]*harness.PushConfig, error) {
	listed, err := a.sdk.ListTaskPushConfigs(ctx, &a2a.ListTaskPushConfigRequest{TaskID: a2a.TaskID(taskID)})
	return harness.Map(listed, pushConfig), err
}

func (a adapter) DeletePushConfig(ctx context.Context, taskID, configID string) error {
	return a.sdk.DeleteTaskPushConfig(ctx, &a2a.DeleteTaskPushConfigRequest{TaskID: a2a.TaskID(taskID), ID: configID})
}

func sendParams(req harness.SendRequest) *a2a.SendMessageRequest {
	msg := a2a.NewMessage(a2a.MessageRoleUser, sdkParts(req.Parts)...)
	msg.TaskID = a2a.TaskID(req.TaskID)
	msg.ContextID = req.ContextID
	params := &a2a.SendMessageRequest{Message: msg}
	if req.Blocking != nil || req.HistoryLength != nil {
		params.Config = &a2a.SendMessageConfig{ReturnImmediately: req.Blocking != nil && !*req.Blocking, HistoryLength: req.HistoryLength}
	}
	return params
}

func sdkParts(parts []harness.Part) []*a2a.Part {
	out := make([]*a2a.Part, len(parts))
	for i, p := range parts {
		out[i] = &a2a.Part{MediaType: p.MediaType, Filename: p.Filename, Metadata: p.Metadata}
		switch p.Kind {
		case harness.PartText:
			out[i].Content = a2a.Text(p.Text)
		case harness.PartData:
			out[i].Content = a2a.Data{Value: p.Data}
		case harness.PartRaw:
			out[i].Content = a2a.Raw(p.Raw)
		case harness.PartURL:
			out[i].Content = a2a.URL(p.URL)
		default:
			panic("no a2a-go v2.3.1 part for kind " + p.Kind)
		}
	}
	return out
}

func part(p *a2a.Part) harness.Part {
	if p == nil {
		return harness.Part{Kind: "nil part"}
	}
	out := harness.Part{MediaType: p.MediaType, Filename: p.Filename, Metadata: p.Metadata}
	// The scenarios compared the metadata printed, where empty is nil.
	if len(out.Metadata) == 0 {
		out.Metadata = nil
	}
	switch c := p.Content.(type) {
	case a2a.Text:
		out.Kind, out.Text = harness.PartText, string(c)
	case a2a.Data:
		out.Kind, out.Data = harness.PartData, c.Value
	case a2a.Raw:
		out.Kind, out.Raw = harness.PartRaw, []byte(c)
	case a2a.URL:
		out.Kind, out.URL = harness.PartURL, string(c)
	default:
		out.Kind, out.Text = fmt.Sprintf("%T", c), fmt.Sprintf("%#v", c)
	}
	return out
}

// states and roles map 1.0's names to the neutral ones; any other name
// maps to a mark no neutral name equals.
var states = map[a2a.TaskState]string{
	a2a.TaskStateSubmitted:     harness.StateSubmitted,
	a2a.TaskStateWorking:       harness.StateWorking,
	a2a.TaskStateInputRequired: harness.StateInputRequired,
	a2a.TaskStateAuthRequired:  harness.StateAuthRequired,
	a2a.TaskStateCompleted:     harness.StateCompleted,
	a2a.TaskStateCanceled:      harness.StateCanceled,
	a2a.TaskStateFailed:        harness.StateFailed,
	a2a.TaskStateRejected:      harness.StateRejected,
}

var roles = map[a2a.MessageRole]string{
	a2a.MessageRoleUser:  harness.RoleUser,
	a2a.MessageRoleAgent: harness.RoleAgent,
}

func state(s a2a.TaskState) string {
	if name, ok := states[s]; ok {
		return name
	}
	return "unmapped state " + s.String()
}

func role(r a2a.MessageRole) string {
	if name, ok := roles[r]; ok {
		return name
	}
	return "unmapped role " + r.String()
}

func message(m *a2a.Message) *harness.Message {
	if m == nil {
		return nil
	}
	return &harness.Message{ID: m.ID, ContextID: m.ContextID, TaskID: string(m.TaskID), Role: role(m.Role), Parts: harness.Map(m.Parts, part)}
}

func taskStatus(s a2a.TaskStatus) harness.Status {
	return harness.Status{State: state(s.State), Message: message(s.Message)}
}

func artifact(a *a2a.Artifact) harness.Artifact {
	if a == nil {
		return harness.Artifact{}
	}
	return harness.Artifact{ID: string(a.ID), Name: a.Name, Parts: harness.Map(a.Parts, part)}
}

func task(t *a2a.Task) *harness.Task {
	if t == nil {
		return nil
	}
	return &harness.Task{
		ID: string(t.ID), ContextID: t.ContextID, Status: taskStatus(t.Status),
		History: harness.Map(t.History, message), Artifacts: harness.Map(t.Artifacts, artifact),
	}
}

func pushConfig(p *a2a.PushConfig) *harness.PushConfig {
	if p == nil {
		return nil
	}
	out := &harness.PushConfig{Tenant: p.Tenant, TaskID: string(p.TaskID), ID: p.ID, URL: p.URL, Token: p.Token}
	if auth := p.Auth; auth != nil {
		out.Auth = &harness.PushAuth{Schemes: []string{auth.Scheme}, Credentials: auth.Credentials}
	}
	return out
}

func event(e a2a.Event) harness.Event {
	out := harness.Event{Kind: fmt.Sprintf("%T", e), TaskID: string(e.TaskInfo().TaskID), SDK: e}
	switch e := e.(type) {
	case *a2a.Task:
		out.Kind, out.Task = harness.EventTask, task(e)
	case *a2a.Message:
		out.Kind, out.Message = harness.EventMessage, message(e)
	case *a2a.TaskStatusUpdateEvent:
		out.Status = taskStatus(e.Status)
		out.Kind = "status:" + out.Status.State
	case *a2a.TaskArtifactUpdateEvent:
		out.Kind, out.Artifact = harness.EventArtifact, artifact(e.Artifact)
	}
	return out
}
