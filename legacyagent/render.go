package legacyagent

import (
	"time"

	"github.com/a2agate/gateway/internal/agentcore"
)

// wire is the 0.2.5 spelling of what the core builds and reads.
type wire struct{}

func (wire) IDs(m *message) (*string, *string) { return &m.TaskID, &m.ContextID }

func (wire) FirstText(m message) string { return agentcore.FirstText(m.Parts, partText) }

func (wire) AgentMessage(text, taskID, contextID string) message {
	return message{
		Kind:      kindMessage,
		MessageID: agentcore.NewID(),
		Role:      roleAgent,
		Parts:     []part{textPart(text)},
		ContextID: contextID,
		TaskID:    taskID,
	}
}

func (wire) ResultArtifact(text string, m message) artifact {
	return agentcore.ResultArtifact(textPart(text), m.Parts, partText)
}

func textPart(text string) part { return part{Kind: kindText, Text: &text} }

func partText(p part) (string, bool) {
	if p.Kind != kindText || p.Text == nil {
		return "", false
	}
	return *p.Text, true
}

// NotAccepting is -32602: the 0.2.5 text defines no rule or code for a
// message to a task that waits for none; this is what the Python 0.x
// reference server answers.
func (wire) NotAccepting(why string, detail map[string]string) *agentcore.Error {
	return agentcore.NewError(agentcore.CodeInvalidParams, "Invalid parameters: "+why, detail)
}

var spelling = agentcore.Spelling{States: stateNames, Timestamp: formatTimestamp, Precision: timestampPrecision}

// renderTask spells t, keeping the last historyLength messages, or all of
// them when historyLength is not positive (0.2.5 semantics).
func renderTask(t agentcore.Task[message, artifact], historyLength int) task {
	history := t.History
	if historyLength > 0 && historyLength < len(history) {
		history = history[len(history)-historyLength:]
	}
	return task{Kind: kindTask, WireTask: agentcore.RenderTask(spelling, t, history)}
}

// renderEvent spells a stream event. The status update that ends a stream
// cycle carries final:true.
func renderEvent(e agentcore.Event[message, artifact]) any {
	status, art := agentcore.RenderEvent(spelling, e)
	if art != nil {
		return artifactUpdateEvent{Kind: kindArtifactUpdate, ArtifactUpdate: *art}
	}
	return statusUpdateEvent{Kind: kindStatusUpdate, StatusUpdate: *status, Final: e.Status.State.Settled()}
}

// formatTimestamp writes t in UTC the way Python's datetime.isoformat does,
// which is what the Python 0.x SDK puts on the wire: microseconds, a
// "+00:00" offset, and no fraction at all when it is zero.
func formatTimestamp(t time.Time) string {
	t = t.UTC()
	if t.Nanosecond()/1000 == 0 {
		return t.Format("2006-01-02T15:04:05+00:00")
	}
	return t.Format("2006-01-02T15:04:05.000000+00:00")
}

// timestampPrecision is the resolution of formatTimestamp.
const timestampPrecision = time.Microsecond
