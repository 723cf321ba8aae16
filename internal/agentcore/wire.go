package agentcore

import "time"

// The structs below are spelled alike in 0.2.5 and 1.0 but for the message,
// part and artifact types they hold, which each dialect's wire supplies, and
// for what 0.2.5 adds around a task and its events: the "kind"
// discriminator and the status update's "final".

// TaskStatus is the TaskStatus of the wire whose messages are M.
type TaskStatus[M any] struct {
	State     string `json:"state"`
	Message   *M     `json:"message,omitempty"`
	Timestamp string `json:"timestamp,omitempty"`
}

// Artifact is the Artifact of the wire whose parts are P.
type Artifact[P any] struct {
	ArtifactID  string     `json:"artifactId"`
	Name        string     `json:"name,omitempty"`
	Description string     `json:"description,omitempty"`
	Parts       []P        `json:"parts"`
	Extensions  []string   `json:"extensions,omitempty"`
	Metadata    JSONObject `json:"metadata,omitempty"`
}

// WireTask is the Task of the wire whose messages are M and artifacts A.
type WireTask[M, A any] struct {
	ID        string        `json:"id"`
	ContextID string        `json:"contextId"`
	Status    TaskStatus[M] `json:"status"`
	Artifacts []A           `json:"artifacts,omitempty"`
	History   []M           `json:"history,omitempty"`
	Metadata  JSONObject    `json:"metadata,omitempty"`
}

// StatusUpdate is the TaskStatusUpdateEvent of the wire whose messages are M.
type StatusUpdate[M any] struct {
	TaskID    string        `json:"taskId"`
	ContextID string        `json:"contextId"`
	Status    TaskStatus[M] `json:"status"`
	Metadata  JSONObject    `json:"metadata,omitempty"`
}

// ArtifactUpdate is the TaskArtifactUpdateEvent of the wire whose artifacts
// are A.
type ArtifactUpdate[A any] struct {
	TaskID    string     `json:"taskId"`
	ContextID string     `json:"contextId"`
	Artifact  A          `json:"artifact"`
	Append    bool       `json:"append,omitempty"`
	LastChunk bool       `json:"lastChunk,omitempty"`
	Metadata  JSONObject `json:"metadata,omitempty"`
}

// Spelling is how a dialect writes task states and timestamps.
type Spelling struct {
	States    map[State]string
	Timestamp func(time.Time) string
	// Precision is the resolution of Timestamp, to which the core stamps
	// statuses, so that a timestamp read back from the wire compares equal
	// to the one stored.
	Precision time.Duration
}

// RenderStatus spells s.
func RenderStatus[M any](sp Spelling, s Status[M]) TaskStatus[M] {
	return TaskStatus[M]{State: sp.States[s.State], Message: s.Message, Timestamp: sp.Timestamp(s.Time)}
}

// RenderTask spells t with history, the part of its history the request
// asked for (each dialect has its own historyLength rule).
func RenderTask[M, A any](sp Spelling, t Task[M, A], history []M) WireTask[M, A] {
	return WireTask[M, A]{
		ID:        t.ID,
		ContextID: t.ContextID,
		Status:    RenderStatus(sp, t.Status),
		Artifacts: t.Artifacts,
		History:   history,
	}
}

// RenderEvent spells e, which is either a status update or an artifact
// update: the other result is nil. An artifact event carries the whole
// artifact, its last chunk.
func RenderEvent[M, A any](sp Spelling, e Event[M, A]) (*StatusUpdate[M], *ArtifactUpdate[A]) {
	if e.Artifact != nil {
		return nil, &ArtifactUpdate[A]{TaskID: e.TaskID, ContextID: e.ContextID, Artifact: *e.Artifact, LastChunk: true}
	}
	return &StatusUpdate[M]{TaskID: e.TaskID, ContextID: e.ContextID, Status: RenderStatus(sp, *e.Status)}, nil
}

// PartText reads a part of a wire whose parts are P: its text, and whether
// it is a text part.
type PartText[P any] func(P) (string, bool)

// FirstText is the text of the first text part of parts, or "".
func FirstText[P any](parts []P, text PartText[P]) string {
	for _, p := range parts {
		if s, ok := text(p); ok {
			return s
		}
	}
	return ""
}

// ResultArtifact is the artifact named "result" that the scripts publish:
// first part, then a copy of every part of echoed that is not text, so
// that file and data parts provably survive a round trip.
func ResultArtifact[P any](first P, echoed []P, text PartText[P]) Artifact[P] {
	parts := []P{first}
	for _, p := range echoed {
		if _, isText := text(p); !isText {
			parts = append(parts, p)
		}
	}
	return Artifact[P]{ArtifactID: NewID(), Name: "result", Parts: parts}
}
