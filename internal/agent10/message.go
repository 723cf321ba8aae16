package agent10

import (
	"context"
	"encoding/json"
	"net/http"
)

// accepted is what taking a message in produced: a direct reply, or a task
// and the cursor of the first event its snapshot does not show.
type accepted struct {
	reply    *message
	rec      *record
	snapshot task
	cursor   int

	// historyLength and returnImmediately come from the configuration.
	historyLength     *int32
	returnImmediately bool
}

// accept validates a SendMessage or SendStreamingMessage request and acts
// on it: it answers, creates a task or resumes the one the message names.
func (a *Agent) accept(params json.RawMessage) (accepted, *rpcError) {
	var p sendMessageRequest
	if rerr := decodeParams(params, &p); rerr != nil {
		return accepted{}, rerr
	}
	if err := validateUserMessage(p.Message); err != nil {
		return accepted{}, errInvalidParams(err)
	}
	var acc accepted
	var push *pushConfig
	if c := p.Configuration; c != nil {
		if err := validateHistoryLength(c.HistoryLength, "configuration.historyLength"); err != nil {
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
	msg := *p.Message

	if msg.TaskID != "" {
		rec, snap, cursor, rerr := a.store.resume(msg)
		if rerr != nil {
			return accepted{}, rerr
		}
		a.storePush(rec, push)
		a.spawn(rec, func(ctx context.Context) { a.finish(ctx, rec, msg) })
		acc.rec, acc.snapshot, acc.cursor = rec, snap, cursor
		return acc, nil
	}

	b := classify(firstText(msg))
	if b == answer {
		if msg.ContextID == "" {
			msg.ContextID = newID()
		}
		acc.reply = answerMessage(msg)
		return acc, nil
	}
	rec, snap := a.store.create(msg)
	a.storePush(rec, push)
	a.spawn(rec, func(ctx context.Context) { a.runNew(ctx, rec, b, msg) })
	acc.rec, acc.snapshot = rec, snap
	return acc, nil
}

// sendMessage answers SendMessage with {"message":..} or {"task":..}: the
// task as created when returnImmediately is set, otherwise once it is
// terminal or interrupted (returnImmediately defaults to false).
func (a *Agent) sendMessage(r *http.Request, params json.RawMessage) (any, *rpcError) {
	acc, rerr := a.accept(params)
	if rerr != nil {
		return nil, rerr
	}
	if acc.reply != nil {
		return sendMessageResponse{Message: acc.reply}, nil
	}
	if acc.returnImmediately {
		acc.snapshot.History = lastMessages(acc.snapshot.History, acc.historyLength)
		return sendMessageResponse{Task: &acc.snapshot}, nil
	}
	a.store.awaitSettled(r.Context(), a.done, acc.rec)
	t := a.store.snapshot(acc.rec, acc.historyLength)
	return sendMessageResponse{Task: &t}, nil
}

// sendStreamingMessage streams {"message":..} alone, or {"task":..}
// followed by every update until the task settles.
func (a *Agent) sendStreamingMessage(params json.RawMessage) (subscription, *rpcError) {
	acc, rerr := a.accept(params)
	if rerr != nil {
		return subscription{}, rerr
	}
	if acc.reply != nil {
		return subscription{first: streamResponse{Message: acc.reply}}, nil
	}
	acc.snapshot.History = lastMessages(acc.snapshot.History, acc.historyLength)
	return subscription{first: streamResponse{Task: &acc.snapshot}, rec: acc.rec, cursor: acc.cursor}, nil
}
