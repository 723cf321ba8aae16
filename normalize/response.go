package normalize

import (
	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/jsonscan"
)

// Result translates the result of op, written by a backend in dialect from,
// into dialect to. It returns result itself when nothing had to change.
// Failures are *Error of kind InvalidAgentResponse: a reply that does not
// read as A2A is the backend's fault, not the caller's.
func Result(op dialect.Op, from, to dialect.ID, result []byte) ([]byte, error) {
	out, _, err := appendResult(nil, op, from, to, result, nil)
	return out, err
}

// AppendResult is Result for the result of reply, which ParseReply read,
// appending a translation to dst (it returns reply.Result itself, not dst,
// when nothing had to change) that also reads, from the same walk of the
// input, what the gateway records of a send, get or cancel result (see
// Inspect); the info is zero for other operations. It steps over the
// result's containers by the spans ParseReply's validation recorded.
func AppendResult(dst []byte, op dialect.Op, from, to dialect.ID, reply *Reply) ([]byte, EventInfo, error) {
	return appendResult(dst, op, from, to, reply.Result, &reply.spans)
}

// appendResult is AppendResult over the spans known, nil when none are.
func appendResult(dst []byte, op dialect.Op, from, to dialect.ID, result []byte, known *jsonscan.Spans) ([]byte, EventInfo, error) {
	if op == dialect.GetExtendedCard {
		// Cards are rewritten for publishing, with the gateway's URLs, by
		// package agentcard.
		return result, EventInfo{}, nil
	}
	w := getWriter()
	defer w.release()
	c := indexed(w, from, result, known)
	var info EventInfo
	switch op {
	case dialect.SendMessage:
		c.info = &info
	case dialect.GetTask, dialect.CancelTask:
		info.Kind = KindTask
		c.info = &info
	}
	if err := c.result(op, jsonscan.Parse(result), to); err != nil {
		return nil, EventInfo{}, badReply(err)
	}
	if !w.changed {
		return result, info, nil
	}
	return append(dst, w.buf...), info, nil
}

// result writes the result of op in dialect to, always in full: whether
// the input can stand for the output is c.w.changed's call.
func (c *conv) result(op dialect.Op, root gjson.Result, to dialect.ID) error {
	switch op {
	case dialect.SendMessage:
		return c.sendResult(root, to)
	case dialect.GetTask, dialect.CancelTask:
		return c.task(root, to)
	case dialect.CreatePushConfig, dialect.GetPushConfig:
		return c.taskPushConfig(root, to, false)
	case dialect.ListPushConfigs:
		return c.pushConfigList(root, to)
	case dialect.DeletePushConfig:
		return c.emptyResult(root, to)
	case dialect.ListTasks:
		return c.taskList(root)
	case dialect.SendStreamingMessage, dialect.SubscribeToTask:
		return c.event(root, to, false)
	}
	return fail("unsupported operation %s", op)
}

func badReply(err error) error {
	return &Error{Kind: dialect.ErrInvalidAgentResponse, Message: "the agent's reply is not valid A2A: " + at(err, "result").Error(), Err: err}
}

// Event translates one stream event result from dialect from into to. final
// is the 0.x final flag written on a status update that carries none; see
// package proxy for when the gateway sets it.
func Event(from, to dialect.ID, result []byte, final bool) ([]byte, error) {
	return AppendEvent(nil, from, to, result, final)
}

// AppendEvent is Event appending a translation to dst, so a stream can
// reuse one buffer for all its events; it returns result itself, not dst,
// when nothing had to change.
func AppendEvent(dst []byte, from, to dialect.ID, result []byte, final bool) ([]byte, error) {
	w := getWriter()
	defer w.release()
	c := indexed(w, from, result, nil)
	if err := c.event(jsonscan.Parse(result), to, final); err != nil {
		return nil, badReply(err)
	}
	if !w.changed {
		return result, nil
	}
	return append(dst, w.buf...), nil
}

// AppendInspectedEvent is AppendEvent for the result of reply, a stream
// event ParseReply read, that also reads, from the same walk, what Inspect
// reads of the event; a status update that carries no final flag gets one
// that says whether its state is terminal, which is the flag the gateway
// writes unless it holds the event back (see package proxy). It steps over
// the event's containers by the spans ParseReply's validation recorded.
func AppendInspectedEvent(dst []byte, from, to dialect.ID, reply *Reply) ([]byte, EventInfo, error) {
	return appendInspectedEvent(dst, from, to, reply.Result, &reply.spans)
}

// appendInspectedEvent is AppendInspectedEvent over the spans known, nil
// when none are.
func appendInspectedEvent(dst []byte, from, to dialect.ID, result []byte, known *jsonscan.Spans) ([]byte, EventInfo, error) {
	w := getWriter()
	defer w.release()
	var info EventInfo
	c := indexed(w, from, result, known)
	c.info, c.finalIfTerminal = &info, true
	if err := c.event(jsonscan.Parse(result), to, false); err != nil {
		return nil, EventInfo{}, badReply(err)
	}
	if !w.changed {
		return result, info, nil
	}
	return append(dst, w.buf...), info, nil
}

func (c *conv) sendResult(root gjson.Result, to dialect.ID) error {
	kind, inner, err := payload(c.sp, root)
	if err != nil {
		return err
	}
	if kind != KindTask && kind != KindMessage {
		return fail("a send returns a task or a message, got a %s", kind)
	}
	return c.eventPayload(root, kind, inner, to, false)
}

var pushListKeys = [...]keySpec{{"configs", ""}, {"nextPageToken", "next_page_token"}}

func (c *conv) pushConfigList(root gjson.Result, to dialect.ID) error {
	list, next := root, gjson.Result{}
	var m members
	if root.IsObject() {
		if err := collect(root, pushListKeys[:], &m); err != nil {
			return err
		}
		list, next = m.vals[0], m.vals[1]
		if !list.Exists() {
			list = gjson.Result{Type: gjson.JSON, Raw: "[]"}
		}
	}
	if err := wantString(next, "nextPageToken"); next.Exists() && err != nil {
		return err
	}
	if err := wantArray(list, "configs"); err != nil || !list.IsArray() {
		if err == nil {
			err = fail("must be a list of push configs, got %s", typeName(root))
		}
		return err
	}
	w := c.w
	w.changed = w.changed || root.IsArray() != (to == dialect.V03)
	w.changed = w.changed || m.renamed // next_page_token, which encoding/json readers miss
	// ProtoJSON leaves an empty list out.
	noConfigs := to == dialect.V10 && isEmptyArray(list)
	w.changed = w.changed || (noConfigs && m.vals[0].Exists())
	if to == dialect.V10 {
		w.open('{')
		if !noConfigs {
			w.key("configs")
		}
	}
	if !noConfigs {
		if err := c.array(list, func(v gjson.Result) error { return c.taskPushConfig(v, to, false) }); err != nil {
			return at(err, "configs")
		}
	}
	if to == dialect.V10 {
		if next.Exists() && next.Str != "" {
			w.key("nextPageToken")
			w.raw(next.Raw)
		}
		w.closeObject(root, pushListKeys[:], m.unknown)
	}
	return nil
}

// emptyResult writes a push config delete's result: null in 0.x, the
// ProtoJSON google.protobuf.Empty ({}) in 1.0.
func (c *conv) emptyResult(root gjson.Result, to dialect.ID) error {
	switch {
	case root.Type == gjson.Null || !root.Exists():
	case root.IsObject() && isEmptyObject(root):
	default:
		return fail("a delete returns nothing, got %s", typeName(root))
	}
	out := "{}"
	if to == dialect.V03 {
		out = "null"
	}
	c.w.changed = c.w.changed || root.Raw != out
	c.w.raw(out)
	return nil
}

func isEmptyObject(v gjson.Result) bool {
	empty := true
	jsonscan.Each(v, func(_, _ gjson.Result) bool { empty = false; return false })
	return empty
}

var taskListKeys = [...]keySpec{{"tasks", ""}, {"nextPageToken", "next_page_token"}, {"pageSize", "page_size"}, {"totalSize", "total_size"}}

// taskList normalizes a 1.0 ListTasksResponse. ListTasks exists only in 1.0.
func (c *conv) taskList(root gjson.Result) error {
	var m members
	if err := collect(root, taskListKeys[:], &m); err != nil {
		return err
	}
	w := c.w
	w.changed = w.changed || m.renamed
	w.open('{')
	w.key("tasks")
	tasks := m.vals[0]
	if !tasks.Exists() {
		tasks = gjson.Result{Type: gjson.JSON, Raw: "[]"}
		w.changed = true
	}
	if err := wantArray(tasks, "tasks"); err != nil {
		return err
	}
	if err := c.array(tasks, func(v gjson.Result) error { return c.task(v, dialect.V10) }); err != nil {
		return at(err, "tasks")
	}
	// The one exception to ProtoJSON's omission of defaults: the spec
	// requires these members even at their zero values (1.0 §3.1.4, and
	// the proto marks them REQUIRED), and a ProtoJSON reader accepts them.
	defaults := []string{`""`, "0", "0"}
	for i, spec := range taskListKeys[1:] {
		w.key(spec.camel)
		if x := m.vals[i+1]; x.Exists() {
			w.raw(x.Raw)
		} else {
			w.raw(defaults[i])
			w.changed = true
		}
	}
	w.closeObject(root, taskListKeys[:], m.unknown)
	return nil
}
