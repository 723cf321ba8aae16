package normalize

import "github.com/a2agate/gateway/dialect"

// A blocking send the gateway serves from the backend's stream (package
// proxy, agents[].backend.blocking_via_stream) is answered with what the
// stream's events add up to: the task as a blocking send would have
// returned it, or the direct message the stream was.

// SendFold adds up a send's stream, event by event, into the blocking
// send's answer. The zero SendFold is ready for the first event. A SendFold
// is used by one send and is not safe for concurrent use.
type SendFold struct {
	task    []byte // the 1.0 task so far (FoldWebhook's); nil before one
	message []byte // the 1.0 StreamResponse of a direct message answer
}

// Add folds one event, canon, a 1.0 StreamResponse (AppendInspectedEvent's
// translation toward 1.0) that info describes, by FoldWebhook's rules,
// which are the SDKs' task managers': a task replaces the task so far, a
// status update its status (its message joining the history), an artifact
// update adds its artifact or, with append, its parts to the artifact of
// its id. A message before any task is the send's answer. canon is not
// kept: the fold copies what it needs.
func (f *SendFold) Add(canon []byte, info EventInfo) error {
	if info.Kind == KindMessage && f.task == nil {
		f.message = append(f.message[:0], canon...)
		return nil
	}
	task, err := FoldWebhook(f.task, canon, info)
	if err != nil {
		return AsError(err, dialect.ErrInvalidAgentResponse)
	}
	f.task, f.message = task, nil
	return nil
}

// Size is the length of what the fold holds, the answer's size but for
// its translation.
func (f *SendFold) Size() int { return len(f.task) + len(f.message) }

// Started reports whether an event has been folded.
func (f *SendFold) Started() bool { return f.task != nil || f.message != nil }

// AppendAnswer appends the send's answer, the SendMessage result in
// dialect to (a 1.0 SendMessageResponse, a 0.x Task or Message), and
// returns what it says of itself. Before any event it fails.
func (f *SendFold) AppendAnswer(dst []byte, to dialect.ID) ([]byte, EventInfo, error) {
	result := f.message
	if result == nil {
		if f.task == nil {
			return nil, EventInfo{}, Errorf(dialect.ErrInvalidAgentResponse, "the stream carried no task or message")
		}
		// A 1.0 send result spells its task as a StreamResponse does.
		result = TaskEvent(f.task)
	}
	return appendResult(dst, dialect.SendMessage, dialect.V10, to, result, nil)
}
