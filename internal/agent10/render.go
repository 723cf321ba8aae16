package agent10

import (
	"time"

	"github.com/a2agate/gateway/internal/agentcore"
)

// wire is the 1.0 spelling of what the core builds and reads.
type wire struct{}

func (wire) IDs(m *message) (*string, *string) { return &m.TaskID, &m.ContextID }

func (wire) FirstText(m message) string { return agentcore.FirstText(m.Parts, partText) }

func (wire) AgentMessage(text, taskID, contextID string) message {
	return message{
		MessageID: agentcore.NewID(),
		Role:      roleAgent,
		Parts:     []part{{Text: &text}},
		ContextID: contextID,
		TaskID:    taskID,
	}
}

func (wire) ResultArtifact(text string, m message) artifact {
	return agentcore.ResultArtifact(part{Text: &text}, m.Parts, partText)
}

// partText reads the text of the "content" oneof.
func partText(p part) (string, bool) {
	if p.Text == nil {
		return "", false
	}
	return *p.Text, true
}

// NotAccepting is an UnsupportedOperationError, which the 1.0
// specification asks for a message to a terminal task (§3.1.1); so is one
// to a task that asks for nothing.
func (wire) NotAccepting(why string, detail map[string]string) *agentcore.Error {
	return newError(codeUnsupportedOperation, "Unsupported operation: "+why, detail)
}

var spelling = agentcore.Spelling{States: stateNames, Timestamp: formatTimestamp, Precision: timestampPrecision}

// renderTask spells t, its history trimmed to the 1.0 historyLength: unset
// keeps every message, 0 none (the history key is then omitted), N the
// last N.
func renderTask(t agentcore.Task[message, artifact], historyLength *int32) task {
	history := t.History
	switch n := historyLength; {
	case n == nil:
	case *n == 0:
		history = nil
	case int(*n) < len(history):
		history = history[len(history)-int(*n):]
	}
	return agentcore.RenderTask(spelling, t, history)
}

// renderEvent wraps a stream event in its StreamResponse. 1.0 has no
// "final": the stream simply closes after a settled status.
func renderEvent(e agentcore.Event[message, artifact]) any {
	status, art := agentcore.RenderEvent(spelling, e)
	return streamResponse{StatusUpdate: status, ArtifactUpdate: art}
}

// timestampLayout is google.protobuf.Timestamp in ProtoJSON as the 1.0
// specification asks for it (§5.6.1): RFC 3339, UTC with "Z", milliseconds.
const timestampLayout = "2006-01-02T15:04:05.000Z"

func formatTimestamp(t time.Time) string { return t.UTC().Format(timestampLayout) }

// timestampPrecision is the resolution of formatTimestamp: a timestamp read
// back from the wire (statusTimestampAfter, a page token) compares equal to
// the one stored.
const timestampPrecision = time.Millisecond
