package main

import (
	"strings"
	"time"

	"github.com/a2agate/gateway/interop/harness"
	"github.com/a2aproject/a2a-go/v2/a2a"
)

// The scripted behaviour of interop/agents/script.mjs, ported step for
// step: the clients assert identical outcomes against every backend, so
// texts, states and the order of events must match the JS original.

const slowDelay = 400 * time.Millisecond // SLOW_MS

type stepKind int

const (
	stepTask stepKind = iota
	stepMessage
	stepStatus
	stepArtifact
	stepDelay
	stepWaitForCancel
)

type step struct {
	kind  stepKind
	state a2a.TaskState
	text  string // message text, or status message text ("" for none)
	parts []*a2a.Part
	delay time.Duration
}

func firstText(parts []*a2a.Part) string {
	for _, p := range parts {
		if t, ok := p.Content.(a2a.Text); ok {
			return string(t)
		}
	}
	return ""
}

// plan returns the ordered steps of one execution; isContinuation is true
// when the message continues a task that was waiting for input.
func plan(parts []*a2a.Part, isContinuation bool) []step {
	text := firstText(parts)
	var echoes []*a2a.Part
	for _, p := range parts {
		if _, isText := p.Content.(a2a.Text); !isText {
			echoes = append(echoes, p)
		}
	}
	complete := func(delay time.Duration) []step {
		steps := []step{{kind: stepStatus, state: a2a.TaskStateWorking, text: harness.TextWorking(text)}}
		if delay > 0 {
			steps = append(steps, step{kind: stepDelay, delay: delay})
		}
		return append(steps,
			step{kind: stepArtifact, parts: append([]*a2a.Part{a2a.NewTextPart(harness.TextDone(text))}, echoes...)},
			step{kind: stepStatus, state: a2a.TaskStateCompleted},
		)
	}
	task := step{kind: stepTask}
	switch {
	case isContinuation:
		return append([]step{task}, complete(0)...)
	case strings.HasSuffix(text, "?"):
		return []step{{kind: stepMessage, text: harness.TextAnswer(text)}}
	case strings.HasPrefix(text, "fail"):
		return []step{task, {kind: stepStatus, state: a2a.TaskStateFailed, text: harness.TextFailed(text)}}
	case strings.HasPrefix(text, "input"):
		return []step{task, {kind: stepStatus, state: a2a.TaskStateInputRequired, text: harness.TextInputNeeded}}
	case strings.HasPrefix(text, "wait"):
		return []step{task, {kind: stepStatus, state: a2a.TaskStateWorking, text: harness.TextWorking(text)}, {kind: stepWaitForCancel}}
	case strings.HasPrefix(text, "slow"):
		return append([]step{task}, complete(slowDelay)...)
	default:
		return append([]step{task}, complete(0)...)
	}
}
