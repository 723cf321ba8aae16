package normalize

import (
	"bytes"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/jsonscan"
)

// A blocking send the gateway serves from the backend's stream (package
// proxy, agents[].backend.blocking_via_stream) is answered with what the
// stream's events add up to: the task as a blocking send would have
// returned it, or the direct message the stream was.

// SendFold adds up a send's stream, event by event, into the blocking
// send's answer. The zero SendFold is ready for the first event. A SendFold
// is used by one send and is not safe for concurrent use.
//
// It holds the task in pieces (its status, its artifacts with the parts
// appended to each, its history) and writes it whole once, for the
// answer: FoldWebhook's one write of the task per event would cost a
// stream of many small updates (an agent streaming its answer a few
// tokens at a time) the square of the task's size.
type SendFold struct {
	task    []byte // the last task event's task, or one made for the first update; nil before one
	taskID  string
	message []byte // the 1.0 StreamResponse of a direct message answer

	status    []byte // the last status update's status; nil: the task's own
	statusLen int    // the length of the status in effect

	arts     []foldedArtifact // once an artifact update came: the task's, then the updates'
	artIndex map[string]int   // an artifact's first place in arts by its id
	hasArts  bool

	history []gjson.Result // once a message came: the task's, then the ones folded
	histIDs map[string]bool
	hasHist bool
	addHist bool // history gained a message

	size int // what the task written whole would be, about
}

// foldedArtifact is an artifact as last given whole, and the parts
// appended to it since.
type foldedArtifact struct {
	raw   []byte
	parts [][]byte
	size  int
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
	root := jsonscan.Parse(canon)
	switch {
	case info.Kind == KindTask:
		f.reset([]byte(jsonscan.Member(root, "task").Raw), info.TaskID)
	case f.task == nil || f.taskID != info.TaskID:
		f.reset(unknownTask(info), info.TaskID)
	}
	f.message = nil
	switch info.Kind {
	case KindStatusUpdate:
		status := jsonscan.Member(jsonscan.Member(root, "statusUpdate"), "status")
		f.status = append(f.status[:0:0], status.Raw...)
		f.size += len(f.status) - f.statusLen
		f.statusLen = len(f.status)
		if msg := jsonscan.Member(status, "message"); msg.IsObject() {
			f.addMessage(msg)
		}
	case KindArtifactUpdate:
		f.foldArtifact(jsonscan.Member(root, "artifactUpdate"))
	case KindMessage:
		f.addMessage(jsonscan.Member(root, "message"))
	}
	return nil
}

// reset starts the fold over at task (a copy is kept).
func (f *SendFold) reset(task []byte, id string) {
	*f = SendFold{task: bytes.Clone(task), taskID: strings.Clone(id)}
	f.statusLen = len(gjson.GetBytes(f.task, "status").Raw)
	f.size = len(f.task)
}

func (f *SendFold) addMessage(msg gjson.Result) {
	if !f.hasHist {
		f.hasHist, f.histIDs = true, map[string]bool{}
		gjson.GetBytes(f.task, "history").ForEach(func(_, m gjson.Result) bool {
			f.history = append(f.history, m)
			if id := m.Get("messageId").Str; id != "" {
				f.histIDs[id] = true
			}
			return true
		})
	}
	id := jsonscan.Member(msg, "messageId").Str
	if id != "" && f.histIDs[id] {
		return
	}
	if id != "" {
		f.histIDs[strings.Clone(id)] = true
	}
	kept := gjson.Parse(strings.Clone(msg.Raw))
	f.history = append(f.history, kept)
	f.addHist = true
	f.size += len(kept.Raw) + 1
}

func (f *SendFold) foldArtifact(update gjson.Result) {
	if !f.hasArts {
		f.hasArts, f.artIndex = true, map[string]int{}
		gjson.GetBytes(f.task, "artifacts").ForEach(func(_, a gjson.Result) bool {
			if id := a.Get("artifactId").Str; !f.hasArtifact(id) {
				f.artIndex[id] = len(f.arts)
			}
			f.arts = append(f.arts, foldedArtifact{raw: []byte(a.Raw), size: len(a.Raw)})
			return true
		})
	}
	art := jsonscan.Member(update, "artifact")
	id := jsonscan.Member(art, "artifactId").Str
	i, ok := f.artIndex[id]
	switch {
	case !ok:
		f.artIndex[strings.Clone(id)] = len(f.arts)
		f.arts = append(f.arts, foldedArtifact{raw: []byte(strings.Clone(art.Raw)), size: len(art.Raw)})
		f.size += len(art.Raw) + 1
	case jsonscan.Member(update, "append").Bool():
		a := &f.arts[i]
		jsonscan.Member(art, "parts").ForEach(func(_, p gjson.Result) bool {
			a.parts = append(a.parts, []byte(strings.Clone(p.Raw)))
			a.size += len(p.Raw) + 1
			f.size += len(p.Raw) + 1
			return true
		})
	default:
		f.size += len(art.Raw) - f.arts[i].size
		f.arts[i] = foldedArtifact{raw: []byte(strings.Clone(art.Raw)), size: len(art.Raw)}
	}
}

func (f *SendFold) hasArtifact(id string) bool {
	_, ok := f.artIndex[id]
	return ok
}

// built is the task as the events so far left it, written whole.
func (f *SendFold) built() []byte {
	task := f.task
	var err error
	if f.status != nil {
		if task, err = sjson.SetRawBytes(task, "status", f.status); err != nil {
			return f.task
		}
	}
	if f.hasArts {
		out := make([]byte, 0, f.size)
		out = append(out, '[')
		for i, a := range f.arts {
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, a.withParts()...)
		}
		out = append(out, ']')
		task, _ = sjson.SetRawBytes(task, "artifacts", out)
	}
	if f.addHist {
		out := make([]byte, 0, f.size)
		out = append(out, '[')
		for i, m := range f.history {
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, m.Raw...)
		}
		out = append(out, ']')
		task, _ = sjson.SetRawBytes(task, "history", out)
	}
	return task
}

// withParts is the artifact with its appended parts joined to its own,
// as foldArtifact joins them.
func (a foldedArtifact) withParts() []byte {
	if len(a.parts) == 0 {
		return a.raw
	}
	added := make([]byte, 0, a.size)
	added = append(added, '[')
	for i, p := range a.parts {
		if i > 0 {
			added = append(added, ',')
		}
		added = append(added, p...)
	}
	added = append(added, ']')
	out, err := appendParts(a.raw, "parts", gjson.ParseBytes(added))
	if err != nil {
		return a.raw
	}
	return out
}

// Size is the length of what the fold holds, the answer's size but for
// its translation.
func (f *SendFold) Size() int { return f.size + len(f.message) }

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
		result = TaskEvent(f.built())
	}
	return appendResult(dst, dialect.SendMessage, dialect.V10, to, result, nil)
}
