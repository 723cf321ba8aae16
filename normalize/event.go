package normalize

import (
	"time"

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/jsonscan"
)

// Kind is what a send result or stream event carries.
type Kind uint8

const (
	KindNone Kind = iota
	KindTask
	KindMessage
	KindStatusUpdate
	KindArtifactUpdate
)

var kindNames = [...]string{"none", "task", "message", "status_update", "artifact_update"}

// String returns a snake_case name, safe as a metric label value.
func (k Kind) String() string { return kindNames[k] }

// payload finds what a send result or stream event carries, in either
// dialect: a 0.x object discriminated by "kind", or a 1.0 one-key wrapper.
func payload(sp *jsonscan.Spans, result gjson.Result) (Kind, gjson.Result, error) {
	if !result.IsObject() {
		return KindNone, result, fail("must be an object, got %s", typeName(result))
	}
	// One pass over the members: a 0.x "kind" may come last, after the
	// whole object, and a lookup per question would walk it each time.
	var kindMember, inner gjson.Result
	var kind Kind
	var stranger string
	strangers, n := 0, 0
	sp.Each(result, func(k, v gjson.Result) bool {
		n++
		switch k.Str {
		case "kind":
			kindMember = v
		case "task":
			kind, inner = KindTask, v
		case "message":
			kind, inner = KindMessage, v
		case "statusUpdate", "status_update":
			kind, inner = KindStatusUpdate, v
		case "artifactUpdate", "artifact_update":
			kind, inner = KindArtifactUpdate, v
		default:
			if strangers++; strangers == 1 {
				stranger = k.Str
			}
		}
		return true
	})
	if kindMember.Exists() {
		for i, p := range dialect.EventKinds {
			if kindMember.Str == p.V03 {
				return Kind(i + 1), result, nil
			}
		}
		return KindNone, result, at(fail("unknown kind %s (want task, message, status-update or artifact-update)", kindMember.Raw), "kind")
	}
	switch {
	case strangers > 0:
		return KindNone, result, fail("has member %q: want exactly one of task, message, statusUpdate or artifactUpdate", stranger)
	case n != 1:
		return KindNone, result, fail("must hold exactly one of task, message, statusUpdate or artifactUpdate (or a 0.x kind)")
	}
	return kind, inner, nil
}

// EventInfo is what the gateway needs to know about a stream event or send
// result, whichever dialect spelled it.
type EventInfo struct {
	Kind      Kind
	TaskID    string
	ContextID string
	State     string // 1.0 task state name; "" for messages and artifact updates
	// Timestamp is the status timestamp, zero when the status has none (it
	// is optional in 0.x) or it is not a date-time.
	Timestamp time.Time
	// Final is the 0.x final flag when the event carried one.
	Final, HasFinal bool
	// History is the number of messages in a task's history member;
	// HasHistory is false when there is none.
	History    int
	HasHistory bool
}

// Inspect reads an event or send result without translating it.
func Inspect(result []byte) (EventInfo, error) {
	return inspectResult(jsonscan.Parse(result))
}

func inspectResult(root gjson.Result) (EventInfo, error) {
	kind, inner, err := payload(nil, root)
	if err != nil {
		return EventInfo{}, err
	}
	return inspect(kind, inner), nil
}

// inspect reads what EventInfo needs from the object a result carries, in
// one pass over its members and one over its status.
func inspect(kind Kind, obj gjson.Result) EventInfo {
	info := EventInfo{Kind: kind}
	var status gjson.Result
	jsonscan.Each(obj, func(k, v gjson.Result) bool {
		switch k.Str {
		case "id":
			if kind == KindTask {
				info.TaskID = v.Str
			}
		case "taskId", "task_id":
			if kind != KindTask {
				info.TaskID = v.Str
			}
		case "contextId", "context_id":
			info.ContextID = v.Str
		case "status":
			status = v
		case "final":
			if v.IsBool() {
				info.Final, info.HasFinal = v.Bool(), true
			}
		case "history":
			if kind == KindTask && v.IsArray() {
				info.HasHistory = true
				jsonscan.Each(v, func(_, _ gjson.Result) bool { info.History++; return true })
			}
		}
		return true
	})
	if kind != KindTask && kind != KindStatusUpdate {
		return info
	}
	jsonscan.Each(status, func(k, v gjson.Result) bool {
		switch k.Str {
		case "state":
			info.State = stateV10(v)
		case "timestamp":
			info.Timestamp = statusTimestamp(v)
		}
		return true
	})
	return info
}

// statusTimestamp reads a status timestamp for EventInfo, zero when v is
// not a date-time.
func statusTimestamp(v gjson.Result) time.Time {
	if v.Type != gjson.String {
		return time.Time{}
	}
	t, err := parseISO8601(v.Str)
	if err != nil {
		return time.Time{}
	}
	return t.UTC()
}

func firstOf(obj gjson.Result, keys ...string) gjson.Result {
	for _, k := range keys {
		if v := jsonscan.Member(obj, k); v.Exists() {
			return v
		}
	}
	return gjson.Result{}
}

// event writes a send result or stream event in dialect to. final is the 0.x
// final flag to write on a status update that does not carry one.
func (c *conv) event(result gjson.Result, to dialect.ID, final bool) error {
	kind, inner, err := payload(c.sp, result)
	if err != nil {
		return err
	}
	return c.eventPayload(result, kind, inner, to, final)
}

// eventPayload is event for a result whose payload has been found.
func (c *conv) eventPayload(result gjson.Result, kind Kind, inner gjson.Result, to dialect.ID, final bool) (err error) {
	if c.info != nil {
		c.info.Kind = kind
	}
	w := c.w
	wrapped := inner.Index != result.Index || inner.Raw != result.Raw
	if (to == dialect.V10) != wrapped {
		w.changed = true
	}
	if to == dialect.V10 {
		w.open('{')
		w.key(dialect.EventKinds[kind-1].V10)
	}
	switch kind {
	case KindTask:
		err = c.task(inner, to)
	case KindMessage:
		err = c.message(inner, to)
	case KindStatusUpdate:
		err = c.statusUpdate(inner, to, final)
	case KindArtifactUpdate:
		err = c.artifactUpdate(inner, to)
	}
	if err != nil {
		if wrapped {
			return at(err, dialect.EventKinds[kind-1].V10)
		}
		return err
	}
	if to == dialect.V10 {
		w.close('}')
	}
	return nil
}

const (
	uKind = iota
	uTaskID
	uContextID
	uStatus
	uArtifact
	uAppend
	uLastChunk
	uFinal
	uMetadata
)

// updateNames names the update kinds in error messages.
var updateNames = map[string]string{"status-update": "a status update", "artifact-update": "an artifact update"}

var updateKeys = [...]keySpec{
	uKind:      {"kind", ""},
	uTaskID:    {"taskId", "task_id"},
	uContextID: {"contextId", "context_id"},
	uStatus:    {"status", ""},
	uArtifact:  {"artifact", ""},
	uAppend:    {"append", ""},
	uLastChunk: {"lastChunk", "last_chunk"},
	uFinal:     {"final", ""},
	uMetadata:  {"metadata", ""},
}

// update reads the members common to status and artifact updates and
// writes the head of the object: kind, taskId, contextId, which it records
// in info when info is not nil.
func (c *conv) updateHead(obj gjson.Result, m *members, to dialect.ID, kind string, info *EventInfo) error {
	if err := collect(obj, updateKeys[:], m); err != nil {
		return err
	}
	v := &m.vals
	if k := v[uKind]; k.Exists() && k.Str != kind {
		return at(fail("must be %q in %s, got %s", kind, updateNames[kind], k.Raw), "kind")
	}
	if err := requireString(v[uTaskID], "taskId"); err != nil {
		return err
	}
	if err := checkContextAndMetadata(v[uContextID], v[uMetadata]); err != nil {
		return err
	}
	if info != nil {
		info.TaskID, info.ContextID = v[uTaskID].Str, v[uContextID].Str
	}
	w := c.w
	// A 1.0 wrapper holds no kind; one left inside must not pass through.
	w.changed = w.changed || m.renamed || (to == dialect.V10 && v[uKind].Exists())
	c.openWithIDs(to, kind, "taskId", v[uTaskID], v[uContextID])
	return nil
}

func (c *conv) statusUpdate(obj gjson.Result, to dialect.ID, final bool) error {
	var m members
	info, local := c.takeInfo(), EventInfo{}
	if info == nil {
		info = &local // the state decides final when c.finalIfTerminal
	}
	if err := c.updateHead(obj, &m, to, "status-update", info); err != nil {
		return err
	}
	v := &m.vals
	if v[uArtifact].Exists() || v[uAppend].Exists() || v[uLastChunk].Exists() {
		return fail("a status update carries no artifact, append or lastChunk")
	}
	w := c.w
	if !v[uStatus].Exists() {
		return at(fail("is required"), "status")
	}
	w.key("status")
	if err := c.status(v[uStatus], to, info); err != nil {
		return at(err, "status")
	}
	f := v[uFinal]
	if err := wantBool(f, "final"); err != nil {
		return err
	}
	if f.Exists() {
		info.Final, info.HasFinal = f.Bool(), true
	}
	if to == dialect.V03 {
		w.key("final")
		if f.Exists() {
			w.raw(f.Raw)
		} else {
			if c.finalIfTerminal {
				final = dialect.TerminalState(info.State)
			}
			w.bool(final)
			w.changed = true
		}
	} else if f.Exists() {
		w.changed = true
	}
	c.updateTail(obj, &m)
	return nil
}

func (c *conv) artifactUpdate(obj gjson.Result, to dialect.ID) error {
	var m members
	if err := c.updateHead(obj, &m, to, "artifact-update", c.takeInfo()); err != nil {
		return err
	}
	v := &m.vals
	if v[uStatus].Exists() || v[uFinal].Exists() {
		return fail("an artifact update carries no status or final")
	}
	if !v[uArtifact].Exists() {
		return at(fail("is required"), "artifact")
	}
	w := c.w
	w.key("artifact")
	if err := c.artifact(v[uArtifact], to); err != nil {
		return at(err, "artifact")
	}
	for _, i := range []int{uAppend, uLastChunk} {
		if x := v[i]; x.Exists() {
			if err := wantBool(x, updateKeys[i].camel); err != nil {
				return err
			}
			if c.skipDefault(x, to) {
				continue
			}
			w.key(updateKeys[i].camel)
			w.raw(x.Raw)
		}
	}
	c.updateTail(obj, &m)
	return nil
}

func (c *conv) updateTail(obj gjson.Result, m *members) {
	w := c.w
	w.copyPresent(m, updateKeys[:], uMetadata)
	w.closeObject(obj, updateKeys[:], m.unknown)
}

// InspectTask reads a bare Task (a get or cancel result) in either dialect.
func InspectTask(task []byte) EventInfo {
	return inspect(KindTask, jsonscan.Parse(task))
}
