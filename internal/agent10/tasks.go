package agent10

import (
	"net/http"

	"github.com/a2agate/gateway/internal/agentcore"
)

// getTask answers GetTask with the bare Task, its history trimmed to
// historyLength (unset: all, 0: none).
func (a *Agent) getTask(_ *http.Request, p *getTaskRequest) (any, *agentcore.Error) {
	if err := agentcore.NotNegative("historyLength", p.HistoryLength); err != nil {
		return nil, errInvalidParams(err)
	}
	t, rerr := a.core.Lookup(p.ID)
	if rerr != nil {
		return nil, rerr
	}
	return renderTask(t, p.HistoryLength), nil
}

// cancelTask answers CancelTask with the canceled Task, or -32002 when the
// task is already terminal.
func (a *Agent) cancelTask(_ *http.Request, p *cancelTaskRequest) (any, *agentcore.Error) {
	t, rerr := a.core.Cancel(p.ID)
	if rerr != nil {
		return nil, rerr
	}
	return renderTask(t, nil), nil
}

// subscribeToTask streams {"task":..} first, then the task's updates until
// it settles; an interrupted task gets its task event alone. A terminal
// task is an UnsupportedOperationError (a2a.proto, SubscribeToTask).
func (a *Agent) subscribeToTask(_ *http.Request, p *subscribeToTaskRequest) (agentcore.Subscription, *agentcore.Error) {
	return a.core.Resubscribe(p.ID, func(snap agentcore.Task[message, artifact]) (any, *agentcore.Error) {
		if state := snap.Status.State; state.Terminal() && a.core.Opts.Like == agentcore.GoV2 {
			return nil, agentcore.NewError(agentcore.CodeTaskNotFound, "no active execution", map[string]string{"taskId": p.ID})
		}
		if state := snap.Status.State; state.Terminal() {
			return nil, newError(codeUnsupportedOperation,
				"Task "+p.ID+" is in terminal state "+stateNames[state]+" and cannot be subscribed to",
				map[string]string{"taskId": p.ID, "state": stateNames[state]})
		}
		t := renderTask(snap, nil)
		return streamResponse{Task: &t}, nil
	}, renderEvent)
}
