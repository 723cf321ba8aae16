package normalize

import (
	"math"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/jsonscan"
)

// RequestInfo is what the gateway needs from a request's params to route,
// authorize and post-process it, in canonical (1.0) meaning.
type RequestInfo struct {
	// TaskID is the task the call addresses: the id of get, cancel,
	// subscribe and push config calls, or message.taskId of a send.
	TaskID string
	// ContextID is message.contextId of a send.
	ContextID string
	// MessageID is message.messageId of a send, a view into its params.
	MessageID string
	// HistoryLength is the number of history messages the caller wants
	// back, in 1.0 meaning (0 = none); HasHistoryLength is false for "all".
	HistoryLength    int
	HasHistoryLength bool
	// Blocking is the send's blocking mode (true when the caller did not say).
	Blocking bool
	// SkillID is metadata.skillId of a send (message or params metadata).
	SkillID string
	// PushConfigID is the config id of a push config get or delete; "" when
	// a 0.x caller left it out.
	PushConfigID string
	// Tenant is the tenant of a send, a get, cancel or subscribe, or a
	// push config call ("" for none), which the gateway's own calls about
	// the task (the relay's, its reads of the task) carry.
	Tenant string
	// ReferenceTaskIDs is message.referenceTaskIds of a send, the other
	// tasks the message names as its context; nil when it names none.
	ReferenceTaskIDs []string
}

// Params translates the params of op, sent in dialect from, into dialect
// to, validating them on the way. It returns params itself when nothing had
// to change, so same-dialect traffic is not copied. A nil result for a
// non-nil input means the target method takes no params. Failures are
// *Error of kind InvalidParams, with the JSON path of what is wrong.
func Params(op dialect.Op, from, to dialect.ID, params []byte) ([]byte, RequestInfo, error) {
	return appendParams(nil, op, from, to, params, nil, true)
}

// AppendParams is Params for the params of env, a request ParseRequest
// read, into dialect to, appending a translation to dst so a caller can
// give it a buffer it reuses; it returns env.Params itself, not dst, when
// nothing had to change. It steps over the containers of env.Params by
// the spans ParseRequest's validation recorded, rather than scanning them
// again.
func AppendParams(dst []byte, env *Envelope, to dialect.ID) ([]byte, RequestInfo, error) {
	return appendParams(dst, env.Op, env.Dialect, to, env.Params, &env.spans, true)
}

// AppendCanonicalParams is AppendParams into 1.0 for the gateway's own
// reading of a request that goes to a backend of another dialect (a send's
// retry digest): a member 1.0 has no place for is left out rather than
// refused, since the request as forwarded keeps it.
func AppendCanonicalParams(dst []byte, env *Envelope) ([]byte, RequestInfo, error) {
	return appendParams(dst, env.Op, env.Dialect, dialect.V10, env.Params, &env.spans, false)
}

// appendParams is AppendParams over the spans known, nil when none are;
// request refuses a member the target has no place for (conv.request).
func appendParams(dst []byte, op dialect.Op, from, to dialect.ID, params []byte, known *jsonscan.Spans, request bool) ([]byte, RequestInfo, error) {
	var info RequestInfo
	if op == dialect.ListTasks && to == dialect.V03 {
		if _, err := ParseListTasks(params); err != nil {
			return nil, info, err
		}
		return nil, info, Errorf(dialect.ErrUnsupportedOperation, "ListTasks is not supported by this agent's backend, which speaks A2A 0.x")
	}
	if op == dialect.GetExtendedCard {
		return extendedCardParams(to, params)
	}
	w := getWriter()
	defer w.release()
	root := gjson.Result{Type: gjson.JSON, Raw: "{}"}
	if len(params) > 0 {
		root = jsonscan.Parse(params)
	}
	c := indexed(w, from, params, known)
	c.request = request
	if err := c.params(op, root, to, &info); err != nil {
		return nil, info, &Error{Kind: dialect.ErrInvalidParams, Message: "invalid params: " + at(err, "params").Error(), Err: err}
	}
	if !w.changed && len(params) > 0 {
		return params, info, nil
	}
	return append(dst, w.buf...), info, nil
}

// params writes the params of op in dialect to, always in full: whether
// the input can stand for the output is c.w.changed's call.
func (c *conv) params(op dialect.Op, root gjson.Result, to dialect.ID, info *RequestInfo) error {
	switch op {
	case dialect.SendMessage, dialect.SendStreamingMessage:
		return c.sendParams(root, to, info)
	case dialect.GetTask, dialect.CancelTask, dialect.SubscribeToTask:
		return c.taskIDParams(op, root, to, info)
	case dialect.CreatePushConfig:
		info.TaskID = firstOf(root, "taskId", "task_id").Str
		info.Tenant = firstOf(root, "tenant").Str
		return c.taskPushConfig(root, to, true)
	case dialect.GetPushConfig, dialect.ListPushConfigs, dialect.DeletePushConfig:
		return c.pushConfigParams(op, root, to, info)
	case dialect.ListTasks:
		return c.listTasksParams(root)
	}
	return fail("unsupported operation %s", op)
}

var extendedCardKeys = [...]keySpec{{"tenant", ""}}

// extendedCardParams writes GetExtendedAgentCard's params, which hold a
// tenant alone. A 1.0 backend gets them as sent, members the gateway does
// not know among them; 0.x has no params for the call (0.3 takes none,
// 0.2.5 is a GET), so there the tenant is dropped, as from every 0.x call,
// and any other member is refused rather than lost.
func extendedCardParams(to dialect.ID, params []byte) ([]byte, RequestInfo, error) {
	var info RequestInfo
	root := jsonscan.Parse(params)
	if len(params) == 0 || root.Type == gjson.Null {
		if to == dialect.V03 {
			return nil, info, nil
		}
		// The Go 1.0 server unmarshals params unconditionally: always send an object.
		return []byte("{}"), info, nil
	}
	if !root.IsObject() {
		return nil, info, Errorf(dialect.ErrInvalidParams, "invalid params: must be an object or absent")
	}
	var m members
	if err := collect(root, extendedCardKeys[:], &m); err != nil {
		return nil, info, &Error{Kind: dialect.ErrInvalidParams, Message: "invalid params: " + at(err, "params").Error(), Err: err}
	}
	if t := m.vals[0]; t.Exists() && t.Type != gjson.Null {
		if err := wantString(t, "tenant"); err != nil {
			return nil, info, &Error{Kind: dialect.ErrInvalidParams, Message: "invalid params: " + at(err, "params").Error(), Err: err}
		}
		info.Tenant = t.Str
	}
	if to == dialect.V03 {
		if m.unknown {
			return nil, info, Errorf(dialect.ErrInvalidParams, "invalid params: params has %s, which this agent's backend (A2A 0.x, whose extended card call takes no params) has no place for",
				unknownNames(root, extendedCardKeys[:]))
		}
		return nil, info, nil
	}
	return params, info, nil
}

// tenant writes a request's tenant t, when present, in 1.0; 0.x has no
// tenants, so there it is dropped.
func (w *writer) tenant(t gjson.Result, to dialect.ID) {
	switch {
	case !t.Exists():
	case to == dialect.V10:
		w.key("tenant")
		w.raw(t.Raw)
	default:
		w.changed = true
	}
}

// onlyMember reports whether obj is an object with key as its one member.
func onlyMember(obj gjson.Result, key string) bool {
	n, ok := 0, true
	jsonscan.Each(obj, func(k, _ gjson.Result) bool {
		n++
		ok = k.Str == key && k.Raw == `"`+key+`"`
		return ok
	})
	return ok && n == 1
}

const (
	spTenant = iota
	spMessage
	spConfiguration
	spMetadata
	spReturnImmediately
)

var sendKeys = [...]keySpec{
	spTenant:            {"tenant", ""},
	spMessage:           {"message", ""},
	spConfiguration:     {"configuration", ""},
	spMetadata:          {"metadata", ""},
	spReturnImmediately: {"returnImmediately", "return_immediately"},
}

func (c *conv) sendParams(root gjson.Result, to dialect.ID, info *RequestInfo) error {
	var m members
	if err := c.collect(root, sendKeys[:], &m); err != nil {
		return err
	}
	v := &m.vals
	w := c.w
	w.changed = w.changed || m.renamed
	msg := v[spMessage]
	if !msg.Exists() {
		return at(fail("is required"), "message")
	}
	var mm members
	if err := readMessage(c.sp, msg, &mm, dialect.V03); err != nil { // a role is required of a client
		return at(err, "message")
	}
	if role, _ := roleOf(mm.vals[mRole]); role.V10 != "ROLE_USER" {
		return at(at(fail("must be \"user\" in a message a client sends, got %s", mm.vals[mRole].Raw), "role"), "message")
	}
	info.TaskID, info.ContextID, info.MessageID = mm.vals[mTaskID].Str, mm.vals[mContextID].Str, mm.vals[mMessageID].Str
	for _, id := range [...]struct{ name, v string }{{"taskId", info.TaskID}, {"contextId", info.ContextID}} {
		if len(id.v) > maxNamedIDBytes {
			return at(at(fail("is longer than %d bytes", maxNamedIDBytes), id.name), "message")
		}
	}
	var refErr error
	jsonscan.Each(mm.vals[mReferenceTaskIDs], func(i, id gjson.Result) bool {
		if len(id.Str) > maxNamedIDBytes {
			refErr = at(atIndex(fail("is longer than %d bytes", maxNamedIDBytes), int(i.Int())), "referenceTaskIds")
			return false
		}
		info.ReferenceTaskIDs = append(info.ReferenceTaskIDs, id.Str)
		return true
	})
	if refErr != nil {
		return at(refErr, "message")
	}
	info.SkillID = jsonscan.Member(mm.vals[mMetadata], "skillId").Str
	if err := wantStruct(v[spMetadata], "metadata"); err != nil {
		return err
	}
	if s := jsonscan.Member(v[spMetadata], "skillId"); s.Exists() && info.SkillID == "" {
		info.SkillID = s.Str
	}
	w.open('{')
	if t := v[spTenant]; t.Exists() && t.Type != gjson.Null {
		// A tenant that is no string would be dropped toward 0.x and
		// read as none by the gateway's own reads of the task (null is
		// ProtoJSON's none).
		if err := wantString(t, "tenant"); err != nil {
			return err
		}
		info.Tenant = t.Str
	}
	w.tenant(v[spTenant], to)
	w.key("message")
	if err := c.writeMessage(msg, &mm, to); err != nil {
		return at(err, "message")
	}
	if err := c.sendConfiguration(v[spConfiguration], v[spReturnImmediately], to, info); err != nil {
		return err
	}
	if md := v[spMetadata]; md.Exists() {
		w.key("metadata")
		w.raw(md.Raw)
	}
	w.closeObject(root, sendKeys[:], m.unknown)
	return nil
}

const (
	scAcceptedOutputModes = iota
	scHistoryLength
	scBlocking
	scReturnImmediately
	scPushConfig
	scTaskPushConfig
)

var configurationKeys = [...]keySpec{
	scAcceptedOutputModes: {"acceptedOutputModes", "accepted_output_modes"},
	scHistoryLength:       {"historyLength", "history_length"},
	scBlocking:            {"blocking", ""},
	scReturnImmediately:   {"returnImmediately", "return_immediately"},
	scPushConfig:          {"pushNotificationConfig", ""},
	scTaskPushConfig:      {"taskPushNotificationConfig", "task_push_notification_config"},
}

// sendConfiguration writes the configuration member. outerRI is a
// returnImmediately some 1.0 clients put directly in params.
func (c *conv) sendConfiguration(cfg, outerRI gjson.Result, to dialect.ID, info *RequestInfo) error {
	var m members
	if cfg.Exists() {
		if err := collect(cfg, configurationKeys[:], &m); err != nil {
			return at(err, "configuration")
		}
	}
	v := &m.vals
	w := c.w
	w.changed = w.changed || m.renamed || outerRI.Exists()
	info.Blocking = true
	blockingSources := 0
	if b := v[scBlocking]; b.Exists() {
		if err := wantBool(b, "blocking"); err != nil {
			return at(err, "configuration")
		}
		info.Blocking = b.Bool()
		blockingSources++
	}
	for _, ri := range []gjson.Result{v[scReturnImmediately], outerRI} {
		if ri.Exists() {
			if err := wantBool(ri, "returnImmediately"); err != nil {
				return at(err, "configuration")
			}
			info.Blocking = !ri.Bool()
			blockingSources++
		}
	}
	if blockingSources > 1 {
		return at(fail("names blocking more than once (blocking, returnImmediately)"), "configuration")
	}
	if err := c.readHistoryLength(v[scHistoryLength], info); err != nil {
		return at(err, "configuration")
	}
	modes := v[scAcceptedOutputModes]
	if err := wantStringArray(modes, "acceptedOutputModes"); err != nil {
		return at(err, "configuration")
	}
	push := v[scPushConfig]
	if tp := v[scTaskPushConfig]; tp.Exists() {
		if push.Exists() {
			return at(fail("has both pushNotificationConfig and taskPushNotificationConfig"), "configuration")
		}
		push = tp
	}
	if to == dialect.V10 && !cfg.Exists() && info.Blocking && !outerRI.Exists() {
		return nil
	}
	w.key("configuration")
	w.open('{')
	switch {
	case to == dialect.V10 && modes.IsArray() && isEmptyArray(modes):
		// ProtoJSON leaves an empty list out.
		w.changed = true
	case modes.Exists():
		w.key("acceptedOutputModes")
		w.raw(modes.Raw)
	case to == dialect.V03:
		// Required by the 0.2.5 schema; JS compat sends an empty list too.
		w.key("acceptedOutputModes")
		w.raw("[]")
		w.changed = true
	}
	if push.Exists() {
		var p pushConfig
		if err := readPushConfig(push, &p, false, true); err != nil {
			return at(at(err, "pushNotificationConfig"), "configuration")
		}
		if t := p.get(cTaskID); t.Exists() && t.Str != "" && t.Str != info.TaskID {
			// A backend may take it as the task the config is for: another
			// caller's, one this send does not address.
			return at(at(at(fail("must be the task the message is for (message.taskId), or be left out"), "taskId"), "pushNotificationConfig"), "configuration")
		}
		if to == dialect.V10 {
			w.key("taskPushNotificationConfig")
		} else {
			w.key("pushNotificationConfig")
		}
		w.changed = w.changed || (to == dialect.V10) != (push.Index == v[scTaskPushConfig].Index && v[scTaskPushConfig].Exists())
		if err := c.writePushConfig(push, &p, to, false); err != nil {
			return at(at(err, "pushNotificationConfig"), "configuration")
		}
	}
	c.writeHistoryLength(v[scHistoryLength], info, to, true)
	if to == dialect.V03 {
		// Always explicit: 0.x servers disagree on the default (a2a-go#301).
		w.key("blocking")
		w.bool(info.Blocking)
		w.changed = w.changed || !v[scBlocking].Exists()
	} else {
		// A 0.x "blocking" in a 1.0 request must not pass through: 1.0
		// peers ignore or reject it, and the caller's choice would be lost.
		w.changed = w.changed || v[scBlocking].Exists()
		if !info.Blocking {
			w.key("returnImmediately")
			w.raw("true")
		} else if v[scReturnImmediately].Exists() || outerRI.Exists() {
			// ProtoJSON leaves a false bool out.
			w.changed = true
		}
	}
	w.closeObject(cfg, configurationKeys[:], m.unknown)
	return nil
}

// maxNamedIDBytes bounds the task and context ids a caller's message names.
// The task index keeps a message's contextId with every task of it, so a
// caller with megabyte ids would fill the index's memory long before its
// task count bound; A2A ids are UUIDs, 36 bytes.
const maxNamedIDBytes = 1024

// readHistoryLength records a requested history length in 1.0 meaning:
// 0.x reads 0 as "all", 1.0 as "none"; AllHistory is "all" in both.
func (c *conv) readHistoryLength(v gjson.Result, info *RequestInfo) error {
	if !v.Exists() || v.Type == gjson.Null {
		return nil
	}
	n, ok := int32Of(v)
	switch {
	case ok:
	case !isWholeNumber(v):
		return at(fail("must be a whole number, got %s", truncate(v.Raw, 32)), "historyLength")
	case strings.HasPrefix(strings.TrimLeft(v.Raw, `"`), "-"):
		return at(fail("must not be negative, got %s", truncate(v.Raw, 32)), "historyLength")
	default:
		return at(fail("is out of range, got %s: at most %d", truncate(v.Raw, 32), math.MaxInt32), "historyLength")
	}
	if n < 0 {
		return at(fail("must not be negative, got %d", n), "historyLength")
	}
	if (n == 0 && c.from == dialect.V03) || n == AllHistory {
		return nil
	}
	info.HistoryLength, info.HasHistoryLength = int(n), true
	return nil
}

// AllHistory is the historyLength the gateway asks a 0.x backend for when
// its caller wants the whole history: 0.x has no spelling for "no limit"
// that every server reads so (the JS 0.2.5 and 0.3 servers answer
// "history":[] when the field is absent, Python 0.3 reads 0 as all), while
// every one of them keeps at most N messages for a positive N.
const AllHistory = math.MaxInt32

// writeHistoryLength writes the requested history length so the backend
// means what the caller meant. asks is set for a get or a send, which
// return a task: a 0.x backend is then asked for AllHistory when the caller
// wants all of the history, and for 1 when it wants none (0 means all in
// 0.x), the gateway trimming the reply (TrimHistory).
func (c *conv) writeHistoryLength(in gjson.Result, info *RequestInfo, to dialect.ID, asks bool) {
	w := c.w
	n := int64(info.HistoryLength)
	switch {
	case to == dialect.V03 && asks && !info.HasHistoryLength:
		n = AllHistory
	case to == dialect.V03 && asks && n == 0:
		// The fewest a 0.x server sends back whatever it reads 0 and
		// absence as; the gateway removes the one left.
		n = 1
	case !info.HasHistoryLength || (to == dialect.V03 && n == 0):
		if in.Exists() {
			w.changed = true
		}
		return
	}
	w.key("historyLength")
	mark := len(w.buf)
	w.int(n)
	// "3.0", 1e1 or "3" are int32 to ProtoJSON but not to encoding/json
	// (the Go SDKs): only the plain integer passes through.
	if in.Type != gjson.Number || in.Raw != string(w.buf[mark:]) {
		w.changed = true
	}
}

// int32Of reads a ProtoJSON int32: a JSON number, or a numeric string.
func int32Of(v gjson.Result) (int32, bool) {
	var f float64
	switch v.Type {
	case gjson.Number:
		f = v.Num
	case gjson.String:
		// The whole string must be one JSON number: gjson.Parse alone reads
		// "5abc" or "0x10" as 0 and "3 4" as 3.
		r := gjson.Parse(v.Str)
		if r.Type != gjson.Number || r.Raw != v.Str || !gjson.Valid(v.Str) {
			return 0, false
		}
		f = r.Num
	default:
		return 0, false
	}
	if f != float64(int32(f)) {
		return 0, false
	}
	return int32(f), true
}

// isWholeNumber reports whether v is a JSON number, or a string holding
// one as ProtoJSON allows for integers, with no fractional part, whatever
// its size.
func isWholeNumber(v gjson.Result) bool {
	if v.Type == gjson.String {
		r := gjson.Parse(v.Str)
		if r.Type != gjson.Number || r.Raw != v.Str || !gjson.Valid(v.Str) {
			return false
		}
		v = r
	}
	return v.Type == gjson.Number && v.Num == math.Trunc(v.Num) && !math.IsInf(v.Num, 0)
}

const (
	tpID = iota
	tpHistoryLength
	tpMetadata
	tpTenant
)

var taskIDKeys = [...]keySpec{
	tpID:            {"id", ""},
	tpHistoryLength: {"historyLength", "history_length"},
	tpMetadata:      {"metadata", ""},
	tpTenant:        {"tenant", ""},
}

// taskIDParams writes the params of get, cancel and subscribe: a task id
// plus, per dialect, historyLength, metadata and tenant.
func (c *conv) taskIDParams(op dialect.Op, root gjson.Result, to dialect.ID, info *RequestInfo) error {
	var m members
	if err := collect(root, taskIDKeys[:], &m); err != nil {
		return err
	}
	v := &m.vals
	if err := requireString(v[tpID], "id"); err != nil {
		return err
	}
	info.TaskID = v[tpID].Str
	if t := v[tpTenant]; t.Exists() && t.Type != gjson.Null {
		// A tenant that is no string would be dropped toward 0.x and
		// read as none by the gateway's own reads of the task (null is
		// ProtoJSON's none).
		if err := wantString(t, "tenant"); err != nil {
			return err
		}
		info.Tenant = t.Str
	}
	if op != dialect.GetTask && v[tpHistoryLength].Exists() {
		return at(fail("is only for tasks/get and GetTask"), "historyLength")
	}
	if err := c.readHistoryLength(v[tpHistoryLength], info); err != nil {
		return err
	}
	if err := wantStruct(v[tpMetadata], "metadata"); err != nil {
		return err
	}
	w := c.w
	w.changed = w.changed || m.renamed
	w.open('{')
	w.tenant(v[tpTenant], to)
	w.key("id")
	w.raw(v[tpID].Raw)
	c.writeHistoryLength(v[tpHistoryLength], info, to, op == dialect.GetTask)
	if md := v[tpMetadata]; md.Exists() {
		// 0.x lets every task call carry metadata; 1.0 keeps it on cancel only.
		if to == dialect.V03 || op == dialect.CancelTask {
			w.key("metadata")
			w.raw(md.Raw)
		} else {
			w.changed = true
		}
	}
	w.closeObject(root, taskIDKeys[:], m.unknown)
	return nil
}

const (
	ppTaskID = iota
	ppID
	ppConfigID
	ppMetadata
	ppTenant
	ppPageSize
	ppPageToken
)

var pushParamsKeys = [...]keySpec{
	ppTaskID:    {"taskId", "task_id"},
	ppID:        {"id", ""},
	ppConfigID:  {"pushNotificationConfigId", ""},
	ppMetadata:  {"metadata", ""},
	ppTenant:    {"tenant", ""},
	ppPageSize:  {"pageSize", "page_size"},
	ppPageToken: {"pageToken", "page_token"},
}

// pushConfigParams writes get, list and delete push config params. The two
// dialects swap names here: 0.x "id" is the task and pushNotificationConfigId
// the config; 1.0 "taskId" is the task and "id" the config.
func (c *conv) pushConfigParams(op dialect.Op, root gjson.Result, to dialect.ID, info *RequestInfo) error {
	var m members
	if err := collect(root, pushParamsKeys[:], &m); err != nil {
		return err
	}
	v := &m.vals
	task, cfg := v[ppTaskID], v[ppID]
	taskName, cfgName := "taskId", "id"
	if c.from == dialect.V03 {
		if task.Exists() {
			return at(fail("is the 1.0 spelling: a 0.x call names the task in \"id\""), "taskId")
		}
		task, cfg = v[ppID], v[ppConfigID]
		taskName, cfgName = "id", "pushNotificationConfigId"
	} else if v[ppConfigID].Exists() {
		return at(fail("is the 0.x spelling: a 1.0 call names the config in \"id\""), "pushNotificationConfigId")
	}
	if err := requireString(task, taskName); err != nil {
		return err
	}
	info.TaskID = task.Str
	switch {
	case op == dialect.ListPushConfigs && cfg.Exists():
		return at(fail("names a config, but list takes only the task"), cfgName)
	case op == dialect.DeletePushConfig || (op == dialect.GetPushConfig && c.from == dialect.V10):
		if err := requireString(cfg, cfgName); err != nil {
			return err
		}
	case cfg.Exists():
		if err := requireString(cfg, cfgName); err != nil {
			return err
		}
	}
	info.PushConfigID = cfg.Str
	if t := v[ppTenant]; t.Exists() {
		if err := wantString(t, "tenant"); err != nil {
			return err
		}
		info.Tenant = t.Str
	}
	if op != dialect.ListPushConfigs && (v[ppPageSize].Exists() || v[ppPageToken].Exists()) {
		return fail("pageSize and pageToken are only for listing configs")
	}
	if c.from == dialect.V03 && (v[ppPageSize].Exists() || v[ppPageToken].Exists()) {
		// A 0.x list is one bare array, with no place for the next page's
		// token: a page would reach the caller as though it were every config.
		return fail("pageSize and pageToken are 1.0 members (ListTaskPushNotificationConfigs): a 0.x list returns every config of the task at once")
	}
	if err := wantStruct(v[ppMetadata], "metadata"); err != nil {
		return err
	}
	w := c.w
	// Members the target dialect has no place for are dropped, and a
	// dropped member means the input cannot pass through.
	dropped := v[ppMetadata].Exists()
	if to == dialect.V03 {
		dropped = v[ppTenant].Exists() || v[ppPageSize].Exists() || v[ppPageToken].Exists()
	}
	w.changed = w.changed || m.renamed || c.from != to || dropped
	w.open('{')
	if to == dialect.V10 {
		if t := v[ppTenant]; t.Exists() {
			w.key("tenant")
			w.raw(t.Raw)
		}
		w.key("taskId")
		w.raw(task.Raw)
		if cfg.Exists() {
			w.key("id")
			w.raw(cfg.Raw)
		}
		for _, i := range []int{ppPageSize, ppPageToken} {
			if x := v[i]; x.Exists() {
				w.key(pushParamsKeys[i].camel)
				w.raw(x.Raw)
			}
		}
	} else {
		w.key("id")
		w.raw(task.Raw)
		if cfg.Exists() {
			w.key("pushNotificationConfigId")
			w.raw(cfg.Raw)
		}
		if md := v[ppMetadata]; md.Exists() {
			w.key("metadata")
			w.raw(md.Raw)
		}
	}
	w.closeObject(root, pushParamsKeys[:], m.unknown)
	return nil
}
