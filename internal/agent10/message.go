package agent10

import (
	"net/http"

	"github.com/a2agate/gateway/internal/agentcore"
)

// accepted is what taking a message in produced, with the history length
// and returnImmediately flag of the request's configuration.
type accepted struct {
	agentcore.Accepted[message, artifact, pushConfig]
	historyLength     *int32
	returnImmediately bool
}

// accept validates a SendMessage or SendStreamingMessage request and acts
// on it: it answers, creates a task or resumes the one the message names.
func (a *Agent) accept(p *sendMessageRequest) (accepted, *agentcore.Error) {
	if err := validateUserMessage(p.Message); err != nil {
		return accepted{}, errInvalidParams(err)
	}
	var acc accepted
	var push *pushConfig
	if c := p.Configuration; c != nil {
		if err := agentcore.NotNegative("configuration.historyLength", c.HistoryLength); err != nil {
			return accepted{}, errInvalidParams(err)
		}
		if c.TaskPushNotificationConfig != nil {
			if err := validatePushConfig(c.TaskPushNotificationConfig, "configuration.taskPushNotificationConfig"); err != nil {
				return accepted{}, errInvalidParams(err)
			}
			push = c.TaskPushNotificationConfig
		}
		acc.historyLength, acc.returnImmediately = c.HistoryLength, c.ReturnImmediately
	}
	var rerr *agentcore.Error
	acc.Accepted, rerr = a.core.Accept(*p.Message, push)
	if rerr != nil {
		return accepted{}, rerr
	}
	return acc, nil
}

// sendMessage answers SendMessage with {"message":..} or {"task":..}: the
// task as created when returnImmediately is set, otherwise once it is
// terminal or interrupted (returnImmediately defaults to false).
func (a *Agent) sendMessage(r *http.Request, p *sendMessageRequest) (any, *agentcore.Error) {
	acc, rerr := a.accept(p)
	if rerr != nil {
		return nil, rerr
	}
	if acc.Reply != nil {
		return sendMessageResponse{Message: acc.Reply}, nil
	}
	snap := acc.Snapshot
	if !acc.returnImmediately {
		snap = a.core.AwaitSettled(r.Context(), acc.Rec)
	}
	t := renderTask(snap, acc.historyLength)
	return sendMessageResponse{Task: &t}, nil
}

// sendStreamingMessage streams {"message":..} alone, or {"task":..}
// followed by every update until the task settles.
func (a *Agent) sendStreamingMessage(_ *http.Request, p *sendMessageRequest) (agentcore.Subscription, *agentcore.Error) {
	acc, rerr := a.accept(p)
	if rerr != nil {
		return agentcore.Subscription{}, rerr
	}
	if acc.Reply != nil {
		return a.core.Subscribe(streamResponse{Message: acc.Reply}, nil, 0, renderEvent), nil
	}
	t := renderTask(acc.Snapshot, acc.historyLength)
	return a.core.Subscribe(streamResponse{Task: &t}, acc.Rec, acc.Cursor, renderEvent), nil
}
