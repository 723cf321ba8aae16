package legacyagent

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

// question is the status message of an input-required task.
const question = "What is your name?"

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

// firstText returns the text of msg's first text part, or "".
func firstText(msg message) string {
	for _, p := range msg.Parts {
		if p.Kind == kindText && p.Text != nil {
			return *p.Text
		}
	}
	return ""
}

// runNew advances a task created by msg from submitted to where b leads.
func (a *Agent) runNew(ctx context.Context, rec *record, b behaviour, msg message) {
	if !a.pause(ctx) || !a.store.setStatus(rec, stateWorking, nil) {
		return
	}
	switch b {
	case fail:
		if a.pause(ctx) {
			a.store.setStatus(rec, stateFailed, agentMessage(rec,
				`Failed as asked: the message starts with "fail".`))
		}
	case askInput:
		if a.pause(ctx) {
			a.store.setStatus(rec, stateInputRequired, agentMessage(rec, question))
		}
	case waitForCancel:
		// A nil Hold blocks forever: only a cancel or Close ends the wait.
		select {
		case <-ctx.Done():
		case <-a.opts.Hold:
			a.finish(ctx, rec, msg)
		}
	default:
		a.finish(ctx, rec, msg)
	}
}

// finish publishes the result artifact for msg, then completes the task.
func (a *Agent) finish(ctx context.Context, rec *record, msg message) {
	if a.pause(ctx) && a.store.addArtifact(rec, resultArtifact(msg)) && a.pause(ctx) {
		a.store.setStatus(rec, stateCompleted, nil)
	}
}

// resultArtifact is "done: <text>" followed by a copy of every non-text part
// of msg, so that file and data parts provably survive a round trip.
func resultArtifact(msg message) artifact {
	parts := []part{textPart("done: " + firstText(msg))}
	for _, p := range msg.Parts {
		if p.Kind != kindText {
			parts = append(parts, p)
		}
	}
	return artifact{ArtifactID: newID(), Name: "result", Parts: parts}
}

// answerMessage is the direct reply to a question.
func answerMessage(msg message) *message {
	return &message{
		Kind:      kindMessage,
		MessageID: newID(),
		Role:      roleAgent,
		Parts:     []part{textPart("You asked: " + strings.TrimSpace(firstText(msg)))},
		ContextID: msg.ContextID,
	}
}

// agentMessage is a status message from the agent about rec's task.
func agentMessage(rec *record, text string) *message {
	return &message{
		Kind:      kindMessage,
		MessageID: newID(),
		Role:      roleAgent,
		Parts:     []part{textPart(text)},
		ContextID: rec.task.ContextID,
		TaskID:    rec.task.ID,
	}
}

func textPart(text string) part { return part{Kind: kindText, Text: &text} }
