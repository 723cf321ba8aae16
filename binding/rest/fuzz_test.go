package rest

import (
	"net/url"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// buildPath is parseRoute's inverse: the path of a route, with ':' escaped
// too so an id never reads as a custom verb.
func buildPath(r route) string {
	esc := func(s string) string { return strings.ReplaceAll(url.PathEscape(s), ":", "%3A") }
	var p string
	if r.tenant != "" {
		p = "/" + esc(r.tenant)
	}
	op := r.op
	for one, three := range v03Twins {
		if three == op {
			op, p = one, "/v1"
		}
	}
	switch op {
	case opSend:
		return p + "/message:send"
	case opStream:
		return p + "/message:stream"
	case opCard:
		return p + "/extendedAgentCard"
	case opListTasks:
		return p + "/tasks"
	case opGetTask:
		return p + "/tasks/" + esc(r.id)
	case opCancel:
		return p + "/tasks/" + esc(r.id) + ":cancel"
	case opSubscribe, opSubscribePost:
		return p + "/tasks/" + esc(r.id) + ":subscribe"
	case opCreatePush, opListPush:
		return p + "/tasks/" + esc(r.id) + "/pushNotificationConfigs"
	default:
		return p + "/tasks/" + esc(r.id) + "/pushNotificationConfigs/" + esc(r.configID)
	}
}

// FuzzParseRoute: any method, path and query either give a REST error or a
// route whose params are valid JSON carrying the path's ids, and whose
// path parses back to the same route.
func FuzzParseRoute(f *testing.F) {
	for _, s := range [][3]string{
		{"POST", "/message:send", ""},
		{"GET", "/acme/tasks/t-1", "historyLength=2"},
		{"GET", "/tasks", "status=TASK_STATE_WORKING&pageSize=3&statusTimestampAfter=2025-01-01T00:00:00Z&includeArtifacts=true"},
		{"POST", "/tasks/a%3Ab:cancel", ""},
		{"GET", "/t/tasks/x:subscribe", ""},
		{"DELETE", "/tasks/x/pushNotificationConfigs/c%20d", ""},
		{"GET", "/tasks/%2F", ""},
		{"GET", "/tasks/a:b", ""},
		{"PUT", "/tasks/tasks/tasks", "a=1&a=2"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, verb, path, query string) {
		r, err := parseRoute(verb, path)
		if err != nil {
			if err.httpStatus < 400 || len(err.body()) == 0 {
				t.Fatalf("error without a status: %+v", err)
			}
			return
		}
		params, perr := buildParams(r, []byte(`{"a":1}`), query)
		if perr == nil {
			p := gjson.ParseBytes(params)
			if !gjson.ValidBytes(params) || !p.IsObject() {
				t.Fatalf("params %q", params)
			}
			if r.op.idField != "" && p.Get(r.op.idField).Str != r.id {
				t.Fatalf("params %s lost the id %q", params, r.id)
			}
			if !gjson.ValidBytes(envelope(r.op.method, params)) {
				t.Fatal("envelope is not JSON")
			}
		}
		if r.tenant == "tasks" {
			return // "/tasks/tasks" is GetTask "tasks" as well as tenant "tasks" ListTasks: the proto's own ambiguity
		}
		back, err := parseRoute(verb, buildPath(r))
		back.colonID = r.colonID // how the id was spelt, which buildPath escapes
		if err != nil || back != r {
			t.Fatalf("%s %q: %+v, rebuilt %q: %+v, %v", verb, path, r, buildPath(r), back, err)
		}
	})
}

// FuzzV03Translation: any body either is refused with a REST error or
// becomes valid canonical JSON, and any result object becomes valid 0.3
// JSON, for every operation; nothing panics.
func FuzzV03Translation(f *testing.F) {
	f.Add(`{"message":{"messageId":"m","role":"ROLE_USER","content":[{"text":"a"},{"file":{"fileWithUri":"u"}},{"data":{"data":{}}}]},"configuration":{"blocking":false,"pushNotification":{"authentication":{"schemes":[1]}}}}`)
	f.Add(`{"task":{"status":{"state":"TASK_STATE_CANCELED","message":{"parts":[{"data":3},{"raw":1}]}},"history":[null,1]}}`)
	f.Add(`{"statusUpdate":{"status":"x"},"configs":[1,{"taskId":2}]}`)
	methods := []string{"SendMessage", "SendStreamingMessage", "SubscribeToTask", "GetTask", "CancelTask",
		"CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig", "ListTaskPushNotificationConfigs"}
	f.Fuzz(func(t *testing.T, body string) {
		for _, m := range methods {
			if out, err := v03Request(m, []byte(body), ""); err == nil && !gjson.ValidBytes(out) {
				t.Fatalf("%s: %q", m, out)
			}
			if in, err := decodeObject([]byte(body)); err == nil {
				if out := encode(v03Result(m, in)); !gjson.ValidBytes(out) {
					t.Fatalf("%s result: %q", m, out)
				}
			}
		}
	})
}
