package normalize

import (
	"strings"

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/jsonscan"
)

// conv is one translation: where the output goes and what the input was.
type conv struct {
	w *writer
	// from is the dialect the input was sent in. Most members read the same
	// whichever dialect wrote them; from decides the few that do not
	// (historyLength 0, the push config "id", compat-wrapped data).
	from dialect.ID
	// info, when set, is where the walk records what the gateway needs of
	// the result's own object (see EventInfo), so that no second walk reads
	// it. The first object walked takes it, not those nested in it.
	info *EventInfo
	// finalIfTerminal makes the 0.x final flag written on a status update
	// that carries none follow the update's state (true when terminal),
	// rather than the flag the caller passed.
	finalIfTerminal bool
	// sp, when set, knows where the containers of the document being
	// translated end (jsonscan.Spans); nil walks by scanning.
	sp *jsonscan.Spans
	// request marks a caller's request, whose members are refused where
	// the target has no place for them, never dropped.
	request bool
}

// indexed returns a conversion into w whose walks step over the
// containers of doc, the document it will translate, by lookup: over
// known, the spans its validation recorded, when they hold doc, or else
// over spans recorded now.
func indexed(w *writer, from dialect.ID, doc []byte, known *jsonscan.Spans) conv {
	if known.Holds(doc) {
		return conv{w: w, from: from, sp: known}
	}
	w.spans.Index(doc)
	return conv{w: w, from: from, sp: &w.spans}
}

// collect is collect over the document's spans.
func (c *conv) collect(obj gjson.Result, specs []keySpec, m *members) error {
	return collectIn(c.sp, obj, specs, m)
}

// takeInfo returns where the object being walked records its EventInfo, and
// nil to every object after the first.
func (c *conv) takeInfo() *EventInfo {
	info := c.info
	c.info = nil
	return info
}

const (
	mKind = iota
	mMessageID
	mRole
	mParts
	mContextID
	mTaskID
	mReferenceTaskIDs
	mExtensions
	mMetadata
)

var messageKeys = [...]keySpec{
	mKind:             {"kind", ""},
	mMessageID:        {"messageId", "message_id"},
	mRole:             {"role", ""},
	mParts:            {"parts", ""},
	mContextID:        {"contextId", "context_id"},
	mTaskID:           {"taskId", "task_id"},
	mReferenceTaskIDs: {"referenceTaskIds", "reference_task_ids"},
	mExtensions:       {"extensions", ""},
	mMetadata:         {"metadata", ""},
}

// readMessage collects and validates a Message in dialect from. A 1.0
// message may lack a role: ProtoJSON leaves ROLE_UNSPECIFIED out.
func readMessage(sp *jsonscan.Spans, obj gjson.Result, m *members, from dialect.ID) error {
	if err := collectIn(sp, obj, messageKeys[:], m); err != nil {
		return err
	}
	if k := m.vals[mKind]; k.Exists() && k.Str != "message" {
		return at(fail("must be \"message\" in a message, got %s", k.Raw), "kind")
	}
	if err := requireString(m.vals[mMessageID], "messageId"); err != nil {
		return err
	}
	if !m.vals[mRole].Exists() && from != dialect.V10 {
		return at(fail("is required (\"user\" or \"agent\")"), "role")
	}
	parts := m.vals[mParts]
	if !parts.Exists() {
		return at(fail("is required and must hold at least one part"), "parts")
	}
	if err := wantArray(parts, "parts"); err != nil {
		return err
	}
	if isEmptyArray(parts) {
		return at(fail("must hold at least one part"), "parts")
	}
	for _, i := range []int{mContextID, mTaskID} {
		if v := m.vals[i]; v.Exists() {
			if err := wantString(v, messageKeys[i].camel); err != nil {
				return err
			}
		}
	}
	if err := wantStringArray(m.vals[mReferenceTaskIDs], "referenceTaskIds"); err != nil {
		return err
	}
	if err := wantStringArray(m.vals[mExtensions], "extensions"); err != nil {
		return err
	}
	return wantStruct(m.vals[mMetadata], "metadata")
}

// protoDefault reports whether v is the default value of a proto3 field
// without explicit presence: "", false, 0, an empty list, or null.
func protoDefault(v gjson.Result) bool {
	switch v.Type {
	case gjson.Null, gjson.False:
		return true
	case gjson.String:
		return v.Str == ""
	case gjson.Number:
		return v.Num == 0
	}
	return isEmptyArray(v)
}

// skipDefault reports whether member v of such a field is left out of a
// 1.0 output, as ProtoJSON leaves a default value out, and notes the change.
func (c *conv) skipDefault(v gjson.Result, to dialect.ID) bool {
	if to != dialect.V10 || !v.Exists() || !protoDefault(v) {
		return false
	}
	c.w.changed = true
	return true
}

// isEmptyArray reports whether the array v has no elements; it looks at the
// first byte inside rather than reading (and skipping) a first element.
func isEmptyArray(v gjson.Result) bool {
	return v.IsArray() && strings.HasPrefix(strings.TrimLeft(v.Raw[1:], " \t\r\n"), "]")
}

// roleOf reads a role in either spelling, or as its proto number.
func roleOf(v gjson.Result) (dialect.Pair, error) {
	switch v.Type {
	case gjson.String:
		for _, p := range dialect.Roles {
			if (v.Str == p.V03 && p.V03 != "") || v.Str == p.V10 {
				return p, nil
			}
		}
	case gjson.Number:
		if p, ok := dialect.ByNumber(dialect.Roles, int(v.Num)); ok && float64(p.Number) == v.Num {
			return p, nil
		}
	}
	return dialect.Pair{}, at(fail("unknown role %s (want \"user\" or \"agent\")", v.Raw), "role")
}

// message writes the Message obj in dialect to.
func (c *conv) message(obj gjson.Result, to dialect.ID) error {
	info := c.takeInfo()
	var m members
	if err := readMessage(c.sp, obj, &m, c.from); err != nil {
		return err
	}
	if info != nil {
		info.TaskID, info.ContextID = m.vals[mTaskID].Str, m.vals[mContextID].Str
	}
	return c.writeMessage(obj, &m, to)
}

func (c *conv) writeMessage(obj gjson.Result, m *members, to dialect.ID) error {
	w := c.w
	role := dialect.Roles[2] // ROLE_UNSPECIFIED, when a 1.0 message has none
	if r := m.vals[mRole]; r.Exists() {
		var err error
		if role, err = roleOf(r); err != nil {
			return err
		}
	}
	w.open('{')
	if to == dialect.V03 {
		w.key("kind")
		w.quoted("message")
		if !m.vals[mKind].Exists() {
			w.changed = true
		}
	} else if m.vals[mKind].Exists() {
		w.changed = true
	}
	w.changed = w.changed || m.renamed
	w.key("messageId")
	w.raw(m.vals[mMessageID].Raw)
	if v := m.vals[mContextID]; v.Exists() && !c.skipDefault(v, to) {
		w.key("contextId")
		w.raw(v.Raw)
	}
	if v := m.vals[mTaskID]; v.Exists() && !c.skipDefault(v, to) {
		w.key("taskId")
		w.raw(v.Raw)
	}
	if to == dialect.V10 && role.Number == 0 {
		// ProtoJSON leaves the default enum value out.
		w.changed = w.changed || m.vals[mRole].Exists()
	} else {
		w.key("role")
		c.enum(m.vals[mRole], role, to)
	}
	w.key("parts")
	if err := c.parts(m.vals[mParts], to); err != nil {
		return at(err, "parts")
	}
	w.copyPresent(m, messageKeys[:], mMetadata)
	c.copyUnlessDefault(m, messageKeys[:], to, mExtensions, mReferenceTaskIDs)
	w.closeObject(obj, messageKeys[:], m.unknown)
	return nil
}

// enum writes p in dialect to, noting a change when the input spelled it
// otherwise. 0.x has no spelling for some 1.0 values; those become "unknown"
// as the SDK compat layers write them.
func (c *conv) enum(in gjson.Result, p dialect.Pair, to dialect.ID) {
	out := p.V10
	if to == dialect.V03 {
		out = p.V03
		if out == "" {
			out = "unknown"
			if p.V10 == "ROLE_UNSPECIFIED" {
				out = "agent"
			}
		}
	}
	if in.Type != gjson.String || in.Str != out {
		c.w.changed = true
	}
	c.w.quoted(out)
}

// array writes arr element by element with write, which translates one
// element; failures carry the element's index in their path.
func (c *conv) array(arr gjson.Result, write func(gjson.Result) error) error {
	if err := wantArray(arr, ""); err != nil {
		return err
	}
	c.w.open('[')
	var err error
	i := 0
	c.sp.Each(arr, func(_, v gjson.Result) bool {
		c.w.elem()
		if err = write(v); err != nil {
			err = atIndex(err, i)
			return false
		}
		i++
		return true
	})
	c.w.close(']')
	return err
}
