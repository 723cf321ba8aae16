package legacyagent

import (
	"errors"
	"net/http"

	"github.com/a2agate/gateway/internal/agentcore"
)

// accepted is what taking a message in produced, with the history length
// and blocking flag of the request's configuration.
type accepted struct {
	agentcore.Accepted[message, artifact, pushConfig]
	historyLength int
	blocking      bool
}

// accept validates a message/send or message/stream request and acts on it:
// it answers, creates a task or resumes the one the message names.
func (a *Agent) accept(p *messageSendParams) (accepted, *agentcore.Error) {
	if err := validateUserMessage(p.Message); err != nil {
		return accepted{}, errInvalidParams(err)
	}
	historyLength, push, err := checkConfiguration(p.Configuration)
	if err != nil {
		return accepted{}, errInvalidParams(err)
	}
	acc, rerr := a.core.Accept(*p.Message, push)
	if rerr != nil {
		return accepted{}, rerr
	}
	return accepted{Accepted: acc, historyLength: historyLength, blocking: blocking(p.Configuration)}, nil
}

// checkConfiguration validates the optional MessageSendConfiguration and
// returns its history length and push config.
func checkConfiguration(c *sendConfiguration) (int, *pushConfig, error) {
	if c == nil {
		return 0, nil, nil
	}
	if c.AcceptedOutputModes == nil {
		return 0, nil, errors.New("configuration.acceptedOutputModes: required")
	}
	if err := agentcore.NotNegative("historyLength", c.HistoryLength); err != nil {
		return 0, nil, errors.New("configuration." + err.Error())
	}
	if c.PushNotificationConfig != nil {
		if err := validatePushConfig(c.PushNotificationConfig); err != nil {
			return 0, nil, errors.New("configuration." + err.Error())
		}
	}
	historyLength := 0
	if c.HistoryLength != nil {
		historyLength = *c.HistoryLength
	}
	return historyLength, c.PushNotificationConfig, nil
}

// blocking reports whether message/send waits for the task to settle. The
// 0.2.5 specification leaves the default open; every reference server blocks.
func blocking(c *sendConfiguration) bool {
	return c == nil || c.Blocking == nil || *c.Blocking
}

// messageSend answers message/send with the reply Message or the Task: as
// created when configuration.blocking is false, otherwise once it is
// terminal or interrupted.
func (a *Agent) messageSend(r *http.Request, p *messageSendParams) (any, *agentcore.Error) {
	acc, rerr := a.accept(p)
	if rerr != nil {
		return nil, rerr
	}
	if acc.Reply != nil {
		return acc.Reply, nil
	}
	if !acc.blocking {
		return renderTask(acc.Snapshot, acc.historyLength), nil
	}
	return renderTask(a.core.AwaitSettled(r.Context(), acc.Rec), acc.historyLength), nil
}

// messageStream streams message/stream: the reply Message alone, or a Task
// snapshot followed by every update until the task settles.
func (a *Agent) messageStream(_ *http.Request, p *messageSendParams) (agentcore.Subscription, *agentcore.Error) {
	acc, rerr := a.accept(p)
	if rerr != nil {
		return agentcore.Subscription{}, rerr
	}
	if acc.Reply != nil {
		return a.core.Subscribe(acc.Reply, nil, 0, renderEvent), nil
	}
	return a.core.Subscribe(renderTask(acc.Snapshot, acc.historyLength), acc.Rec, acc.Cursor, renderEvent), nil
}
