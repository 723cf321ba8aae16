package normalize

import (
	"time"

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/dialect"
)

const (
	tKind = iota
	tID
	tContextID
	tStatus
	tArtifacts
	tHistory
	tMetadata
)

var taskKeys = [...]keySpec{
	tKind:      {"kind", ""},
	tID:        {"id", ""},
	tContextID: {"contextId", "context_id"},
	tStatus:    {"status", ""},
	tArtifacts: {"artifacts", ""},
	tHistory:   {"history", ""},
	tMetadata:  {"metadata", ""},
}

// checkContextAndMetadata checks the optional contextId and metadata that
// tasks and updates share.
func checkContextAndMetadata(ctx, md gjson.Result) error {
	if ctx.Exists() {
		if err := wantString(ctx, "contextId"); err != nil {
			return err
		}
	}
	return wantStruct(md, "metadata")
}

// openWithIDs opens a task or an update: its 0.x kind, its id under
// idName and its contextId, which 0.x requires and ProtoJSON leaves out
// when empty.
func (c *conv) openWithIDs(to dialect.ID, kind, idName string, id, ctx gjson.Result) {
	w := c.w
	w.open('{')
	if to == dialect.V03 {
		w.key("kind")
		w.quoted(kind)
	}
	w.key(idName)
	w.raw(id.Raw)
	switch {
	case c.skipDefault(ctx, to):
	case ctx.Exists():
		w.key("contextId")
		w.raw(ctx.Raw)
	case to == dialect.V03:
		w.key("contextId")
		w.raw(`""`)
		w.changed = true
	}
}

// task writes the Task obj in dialect to.
func (c *conv) task(obj gjson.Result, to dialect.ID) error {
	info := c.takeInfo()
	var m members
	if err := c.collect(obj, taskKeys[:], &m); err != nil {
		return err
	}
	v := &m.vals
	if k := v[tKind]; k.Exists() && k.Str != "task" {
		return at(fail("must be \"task\" in a task, got %s", k.Raw), "kind")
	}
	if err := requireString(v[tID], "id"); err != nil {
		return err
	}
	if !v[tStatus].Exists() {
		return at(fail("is required"), "status")
	}
	if err := checkContextAndMetadata(v[tContextID], v[tMetadata]); err != nil {
		return err
	}
	if info != nil {
		info.TaskID, info.ContextID = v[tID].Str, v[tContextID].Str
	}
	w := c.w
	w.changed = w.changed || m.renamed || (to == dialect.V10) == v[tKind].Exists()
	c.openWithIDs(to, "task", "id", v[tID], v[tContextID])
	w.key("status")
	if err := c.status(v[tStatus], to, info); err != nil {
		return at(err, "status")
	}
	if a := v[tArtifacts]; a.Exists() && !(a.IsArray() && c.skipDefault(a, to)) {
		w.key("artifacts")
		if err := c.artifacts(a, to); err != nil {
			return at(err, "artifacts")
		}
	}
	if h := v[tHistory]; h.Exists() && h.IsArray() && c.skipDefault(h, to) {
		if info != nil {
			info.History, info.HasHistory = 0, true
		}
	} else if h.Exists() {
		w.key("history")
		n := 0
		err := c.array(h, func(v gjson.Result) error { n++; return c.message(v, to) })
		if err != nil {
			return at(err, "history")
		}
		if info != nil {
			info.History, info.HasHistory = n, true
		}
	}
	w.copyPresent(&m, taskKeys[:], tMetadata)
	w.closeObject(obj, taskKeys[:], m.unknown)
	return nil
}

const (
	sState = iota
	sMessage
	sTimestamp
)

var statusKeys = [...]keySpec{
	sState:     {"state", ""},
	sMessage:   {"message", ""},
	sTimestamp: {"timestamp", ""},
}

// status writes a TaskStatus in dialect to, and records its state in info
// when info is not nil.
func (c *conv) status(obj gjson.Result, to dialect.ID, info *EventInfo) error {
	var m members
	if err := c.collect(obj, statusKeys[:], &m); err != nil {
		return err
	}
	v := &m.vals
	w := c.w
	w.open('{')
	// ProtoJSON omits a default enum, so a missing state is UNSPECIFIED.
	state := dialect.TaskStates[0]
	if s := v[sState]; s.Exists() {
		var err error
		if state, err = stateOf(s); err != nil {
			return at(err, "state")
		}
	}
	switch {
	case to == dialect.V10 && state.Number == 0:
		w.changed = w.changed || v[sState].Exists()
	case v[sState].Exists() || to == dialect.V03:
		w.key("state")
		c.enum(v[sState], state, to)
	}
	if info != nil && v[sState].Exists() {
		info.State = state.V10
	}
	if info != nil {
		info.Timestamp = statusTimestamp(v[sTimestamp])
	}
	if msg := v[sMessage]; msg.Exists() {
		w.key("message")
		if err := c.message(msg, to); err != nil {
			return at(err, "message")
		}
	}
	if ts := v[sTimestamp]; ts.Exists() {
		w.key("timestamp")
		if err := c.timestamp(ts, to); err != nil {
			return at(err, "timestamp")
		}
	}
	w.closeObject(obj, statusKeys[:], m.unknown)
	return nil
}

// stateOf reads a task state in either spelling, or as its proto number.
func stateOf(v gjson.Result) (dialect.Pair, error) {
	switch v.Type {
	case gjson.String:
		for _, p := range dialect.TaskStates {
			if v.Str == p.V03 || v.Str == p.V10 {
				return p, nil
			}
		}
		// The 0.3 gRPC/REST spelling, seen from servers that share code
		// between bindings.
		if v.Str == "TASK_STATE_CANCELLED" {
			return dialect.TaskStates[5], nil
		}
	case gjson.Number:
		if p, ok := dialect.ByNumber(dialect.TaskStates, int(v.Num)); ok && float64(p.Number) == v.Num {
			return p, nil
		}
	}
	return dialect.Pair{}, fail("unknown task state %s", v.Raw)
}

// stateV10 returns the 1.0 name of a task state written in either dialect,
// and "" when v is not a task state.
func stateV10(v gjson.Result) string {
	p, err := stateOf(v)
	if err != nil {
		return ""
	}
	return p.V10
}

// timestamp writes an ISO 8601 timestamp. 1.0 wants RFC 3339 in UTC with a Z
// (spec §5.6.1), spelled as ProtoJSON writes a google.protobuf.Timestamp:
// 0, 3, 6 or 9 fractional digits. 0.x peers write local offsets ("+00:00")
// or none at all. 0.x accepts any ISO 8601 form, so the 1.0 form passes
// there unchanged; a 1.0 peer's is checked first all the same, as it is
// toward 1.0, since it must be RFC 3339 and a 0.x client that decodes it as
// a date-time rejects the whole answer otherwise.
func (c *conv) timestamp(v gjson.Result, to dialect.ID) error {
	if v.Type != gjson.String {
		return fail("must be a string, got %s", typeName(v))
	}
	s := v.Str
	if to == dialect.V03 && c.from != dialect.V10 {
		c.w.raw(v.Raw)
		return nil
	}
	t, err := parseISO8601(s)
	if err != nil {
		return fail("%q is not an RFC 3339 / ISO 8601 date-time", s)
	}
	if y := t.UTC().Year(); y < 1 || y > 9999 {
		// google.protobuf.Timestamp's range: ProtoJSON parsers refuse the
		// whole message over a timestamp outside it.
		return fail("%q is outside the years 1 to 9999 (UTC) a timestamp can hold", s)
	}
	if to == dialect.V03 {
		c.w.raw(v.Raw)
		return nil
	}
	start := len(c.w.buf)
	c.w.buf = append(c.w.buf, '"')
	c.w.buf = appendProtoTimestamp(c.w.buf, t)
	c.w.buf = append(c.w.buf, '"')
	if string(c.w.buf[start:]) != v.Raw {
		c.w.changed = true
	}
	return nil
}

// appendProtoTimestamp appends t as ProtoJSON writes a Timestamp: UTC, Z,
// and the fraction of a second in 3, 6 or 9 digits, none when it is zero.
func appendProtoTimestamp(dst []byte, t time.Time) []byte {
	t = t.UTC()
	dst = t.AppendFormat(dst, "2006-01-02T15:04:05")
	ns, digits := t.Nanosecond(), 9
	switch {
	case ns == 0:
		digits = 0
	case ns%1e6 == 0:
		ns, digits = ns/1e6, 3
	case ns%1e3 == 0:
		ns, digits = ns/1e3, 6
	}
	if digits > 0 {
		dst = append(dst, '.')
		var frac [9]byte
		for i := digits - 1; i >= 0; i-- {
			frac[i] = byte('0' + ns%10)
			ns /= 10
		}
		dst = append(dst, frac[:digits]...)
	}
	return append(dst, 'Z')
}

// parseISO8601 accepts RFC 3339 and the common ISO 8601 forms without a
// zone, which it reads as UTC (Python's naive datetime.isoformat()).
func parseISO8601(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	for _, layout := range []string{"2006-01-02T15:04:05.999999999", "2006-01-02T15:04:05.999999999Z0700", "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999"} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fail("bad date-time")
}

const (
	aArtifactID = iota
	aName
	aDescription
	aParts
	aMetadata
	aExtensions
)

var artifactKeys = [...]keySpec{
	aArtifactID:  {"artifactId", "artifact_id"},
	aName:        {"name", ""},
	aDescription: {"description", ""},
	aParts:       {"parts", ""},
	aMetadata:    {"metadata", ""},
	aExtensions:  {"extensions", ""},
}

// artifact writes an Artifact; its keys are the same in both dialects, only
// the parts inside change.
func (c *conv) artifact(obj gjson.Result, to dialect.ID) error {
	var m members
	if err := c.collect(obj, artifactKeys[:], &m); err != nil {
		return err
	}
	v := &m.vals
	if err := requireString(v[aArtifactID], "artifactId"); err != nil {
		return err
	}
	if !v[aParts].Exists() {
		return at(fail("is required"), "parts")
	}
	if err := wantStruct(v[aMetadata], "metadata"); err != nil {
		return err
	}
	w := c.w
	w.changed = w.changed || m.renamed
	w.open('{')
	w.key("artifactId")
	w.raw(v[aArtifactID].Raw)
	c.copyUnlessDefault(&m, artifactKeys[:], to, aName, aDescription)
	w.key("parts")
	if err := c.parts(v[aParts], to); err != nil {
		return at(err, "parts")
	}
	w.copyPresent(&m, artifactKeys[:], aMetadata)
	c.copyUnlessDefault(&m, artifactKeys[:], to, aExtensions)
	w.closeObject(obj, artifactKeys[:], m.unknown)
	return nil
}

func (c *conv) artifacts(arr gjson.Result, to dialect.ID) error {
	return c.array(arr, func(v gjson.Result) error { return c.artifact(v, to) })
}
