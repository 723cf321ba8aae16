package legacyagent

import (
	"net/http"

	"github.com/a2agate/gateway/internal/agentcore"
)

// tasksGet answers tasks/get with the task, keeping the last historyLength
// messages when it is positive and all of them when it is 0 or absent (none
// when absent, like the JS 0.2.5 server, with Options.Like JS025).
func (a *Agent) tasksGet(_ *http.Request, p *taskQueryParams) (any, *agentcore.Error) {
	if err := agentcore.NotNegative("historyLength", p.HistoryLength); err != nil {
		return nil, errInvalidParams(err)
	}
	t, rerr := a.core.Lookup(p.ID)
	if rerr != nil {
		return nil, rerr
	}
	historyLength := 0
	switch {
	case p.HistoryLength != nil:
		historyLength = *p.HistoryLength
	case a.core.Opts.Like == agentcore.JS025:
		t.History = nil
	}
	return renderTask(t, historyLength), nil
}

// tasksCancel answers tasks/cancel with the canceled task, or -32002 when
// the task is already terminal.
func (a *Agent) tasksCancel(_ *http.Request, p *taskIDParams) (any, *agentcore.Error) {
	t, rerr := a.core.Cancel(p.ID)
	if rerr != nil {
		return nil, rerr
	}
	return renderTask(t, 0), nil
}

// tasksResubscribe streams the current Task first, then its updates until it
// settles. A task that is already terminal or interrupted gets its Task
// event alone.
func (a *Agent) tasksResubscribe(_ *http.Request, p *taskIDParams) (agentcore.Subscription, *agentcore.Error) {
	return a.core.Resubscribe(p.ID, func(snap agentcore.Task[message, artifact]) (any, *agentcore.Error) {
		return renderTask(snap, 0), nil
	}, renderEvent)
}
