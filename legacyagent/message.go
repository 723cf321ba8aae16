package legacyagent

import (
	"context"
	"encoding/json"
	"errors"
)

// accepted is what taking a message in produced: a direct reply, or a task
// and the cursor of the first event its snapshot does not show.
type accepted struct {
	reply    *message
	rec      *record
	snapshot task
	cursor   int

	// historyLength and blocking come from the request's configuration.
	historyLength int
	blocking      bool
}

// accept validates a message/send or message/stream request and acts on it:
// it answers, creates a task or resumes the one the message names.
func (a *Agent) accept(params json.RawMessage) (accepted, *rpcError) {
	var p messageSendParams
	if rerr := decodeParams(params, &p); rerr != nil {
		return accepted{}, rerr
	}
	if err := validateUserMessage(p.Message); err != nil {
		return accepted{}, errInvalidParams(err)
	}
	historyLength, push, err := checkConfiguration(p.Configuration)
	if err != nil {
		return accepted{}, errInvalidParams(err)
	}
	acc := accepted{historyLength: historyLength, blocking: blocking(p.Configuration)}
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

// checkConfiguration validates the optional MessageSendConfiguration and
// returns its history length and push config.
func checkConfiguration(c *sendConfiguration) (int, *pushConfig, error) {
	if c == nil {
		return 0, nil, nil
	}
	if c.AcceptedOutputModes == nil {
		return 0, nil, errors.New("configuration.acceptedOutputModes: required")
	}
	if err := validateHistoryLength(c.HistoryLength); err != nil {
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
func (a *Agent) messageSend(ctx context.Context, params json.RawMessage) (any, *rpcError) {
	acc, rerr := a.accept(params)
	if rerr != nil {
		return nil, rerr
	}
	if acc.reply != nil {
		return acc.reply, nil
	}
	if !acc.blocking {
		acc.snapshot.History = lastMessages(acc.snapshot.History, acc.historyLength)
		return acc.snapshot, nil
	}
	a.store.awaitSettled(ctx, a.done, acc.rec)
	return a.store.snapshot(acc.rec, acc.historyLength), nil
}

// messageStream streams message/stream: the reply Message alone, or a Task
// snapshot followed by every update until the task settles.
func (a *Agent) messageStream(params json.RawMessage) (subscription, *rpcError) {
	acc, rerr := a.accept(params)
	if rerr != nil {
		return subscription{}, rerr
	}
	if acc.reply != nil {
		return subscription{first: acc.reply}, nil
	}
	acc.snapshot.History = lastMessages(acc.snapshot.History, acc.historyLength)
	return subscription{first: acc.snapshot, rec: acc.rec, cursor: acc.cursor}, nil
}
