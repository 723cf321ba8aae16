package agentcore

// TaskStatus and Artifact are spelled alike in 0.2.5 and 1.0 but for the
// message and part types they hold, which each dialect's wire supplies.

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
