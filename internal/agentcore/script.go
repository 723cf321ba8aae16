package agentcore

import (
	"context"
	"strings"
)

// behaviour is what the agent does with a new message.
type behaviour int

const (
	answer behaviour = iota // reply with a message, no task
	fail
	askInput
	waitForCancel
	complete
)

// Question is the status message of an input-required task.
const Question = "What is your name?"

// classify picks the behaviour from the message's first text part.
func classify(text string) behaviour {
	t := strings.ToLower(strings.TrimSpace(text))
	switch {
	case strings.HasSuffix(t, "?"):
		return answer
	case strings.HasPrefix(t, "fail"):
		return fail
	case strings.HasPrefix(t, "input"):
		return askInput
	case strings.HasPrefix(t, "wait"):
		return waitForCancel
	}
	return complete
}

// runNew advances a task created by msg from submitted to where b leads.
func (c *Core[M, A, C]) runNew(ctx context.Context, rec *Record[M, A, C], b behaviour, msg M) {
	if !c.pause(ctx) || !c.store.setStatus(rec, StateWorking, nil) {
		return
	}
	switch b {
	case fail:
		if c.pause(ctx) {
			c.store.setStatus(rec, StateFailed, c.agentMessage(rec,
				`Failed as asked: the message starts with "fail".`))
		}
	case askInput:
		if c.pause(ctx) {
			c.store.setStatus(rec, StateInputRequired, c.agentMessage(rec, Question))
		}
	case waitForCancel:
		// A nil Hold blocks forever: only a cancel or Close ends the wait.
		select {
		case <-ctx.Done():
		case <-c.Opts.Hold:
			c.finish(ctx, rec, msg)
		}
	default:
		c.finish(ctx, rec, msg)
	}
}

// finish publishes the result artifact for msg, then completes the task.
// The artifact holds "done: <text>" and a copy of every non-text part of
// msg, so that file and data parts provably survive a round trip.
func (c *Core[M, A, C]) finish(ctx context.Context, rec *Record[M, A, C], msg M) {
	art := c.dialect.ResultArtifact("done: "+c.dialect.FirstText(msg), msg)
	if c.pause(ctx) && c.store.addArtifact(rec, art) && c.pause(ctx) {
		c.store.setStatus(rec, StateCompleted, nil)
	}
}

// agentMessage is a status message from the agent about rec's task.
func (c *Core[M, A, C]) agentMessage(rec *Record[M, A, C], text string) *M {
	m := c.dialect.AgentMessage(text, rec.task.ID, rec.task.ContextID)
	return &m
}
