package harness

import "iter"

// The neutral shapes the scenarios check, so that they are written once for
// both SDKs. An adapter maps its SDK's values onto them without loss of
// anything a scenario compares: a value the neutral shape has no name for
// (an unknown state, role or part type) maps to a mark that equals no
// neutral name, so a check that failed on the SDK's value still fails.

// The task states and roles, spelled as in 0.3; the 1.0 adapter maps its
// TASK_STATE_* and ROLE_* names onto them.
const (
	StateSubmitted     = "submitted"
	StateWorking       = "working"
	StateInputRequired = "input-required"
	StateAuthRequired  = "auth-required"
	StateCompleted     = "completed"
	StateCanceled      = "canceled"
	StateFailed        = "failed"
	StateRejected      = "rejected"

	RoleUser  = "user"
	RoleAgent = "agent"
)

// The kinds of a Part.
const (
	PartText = "text"
	PartData = "data"
	PartRaw  = "raw" // file bytes
	PartURL  = "url" // file URI
)

// Part is one message or artifact part: Kind names which of Text, Data,
// Raw and URL it holds.
type Part struct {
	Kind      string
	Text      string
	Data      any
	Raw       []byte
	URL       string
	MediaType string
	Filename  string
	Metadata  map[string]any
}

type Message struct {
	ID, ContextID, TaskID string
	Role                  string
	Parts                 []Part
}

type Artifact struct {
	ID, Name string
	Parts    []Part
}

type Status struct {
	State   string
	Message *Message
}

type Task struct {
	ID, ContextID string
	Status        Status
	History       []*Message
	Artifacts     []Artifact
}

// Result is the answer to a send: a Task or a Message; SDK is the SDK's own
// value, for failure messages.
type Result struct {
	Task    *Task
	Message *Message
	SDK     any
}

// The kinds of an Event other than its status updates, which are
// "status:" + the state.
const (
	EventTask     = "task"
	EventMessage  = "message"
	EventArtifact = "artifact-update"
)

// Event is one stream event. Kind is EventTask, EventMessage,
// "status:<state>", EventArtifact, or the SDK's type name for anything
// else; TaskID is the task the event is bound to. Final is the 0.3 final
// flag of a status update.
type Event struct {
	Kind     string
	TaskID   string
	Task     *Task
	Message  *Message
	Status   Status
	Final    bool
	Artifact Artifact
	SDK      any
}

// SendRequest is a user message and the send configuration the scenarios
// set; a nil Blocking or HistoryLength is left unset.
type SendRequest struct {
	Parts             []Part
	TaskID, ContextID string
	Blocking          *bool
	HistoryLength     *int
}

// PushConfig is a task's push notification config (Tenant is 1.0's).
type PushConfig struct {
	Tenant, TaskID, ID, URL, Token string
	Auth                           *PushAuth
}

type PushAuth struct {
	Schemes     []string
	Credentials string
}

// AgentCard is what every client checks of the card.
type AgentCard struct {
	Name                         string
	Streaming, PushNotifications bool
}

// TextParts is a message of one text part.
func TextParts(text string) []Part { return []Part{{Kind: PartText, Text: text}} }

// FirstText is the text of the first text part, "" when there is none.
func FirstText(parts []Part) string {
	for _, p := range parts {
		if p.Kind == PartText {
			return p.Text
		}
	}
	return ""
}

// StatusText is the first text of a status message.
func StatusText(s Status) string {
	if s.Message == nil {
		return ""
	}
	return FirstText(s.Message.Parts)
}

// Map maps a slice of the SDK's values, nil to nil.
func Map[S, T any](in []S, f func(S) T) []T {
	if in == nil {
		return nil
	}
	out := make([]T, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}

// Events maps an SDK's stream; an error passes with a zero Event.
func Events[E any](seq iter.Seq2[E, error], event func(E) Event) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		for e, err := range seq {
			if err != nil {
				if !yield(Event{}, err) {
					return
				}
				continue
			}
			if !yield(event(e), nil) {
				return
			}
		}
	}
}

// ResultOf maps a send's answer, the SDK's task T or message M.
func ResultOf[T, M any](sdk any, task func(T) *Task, message func(M) *Message) Result {
	out := Result{SDK: sdk}
	switch v := sdk.(type) {
	case T:
		out.Task = task(v)
	case M:
		out.Message = message(v)
	}
	return out
}

// Ptr returns a pointer to v, for the SDKs' optional request fields.
func Ptr[T any](v T) *T { return &v }
