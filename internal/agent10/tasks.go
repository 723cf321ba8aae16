package agent10

import (
	"encoding/json"
	"errors"
	"net/http"
)

var errIDRequired = errors.New("id: required")

// getTask answers GetTask with the bare Task, its history trimmed to
// historyLength (unset: all, 0: none).
func (a *Agent) getTask(_ *http.Request, params json.RawMessage) (any, *rpcError) {
	var p getTaskRequest
	if rerr := decodeParams(params, &p); rerr != nil {
		return nil, rerr
	}
	if p.ID == "" {
		return nil, errInvalidParams(errIDRequired)
	}
	if err := validateHistoryLength(p.HistoryLength, "historyLength"); err != nil {
		return nil, errInvalidParams(err)
	}
	rec, ok := a.store.lookup(p.ID)
	if !ok {
		return nil, errTaskNotFound(p.ID)
	}
	return a.store.snapshot(rec, p.HistoryLength), nil
}

// cancelTask answers CancelTask with the canceled Task, or -32002 when the
// task is already terminal.
func (a *Agent) cancelTask(_ *http.Request, params json.RawMessage) (any, *rpcError) {
	var p cancelTaskRequest
	if rerr := decodeParams(params, &p); rerr != nil {
		return nil, rerr
	}
	if p.ID == "" {
		return nil, errInvalidParams(errIDRequired)
	}
	t, rerr := a.store.cancel(p.ID)
	if rerr != nil {
		return nil, rerr
	}
	return t, nil
}

// subscribeToTask streams {"task":..} first, then the task's updates until
// it settles; an interrupted task gets its task event alone. A terminal
// task is an UnsupportedOperationError (a2a.proto, SubscribeToTask).
func (a *Agent) subscribeToTask(params json.RawMessage) (subscription, *rpcError) {
	var p subscribeToTaskRequest
	if rerr := decodeParams(params, &p); rerr != nil {
		return subscription{}, rerr
	}
	if p.ID == "" {
		return subscription{}, errInvalidParams(errIDRequired)
	}
	rec, snap, cursor, ok := a.store.watch(p.ID)
	if !ok {
		return subscription{}, errTaskNotFound(p.ID)
	}
	if state := snap.Status.State; isTerminal(state) {
		return subscription{}, newError(codeUnsupportedOperation,
			"Task "+p.ID+" is in terminal state "+state+" and cannot be subscribed to",
			map[string]string{"taskId": p.ID, "state": state})
	}
	if settled(snap.Status.State) {
		return subscription{first: streamResponse{Task: &snap}}, nil
	}
	return subscription{first: streamResponse{Task: &snap}, rec: rec, cursor: cursor}, nil
}
