package harness

// The texts of the scripted backend (interop/agents/script.mjs), which the
// Go agent ports step for step and every client asserts.
const (
	TextInputNeeded = "need more input"
	TextCanceled    = "canceled by request"
	ArtifactName    = "result"
)

func TextAnswer(s string) string  { return "answer: " + s }
func TextWorking(s string) string { return "working on: " + s }
func TextDone(s string) string    { return "done: " + s }
func TextFailed(s string) string  { return "failed: " + s }
