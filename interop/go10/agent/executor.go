package main

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"time"

	"github.com/a2agate/gateway/interop/harness"
	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// executor replays the script's steps as a2a-go events.
type executor struct{}

var _ a2asrv.AgentExecutor = executor{}

func (executor) Execute(ctx context.Context, execCtx *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		stored := execCtx.StoredTask
		isContinuation := stored != nil && stored.Status.State == a2a.TaskStateInputRequired
		for _, s := range plan(execCtx.Message.Parts, isContinuation) {
			var event a2a.Event
			switch s.kind {
			case stepMessage:
				msg := a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart(s.text))
				msg.ContextID = execCtx.ContextID
				event = msg
			case stepTask:
				// Like the JS 1.x executor, every execution starts with the
				// task, continuations included: a2asrv has already appended
				// the user message to the stored task's history.
				if stored != nil {
					event = continuationSnapshot(stored, execCtx.Message)
				} else {
					event = a2a.NewSubmittedTask(execCtx, execCtx.Message)
				}
			case stepStatus:
				event = statusEvent(execCtx, s.state, s.text)
			case stepArtifact:
				artifact := a2a.NewArtifactEvent(execCtx, s.parts...)
				artifact.Artifact.Name = harness.ArtifactName
				artifact.LastChunk = true
				event = artifact
			case stepDelay:
				select {
				case <-ctx.Done():
					return
				case <-time.After(s.delay):
				}
				continue
			case stepWaitForCancel:
				// a2asrv runs Cancel below, which publishes the canceled
				// status into this execution's queue and then ends it.
				<-ctx.Done()
				return
			default:
				yield(nil, fmt.Errorf("unknown step %d", s.kind))
				return
			}
			if !yield(event, nil) {
				return
			}
		}
	}
}

// continuationSnapshot is the task event that opens a continuation. The
// JS 1.x executor republishes the stored task as is, but a2asrv ends an
// execution at a task event in input-required, so the snapshot is the
// stored task moved back to submitted, the state a new message starts in.
// The input-required status message goes to the history before the new
// user message, where a status update would have put it.
func continuationSnapshot(stored *a2a.Task, msg *a2a.Message) *a2a.Task {
	task := *stored
	task.History = slices.Clone(stored.History)
	if stored.Status.Message != nil {
		at := len(task.History)
		if at > 0 && task.History[at-1].ID == msg.ID {
			at--
		}
		task.History = slices.Insert(task.History, at, stored.Status.Message)
	}
	now := time.Now()
	task.Status = a2a.TaskStatus{State: a2a.TaskStateSubmitted, Timestamp: &now}
	return &task
}

// Cancel publishes the canceled status with the script's message, the
// event the JS executors publish when a waiting execution is woken.
func (executor) Cancel(_ context.Context, execCtx *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(statusEvent(execCtx, a2a.TaskStateCanceled, harness.TextCanceled), nil)
	}
}

func statusEvent(execCtx *a2asrv.ExecutorContext, state a2a.TaskState, text string) *a2a.TaskStatusUpdateEvent {
	var msg *a2a.Message
	if text != "" {
		msg = a2a.NewMessageForTask(a2a.MessageRoleAgent, execCtx, a2a.NewTextPart(text))
	}
	return a2a.NewStatusUpdateEvent(execCtx, state, msg)
}
