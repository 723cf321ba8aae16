package normalize

import (
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/jsonscan"
)

// A push delivery (a webhook) reaches the gateway in the backend's dialect
// and leaves in each caller's. The gateway reads it into the 1.0 form, a
// StreamResponse wrapper, with WebhookCanonical; keeps the task as it now
// stands with FoldWebhook; and writes each caller's body with WebhookFor.

// WebhookCanonical reads a push delivery in either dialect, a 0.x Task (what
// 0.2.5 and 0.3 senders post after each event), a 0.x status-update or
// artifact-update event, or a 1.0 StreamResponse (task, message,
// statusUpdate, artifactUpdate), and returns it as a 1.0 StreamResponse.
// Failures are *Error of kind InvalidParams: the body is not a delivery.
func WebhookCanonical(body []byte) ([]byte, EventInfo, error) {
	// Validated first, as a reply is (ParseReply): the translation reads
	// JSON only as far as it goes, and passes a 1.0 body it need not change
	// on as it came, trailing bytes and all.
	var spans jsonscan.Spans
	if !validSpans(body, &spans) {
		return nil, EventInfo{}, Errorf(dialect.ErrInvalidParams, "%s", strings.Replace(invalidJSONReason(body), "the request body", "the push delivery", 1))
	}
	root := jsonscan.Parse(body)
	from := dialect.V10
	if jsonscan.Member(root, "kind").Exists() {
		from = dialect.V03
	}
	out, info, err := appendInspectedEvent(nil, from, dialect.V10, body, &spans)
	if err != nil {
		return nil, EventInfo{}, &Error{Kind: dialect.ErrInvalidParams, Message: "the push delivery is not an A2A task or event: " + errorDetail(err), Err: err}
	}
	if info.TaskID == "" {
		return nil, EventInfo{}, Errorf(dialect.ErrInvalidParams, "the push delivery names no task")
	}
	// AppendInspectedEvent adds the 0.x final flag, which 1.0 does not have.
	if info.Kind == KindStatusUpdate {
		out, _ = sjson.DeleteBytes(out, "statusUpdate.final")
	}
	return out, info, nil
}

// errorDetail is what is wrong with the delivery, without the "result."
// that the reply translator's errors begin with.
func errorDetail(err error) string {
	if e, ok := err.(*Error); ok && e.Err != nil {
		err = e.Err
	}
	return strings.TrimPrefix(err.Error(), "result.")
}

// FoldWebhook returns the 1.0 Task as it stands after the canonical
// delivery, given the task as it stood before (prev, 1.0, nil when none was
// seen): a task replaces it; a status update replaces its status, its
// message joining the history, as the SDKs' task managers do; an artifact
// update adds the artifact, or appends its parts to the one of the same id
// when it says append; a message joins the history. Without a prev, the
// task is built from what the update says, its state unknown
// (TASK_STATE_UNSPECIFIED) unless the update carries one.
func FoldWebhook(prev, canon []byte, info EventInfo) ([]byte, error) {
	root := jsonscan.Parse(canon)
	if info.Kind == KindTask {
		return []byte(jsonscan.Member(root, "task").Raw), nil
	}
	task := prev
	if len(task) == 0 || gjson.GetBytes(task, "id").Str != info.TaskID {
		task = unknownTask(info)
	}
	var err error
	switch info.Kind {
	case KindStatusUpdate:
		status := jsonscan.Member(jsonscan.Member(root, "statusUpdate"), "status")
		if task, err = sjson.SetRawBytes(task, "status", []byte(status.Raw)); err != nil {
			return nil, err
		}
		if msg := jsonscan.Member(status, "message"); msg.IsObject() {
			task, err = appendHistory(task, msg)
		}
	case KindArtifactUpdate:
		task, err = foldArtifact(task, jsonscan.Member(root, "artifactUpdate"))
	case KindMessage:
		task, err = appendHistory(task, jsonscan.Member(root, "message"))
	}
	return task, err
}

// unknownTask is the task an update info describes folds into when no
// task of its id came before: its state unknown.
func unknownTask(info EventInfo) []byte {
	task := []byte(`{"status":{"state":"TASK_STATE_UNSPECIFIED"}}`)
	task, _ = sjson.SetBytes(task, "id", info.TaskID)
	if info.ContextID != "" {
		task, _ = sjson.SetBytes(task, "contextId", info.ContextID)
	}
	return task
}

// appendHistory adds msg to task's history unless a message of its id is
// there already.
func appendHistory(task []byte, msg gjson.Result) ([]byte, error) {
	id := jsonscan.Member(msg, "messageId").Str
	dup := false
	gjson.GetBytes(task, "history").ForEach(func(_, m gjson.Result) bool {
		dup = id != "" && m.Get("messageId").Str == id
		return !dup
	})
	if dup {
		return task, nil
	}
	return sjson.SetRawBytes(task, "history.-1", []byte(msg.Raw))
}

func foldArtifact(task []byte, update gjson.Result) ([]byte, error) {
	art := jsonscan.Member(update, "artifact")
	id := jsonscan.Member(art, "artifactId").Str
	index := -1
	i := 0
	gjson.GetBytes(task, "artifacts").ForEach(func(_, a gjson.Result) bool {
		if a.Get("artifactId").Str == id {
			index = i
			return false
		}
		i++
		return true
	})
	switch {
	case index < 0:
		return sjson.SetRawBytes(task, "artifacts.-1", []byte(art.Raw))
	case jsonscan.Member(update, "append").Bool():
		// The parts join the artifact's in one write of the task: one
		// write each would copy the whole task once per part, and an
		// update of a few bytes per part would cost the gateway the
		// square of its size.
		return appendParts(task, "artifacts."+strconv.Itoa(index)+".parts", jsonscan.Member(art, "parts"))
	default:
		return sjson.SetRawBytes(task, "artifacts."+strconv.Itoa(index), []byte(art.Raw))
	}
}

// appendParts joins the parts of the array added to those of the array
// at path in doc, in one write.
func appendParts(doc []byte, path string, added gjson.Result) ([]byte, error) {
	if !added.IsArray() || isEmptyArray(added) {
		return doc, nil
	}
	had := gjson.GetBytes(doc, path)
	if !had.IsArray() || isEmptyArray(had) {
		return sjson.SetRawBytes(doc, path, []byte(added.Raw))
	}
	joined := make([]byte, 0, len(had.Raw)+len(added.Raw))
	joined = append(joined, strings.TrimRight(had.Raw, " \t\r\n")...)
	joined[len(joined)-1] = ','
	joined = append(joined, strings.TrimLeft(added.Raw, " \t\r\n")[1:]...)
	return sjson.SetRawBytes(doc, path, joined)
}

// WebhookFor writes a delivery for a caller of dialect to: toward 1.0 the
// canonical StreamResponse itself; toward 0.x the bare 0.x Task that 0.x
// receivers read, from task (the 1.0 task as it now stands, FoldWebhook's).
func WebhookFor(to dialect.ID, canon, task []byte) ([]byte, error) {
	if to == dialect.V10 {
		return canon, nil
	}
	return Result(dialect.GetTask, dialect.V10, dialect.V03, task)
}
