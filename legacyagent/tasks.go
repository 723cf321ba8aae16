package legacyagent

import (
	"context"
	"encoding/json"
	"errors"
)

// tasksGet answers tasks/get with the task, keeping the last historyLength
// messages when it is positive and all of them when it is 0 or absent.
func (a *Agent) tasksGet(_ context.Context, params json.RawMessage) (any, *rpcError) {
	var p taskQueryParams
	if rerr := decodeParams(params, &p); rerr != nil {
		return nil, rerr
	}
	if p.ID == "" {
		return nil, errInvalidParams(errors.New("id: required"))
	}
	if err := validateHistoryLength(p.HistoryLength); err != nil {
		return nil, errInvalidParams(err)
	}
	rec, ok := a.store.lookup(p.ID)
	if !ok {
		return nil, errTaskNotFound(p.ID)
	}
	historyLength := 0
	if p.HistoryLength != nil {
		historyLength = *p.HistoryLength
	}
	return a.store.snapshot(rec, historyLength), nil
}

// tasksCancel answers tasks/cancel with the canceled task, or -32002 when
// the task is already terminal.
func (a *Agent) tasksCancel(_ context.Context, params json.RawMessage) (any, *rpcError) {
	var p taskIDParams
	if rerr := decodeParams(params, &p); rerr != nil {
		return nil, rerr
	}
	if p.ID == "" {
		return nil, errInvalidParams(errors.New("id: required"))
	}
	t, rerr := a.store.cancel(p.ID)
	if rerr != nil {
		return nil, rerr
	}
	return t, nil
}

// tasksResubscribe streams the current Task first, then its updates until it
// settles. A task that is already terminal or interrupted gets its Task
// event alone.
func (a *Agent) tasksResubscribe(params json.RawMessage) (subscription, *rpcError) {
	var p taskIDParams
	if rerr := decodeParams(params, &p); rerr != nil {
		return subscription{}, rerr
	}
	if p.ID == "" {
		return subscription{}, errInvalidParams(errors.New("id: required"))
	}
	rec, snap, cursor, ok := a.store.watch(p.ID)
	if !ok {
		return subscription{}, errTaskNotFound(p.ID)
	}
	if settled(snap.Status.State) {
		return subscription{first: snap}, nil
	}
	return subscription{first: snap, rec: rec, cursor: cursor}, nil
}
