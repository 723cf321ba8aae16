package rest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// The A2A 0.3 HTTP+JSON binding's bodies are the ProtoJSON of the 0.3 proto
// (a2a-v0.3.0.proto), which is neither 0.3 JSON-RPC nor 1.0: message parts
// under "content", parts {"text"} / {"file":{"fileWithUri"|"fileWithBytes",
// "mimeType"}} / {"data":{"data":{…}}}, TASK_STATE_CANCELLED, push configs
// as {"name":"tasks/{id}/pushNotificationConfigs/{cid}",
// "pushNotificationConfig":{…,"authentication":{"schemes":[…]}}}. The
// functions here translate it to the canonical 1.0 form and back. They work
// on decoded JSON: the 0.3 binding is rare enough that clarity wins over the
// byte-level speed of normalize. What the 0.3 proto has no field for (a
// part's filename and metadata, a message's referenceTaskIds) cannot reach a
// 0.3 caller; a file part's name, which 0.3's JSON FilePart has, is read
// from one.

type object = map[string]any

var errNotObject = errors.New("not a JSON object")

func decodeObject(b []byte) (object, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("trailing data after the JSON value")
	}
	o, ok := v.(object)
	if !ok {
		return nil, errNotObject
	}
	return o, nil
}

func encode(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// field returns o's member spelled either way ProtoJSON allows: the JSON
// (lowerCamel or json_name) name or the proto name.
func field(o object, names ...string) (any, bool) {
	for _, n := range names {
		if v, ok := o[n]; ok && v != nil {
			return v, true
		}
	}
	return nil, false
}

func objField(o object, names ...string) object {
	v, _ := field(o, names...)
	m, _ := v.(object)
	return m
}

func strField(o object, names ...string) string {
	v, _ := field(o, names...)
	s, _ := v.(string)
	return s
}

func listField(o object, names ...string) []any {
	v, _ := field(o, names...)
	l, _ := v.([]any)
	return l
}

// mapObjects is f of each element of l, one that is not an object read as
// nil.
func mapObjects(l []any, f func(object) object) []any {
	var out []any
	for _, v := range l {
		o, _ := v.(object)
		out = append(out, f(o))
	}
	return out
}

// copyFields copies the named members (proto name first, JSON name second)
// under their JSON names.
func copyFields(dst, src object, pairs ...[2]string) {
	for _, p := range pairs {
		if v, ok := field(src, p[1], p[0]); ok {
			dst[p[1]] = v
		}
	}
}

// --- 0.3 proto → canonical 1.0 (requests) ---

// reader reads the members of a 0.3 request strictly, keeping its first
// error: a member sent in both its spellings, or with a value of another
// type than its field's, is an error, where the lenient getters above
// (fit for the core's own results) would read one spelling or nothing and
// so drop what the caller sent unsaid.
type reader struct{ err error }

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf(format, args...)
	}
}

// field is the package's field, refusing a member given under two of its
// names: ProtoJSON's JSON and proto names, or a name the binding reads too.
func (r *reader) field(o object, names ...string) (any, bool) {
	var v any
	got := ""
	for _, n := range names {
		if x, ok := o[n]; ok && x != nil && n != got {
			if got != "" {
				r.fail("%q and %q are one field spelt two ways: send it once", got, n)
				return nil, false
			}
			v, got = x, n
		}
	}
	return v, got != ""
}

func (r *reader) obj(o object, names ...string) object {
	v, ok := r.field(o, names...)
	m, isObj := v.(object)
	if ok && !isObj {
		r.fail("%s must be an object, not %s", names[0], jsonType(v))
	}
	return m
}

func (r *reader) str(o object, names ...string) string {
	v, ok := r.field(o, names...)
	s, isStr := v.(string)
	if ok && !isStr {
		r.fail("%s must be a string, not %s", names[0], jsonType(v))
	}
	return s
}

func (r *reader) list(o object, names ...string) []any {
	v, ok := r.field(o, names...)
	l, isList := v.([]any)
	if ok && !isList {
		r.fail("%s must be an array, not %s", names[0], jsonType(v))
	}
	return l
}

// copyFields is the package's copyFields, through r.field.
func (r *reader) copyFields(dst, src object, pairs ...[2]string) {
	for _, p := range pairs {
		if v, ok := r.field(src, p[1], p[0]); ok {
			dst[p[1]] = v
		}
	}
}

// jsonType names the JSON type of a decoded value, for errors.
func jsonType(v any) string {
	switch v.(type) {
	case object:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "null"
}

// carryUnknown copies the members of src that known does not name into
// dst: what the 0.3 proto has no field for (a newer client's member, an
// SDK's own) reaches the core as it came, where the core carries or
// refuses it as it does a JSON-RPC caller's, rather than being lost here.
func carryUnknown(dst, src object, known ...string) {
	for k, v := range src {
		if _, taken := dst[k]; !taken && !slices.Contains(known, k) {
			dst[k] = v
		}
	}
}

// v03SendToCanonical translates a 0.3 SendMessageRequest.
func v03SendToCanonical(in object) (object, error) {
	var r reader
	out := object{}
	m := r.obj(in, "message", "request")
	if r.err != nil {
		return nil, r.err
	}
	if m == nil {
		return nil, errors.New("message is required")
	}
	msg, err := v03MessageToCanonical(m)
	if err != nil {
		return nil, err
	}
	out["message"] = msg
	if md, ok := r.field(in, "metadata"); ok {
		out["metadata"] = md
	}
	carryUnknown(out, in, "message", "request", "metadata", "configuration")
	if c := r.obj(in, "configuration"); c != nil {
		cfg := object{}
		r.copyFields(cfg, c, [2]string{"accepted_output_modes", "acceptedOutputModes"})
		if n, ok := r.field(c, "historyLength", "history_length"); ok && fmt.Sprint(n) != "0" {
			// 0.3's 0 is "no limit" (a2a-dialects.md §12 #2), 1.0's "none".
			cfg["historyLength"] = n
		}
		// blocking is a plain proto3 bool: absent is false, and ProtoJSON
		// writers omit false (@a2a-js/sdk 0.3's REST client sends a
		// non-blocking send as "configuration":{}), as the 0.3 gRPC front
		// end reads it too. Without a configuration the send blocks.
		b, ok := r.field(c, "blocking")
		if _, isBool := b.(bool); ok && !isBool {
			// Read as absent, it would decide the send's mode unasked.
			return nil, errors.New("configuration.blocking must be true or false")
		}
		if !ok || b == false {
			cfg["returnImmediately"] = true
		}
		if p := r.obj(c, "pushNotification", "push_notification"); p != nil {
			tp, err := v03PushToCanonical(p, "")
			if err != nil {
				return nil, fmt.Errorf("configuration.pushNotification: %w", err)
			}
			cfg["taskPushNotificationConfig"] = tp
		}
		carryUnknown(cfg, c, "accepted_output_modes", "acceptedOutputModes", "historyLength", "history_length",
			"blocking", "pushNotification", "push_notification")
		if len(cfg) > 0 {
			out["configuration"] = cfg
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	return out, nil
}

func v03MessageToCanonical(m object) (object, error) {
	var r reader
	out := object{}
	r.copyFields(out, m, [2]string{"message_id", "messageId"}, [2]string{"context_id", "contextId"},
		[2]string{"task_id", "taskId"}, [2]string{"role", "role"}, [2]string{"metadata", "metadata"},
		[2]string{"extensions", "extensions"})
	var parts []any
	for _, p := range r.list(m, "content", "parts") {
		po, ok := p.(object)
		if !ok {
			return nil, errors.New("a message part is not an object")
		}
		cp, err := v03PartToCanonical(po)
		if err != nil {
			return nil, err
		}
		parts = append(parts, cp)
	}
	if r.err != nil {
		return nil, r.err
	}
	if parts != nil {
		out["parts"] = parts
	}
	carryUnknown(out, m, "message_id", "messageId", "context_id", "contextId", "task_id", "taskId", "role",
		"metadata", "extensions", "content", "parts")
	return out, nil
}

func v03PartToCanonical(p object) (object, error) {
	out, err := v03PartContent(p)
	if err == nil {
		carryUnknown(out, p, "text", "file", "data")
	}
	return out, err
}

// v03PartContent is the 1.0 part of a 0.3 part's content.
func v03PartContent(p object) (object, error) {
	var r reader
	// Part.part and FilePart.file are oneofs: of two members, one would be
	// dropped (protojson refuses the part outright).
	var set []string
	for _, k := range []string{"data", "file", "text"} {
		if p[k] != nil {
			set = append(set, k)
		}
	}
	if len(set) > 1 {
		return nil, fmt.Errorf("a part holds one of text, file and data, not %s", strings.Join(set, " and "))
	}
	switch {
	case p["text"] != nil:
		return object{"text": p["text"]}, nil
	case p["file"] != nil:
		f, ok := p["file"].(object)
		if !ok {
			return nil, errors.New("a file part's file is not an object")
		}
		out := object{}
		_, hasURI := field(f, "fileWithUri", "file_with_uri")
		if _, hasBytes := field(f, "fileWithBytes", "file_with_bytes"); hasURI && hasBytes {
			return nil, errors.New("a file part's file holds one of fileWithUri and fileWithBytes, not both")
		}
		if u, ok := r.field(f, "fileWithUri", "file_with_uri"); ok {
			out["url"] = u
		} else if b, ok := r.field(f, "fileWithBytes", "file_with_bytes"); ok {
			out["raw"] = b
		} else if r.err == nil {
			return nil, errors.New("a file part has neither fileWithUri nor fileWithBytes")
		}
		if mt := r.str(f, "mimeType", "mime_type"); mt != "" {
			out["mediaType"] = mt
		}
		// The 0.3 proto's FilePart has no name, but 0.3's JSON FilePart
		// does, as 1.0's Part has filename: a client that sends it is read.
		if n, ok := r.field(f, "name"); ok {
			out["filename"] = n
		}
		for _, k := range slices.Sorted(maps.Keys(f)) {
			if !slices.Contains(v03FileMembers, k) {
				return nil, fmt.Errorf("a file part's member %q is none of %s", k, strings.Join(v03FileMembers, ", "))
			}
		}
		if r.err != nil {
			return nil, r.err
		}
		return out, nil
	case p["data"] != nil:
		d, ok := p["data"].(object)
		if !ok {
			return nil, errors.New("a data part's data is not an object")
		}
		// The DataPart message holds its Struct under data: any other
		// member (the JSON-RPC form's object sent bare) would be lost.
		for _, k := range slices.Sorted(maps.Keys(d)) {
			if k != "data" {
				return nil, fmt.Errorf("a data part's member %q is not data: send {\"data\":{\"data\":{…}}}", k)
			}
		}
		switch d["data"].(type) {
		case nil:
			// ProtoJSON leaves an empty Struct out.
			return object{"data": object{}}, nil
		case object:
			return object{"data": d["data"]}, nil
		}
		return nil, errors.New("a data part's data.data is not an object")
	}
	return nil, errors.New("a part has none of text, file, data")
}

// v03FileMembers are the members of a 0.3 file part's file the binding reads.
var v03FileMembers = []string{"fileWithUri", "file_with_uri", "fileWithBytes", "file_with_bytes", "mimeType", "mime_type", "name"}

// v03PushToCanonical translates a 0.3 PushNotificationConfig into the flat
// 1.0 TaskPushNotificationConfig (without its taskId unless given). What
// else it holds is carried, for the core to judge.
func v03PushToCanonical(p object, taskID string) (object, error) {
	var r reader
	out := object{}
	if taskID != "" {
		out["taskId"] = taskID
	}
	r.copyFields(out, p, [2]string{"id", "id"}, [2]string{"url", "url"}, [2]string{"token", "token"})
	if a := r.obj(p, "authentication"); a != nil {
		auth := object{}
		switch s := r.list(a, "schemes"); {
		case len(s) == 1:
			auth["scheme"] = s[0]
		case len(s) > 1:
			// 1.0's AuthenticationInfo, which the binding hands the core,
			// has one scheme: the others would be lost.
			return nil, fmt.Errorf("authentication.schemes lists %d schemes: send one", len(s))
		}
		r.copyFields(auth, a, [2]string{"credentials", "credentials"})
		carryUnknown(auth, a, "schemes", "credentials")
		out["authentication"] = auth
	}
	if r.err != nil {
		return nil, r.err
	}
	carryUnknown(out, p, "id", "url", "token", "authentication")
	return out, nil
}

// --- canonical 1.0 → 0.3 proto (results) ---

var v03States = map[string]string{"TASK_STATE_CANCELED": "TASK_STATE_CANCELLED"}

// v03Result translates a 1.0 result of method into the 0.3 proto's.
func v03Result(method string, in object) object {
	switch method {
	case "SendMessage", "SendStreamingMessage", "SubscribeToTask":
		return v03StreamResponse(in)
	case "GetTask", "CancelTask":
		return v03Task(in)
	case "CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig":
		return v03PushConfig(in)
	case "ListTaskPushNotificationConfigs":
		out := object{}
		configs := []any{}
		for _, c := range listField(in, "configs") {
			if co, ok := c.(object); ok {
				configs = append(configs, v03PushConfig(co))
			}
		}
		out["configs"] = configs
		if t := strField(in, "nextPageToken"); t != "" {
			out["nextPageToken"] = t
		}
		return out
	}
	return in
}

func v03StreamResponse(in object) object {
	switch {
	case in["task"] != nil:
		t, _ := in["task"].(object)
		return object{"task": v03Task(t)}
	case in["message"] != nil:
		m, _ := in["message"].(object)
		return object{"message": v03Message(m)}
	case in["statusUpdate"] != nil:
		u, _ := in["statusUpdate"].(object)
		out := object{}
		copyFields(out, u, [2]string{"taskId", "taskId"}, [2]string{"contextId", "contextId"}, [2]string{"metadata", "metadata"})
		st := v03Status(objField(u, "status"))
		out["status"] = st
		// A 0.x backend's flag the core passed on (normalize.WithFinalFlag);
		// 1.0 has none: the stream ends at a terminal or an interrupted
		// state (a2a-dialects.md §5.4).
		if final, ok := u["final"].(bool); ok {
			if final {
				out["final"] = true
			}
			return object{"statusUpdate": out}
		}
		switch st["state"] {
		case "TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELLED", "TASK_STATE_REJECTED",
			"TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED":
			out["final"] = true
		}
		return object{"statusUpdate": out}
	case in["artifactUpdate"] != nil:
		u, _ := in["artifactUpdate"].(object)
		out := object{}
		copyFields(out, u, [2]string{"taskId", "taskId"}, [2]string{"contextId", "contextId"}, [2]string{"metadata", "metadata"},
			[2]string{"append", "append"}, [2]string{"lastChunk", "lastChunk"})
		out["artifact"] = v03Artifact(objField(u, "artifact"))
		return object{"artifactUpdate": out}
	}
	return in
}

func v03Task(t object) object {
	out := object{}
	copyFields(out, t, [2]string{"id", "id"}, [2]string{"contextId", "contextId"}, [2]string{"metadata", "metadata"})
	out["status"] = v03Status(objField(t, "status"))
	if as := listField(t, "artifacts"); as != nil {
		out["artifacts"] = mapObjects(as, v03Artifact)
	}
	if hs := listField(t, "history"); hs != nil {
		out["history"] = mapObjects(hs, v03Message)
	}
	return out
}

func v03Status(s object) object {
	out := object{}
	if st := strField(s, "state"); st != "" {
		if v, ok := v03States[st]; ok {
			st = v
		}
		out["state"] = st
	}
	if m := objField(s, "message"); m != nil {
		out["message"] = v03Message(m)
	}
	copyFields(out, s, [2]string{"timestamp", "timestamp"})
	return out
}

func v03Message(m object) object {
	out := object{}
	copyFields(out, m, [2]string{"messageId", "messageId"}, [2]string{"contextId", "contextId"}, [2]string{"taskId", "taskId"},
		[2]string{"role", "role"}, [2]string{"metadata", "metadata"}, [2]string{"extensions", "extensions"})
	out["content"] = v03Parts(listField(m, "parts"))
	return out
}

func v03Artifact(a object) object {
	out := object{}
	copyFields(out, a, [2]string{"artifactId", "artifactId"}, [2]string{"name", "name"}, [2]string{"description", "description"},
		[2]string{"metadata", "metadata"}, [2]string{"extensions", "extensions"})
	out["parts"] = v03Parts(listField(a, "parts"))
	return out
}

func v03Parts(ps []any) []any {
	out := []any{}
	for _, p := range ps {
		po, _ := p.(object)
		switch {
		case po["text"] != nil:
			out = append(out, object{"text": po["text"]})
		case po["url"] != nil || po["raw"] != nil:
			f := object{}
			if po["url"] != nil {
				f["fileWithUri"] = po["url"]
			} else {
				f["fileWithBytes"] = po["raw"]
			}
			if mt := strField(po, "mediaType"); mt != "" {
				f["mimeType"] = mt
			}
			out = append(out, object{"file": f})
		case po["data"] != nil:
			d, ok := po["data"].(object)
			if !ok {
				// A 0.3 DataPart holds a Struct: wrap other values.
				d = object{"value": po["data"]}
			}
			out = append(out, object{"data": object{"data": d}})
		}
	}
	return out
}

// v03PushConfig translates a flat 1.0 TaskPushNotificationConfig into the
// 0.3 resource form.
func v03PushConfig(c object) object {
	taskID, id := strField(c, "taskId"), strField(c, "id")
	pc := object{}
	copyFields(pc, c, [2]string{"id", "id"}, [2]string{"url", "url"}, [2]string{"token", "token"})
	if a := objField(c, "authentication"); a != nil {
		auth := object{}
		if s := strField(a, "scheme"); s != "" {
			auth["schemes"] = []any{s}
		}
		copyFields(auth, a, [2]string{"credentials", "credentials"})
		pc["authentication"] = auth
	}
	return object{"name": "tasks/" + taskID + "/pushNotificationConfigs/" + id, "pushNotificationConfig": pc}
}

// v03CreatePushToCanonical reads a 0.3 create body: the
// TaskPushNotificationConfig (body: "config"), whose config id may also come
// as its name's last segment or the config_id query parameter. A name must
// name pathTask, the task of the path, which would otherwise override it.
func v03CreatePushToCanonical(in object, taskID, configID, pathTask string) (object, error) {
	var r reader
	p := r.obj(in, "pushNotificationConfig", "push_notification_config")
	name := r.str(in, "name")
	if r.err != nil {
		return nil, r.err
	}
	if p == nil {
		p = object{}
	}
	out, err := v03PushToCanonical(p, taskID)
	if err != nil {
		return nil, fmt.Errorf("pushNotificationConfig.%w", err)
	}
	if name != "" {
		task, rest, _ := strings.Cut(strings.TrimPrefix(name, "tasks/"), "/pushNotificationConfigs/")
		if !strings.HasPrefix(name, "tasks/") || task == "" || rest == "" || strings.Contains(rest, "/") {
			return nil, fmt.Errorf("name %q is not tasks/{id}/pushNotificationConfigs/{configId}", truncate(name, 64))
		}
		if pathTask != "" && task != pathTask {
			return nil, fmt.Errorf("name %q names task %q, not the path's %q: name the path's task, or leave name out", truncate(name, 64), truncate(task, 64), truncate(pathTask, 64))
		}
		if id, ok := out["id"].(string); ok && id != "" && id != rest {
			return nil, fmt.Errorf("name %q names config %q, not pushNotificationConfig.id %q: give the config id once, or the same in both", truncate(name, 64), truncate(rest, 64), truncate(id, 64))
		}
		if configID == "" {
			configID = rest
		}
	}
	if _, ok := out["id"]; !ok && configID != "" {
		out["id"] = configID
	}
	carryUnknown(out, in, "name", "pushNotificationConfig", "push_notification_config")
	return out, nil
}

// v03Name parses a 0.3 resource name segment pair: "tasks/{id}".
func v03Name(name string) (string, bool) {
	id, ok := strings.CutPrefix(name, "tasks/")
	return id, ok && id != "" && !strings.Contains(id, "/")
}
