package proxy

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/dialect"
	sseframe "github.com/a2agate/gateway/internal/sse"
)

const (
	msg03 = `{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":"hi"}]}`
	msg10 = `{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}`
)

func rpc(method, params string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":` + params + `}`
}

// hostileRequests are malformed or adversarial requests, each with the
// JSON-RPC code and the dialect its error must come in.
var hostileRequests = []struct {
	name string
	body string
	d    dialect.ID
	code int
	hdr  []string
}{
	{"empty body", ``, dialect.V03, -32700, nil},
	{"truncated JSON", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":`, dialect.V03, -32700, nil},
	{"truncated 1.0", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","par`, dialect.V10, -32700, nil},
	{"not JSON", `hello`, dialect.V03, -32700, nil},
	{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tasks/get\",\"params\":{\"id\":\"\xff\xfe\"}}", dialect.V03, -32700, nil},
	{"deep nesting", `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"t","metadata":` + strings.Repeat(`{"a":`, 200) + `1` + strings.Repeat(`}`, 200) + `}}`, dialect.V03, -32700, nil},
	{"deep array nesting", strings.Repeat("[", 100000), dialect.V03, -32700, nil},
	{"batch", `[` + rpc("tasks/get", `{"id":"t"}`) + `]`, dialect.V03, -32600, nil},
	{"string body", `"message/send"`, dialect.V03, -32600, nil},
	{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":1,"method":"tasks/get","params":{"id":"t"}}`, dialect.V03, -32600, nil},
	{"jsonrpc missing", `{"id":1,"method":"GetTask","params":{"id":"t"}}`, dialect.V10, -32600, nil},
	{"jsonrpc number", `{"jsonrpc":2.0,"id":1,"method":"GetTask","params":{"id":"t"}}`, dialect.V10, -32600, nil},
	{"notification", `{"jsonrpc":"2.0","method":"tasks/get","params":{"id":"t"}}`, dialect.V03, -32600, nil},
	{"id object", `{"jsonrpc":"2.0","id":{"a":1},"method":"tasks/get","params":{"id":"t"}}`, dialect.V03, -32600, nil},
	{"id array", `{"jsonrpc":"2.0","id":[1],"method":"GetTask","params":{"id":"t"}}`, dialect.V10, -32600, nil},
	{"id bool", `{"jsonrpc":"2.0","id":true,"method":"tasks/get","params":{"id":"t"}}`, dialect.V03, -32600, nil},
	{"huge id", `{"jsonrpc":"2.0","id":"` + strings.Repeat("x", 10000) + `","method":"tasks/get","params":{"id":"t"}}`, dialect.V03, -32600, nil},
	{"method number", `{"jsonrpc":"2.0","id":1,"method":5,"params":{}}`, dialect.V03, -32600, nil},
	{"method missing", `{"jsonrpc":"2.0","id":1,"params":{}}`, dialect.V03, -32600, nil},
	{"unknown envelope member", `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"t"},"extra":1}`, dialect.V03, -32600, nil},
	{"duplicate method", `{"jsonrpc":"2.0","id":1,"method":"tasks/get","method":"tasks/cancel","params":{"id":"t"}}`, dialect.V03, -32600, nil},
	{"case-colliding method", `{"jsonrpc":"2.0","id":1,"method":"tasks/get","Method":"tasks/cancel","params":{"id":"t"}}`, dialect.V03, -32600, nil},
	{"duplicate id", `{"jsonrpc":"2.0","id":1,"id":2,"method":"GetTask","params":{"id":"t"}}`, dialect.V10, -32600, nil},
	{"unknown method", rpc("tasks/explode", `{}`), dialect.V03, -32601, nil},
	{"notification of an unknown method", `{"jsonrpc":"2.0","method":"message/ssend","params":{}}`, dialect.V03, -32601, nil},
	{"notification of an unknown 1.0 method", `{"jsonrpc":"2.0","method":"SendMesage","params":{}}`, dialect.V10, -32601, nil},
	{"unknown PascalCase method", rpc("ExplodeTask", `{}`), dialect.V10, -32601, nil},
	{"retired 0.1 method", rpc("tasks/send", `{}`), dialect.V03, -32601, nil},
	{"0.x has no list", rpc("tasks/list", `{}`), dialect.V03, -32601, nil},
	{"params array", rpc("tasks/get", `["t"]`), dialect.V03, -32602, nil},
	{"params string", rpc("GetTask", `"t"`), dialect.V10, -32602, nil},
	{"params missing", `{"jsonrpc":"2.0","id":1,"method":"message/send"}`, dialect.V03, -32602, nil},
	{"send without message", rpc("message/send", `{}`), dialect.V03, -32602, nil},
	{"send 1.0 without message", rpc("SendMessage", `{"configuration":{}}`), dialect.V10, -32602, nil},
	{"message not object", rpc("message/send", `{"message":"hi"}`), dialect.V03, -32602, nil},
	{"no messageId", rpc("message/send", `{"message":{"kind":"message","role":"user","parts":[{"kind":"text","text":"hi"}]}}`), dialect.V03, -32602, nil},
	{"messageId number", rpc("SendMessage", `{"message":{"messageId":5,"role":"ROLE_USER","parts":[{"text":"hi"}]}}`), dialect.V10, -32602, nil},
	{"empty parts", rpc("message/send", `{"message":{"kind":"message","messageId":"m","role":"user","parts":[]}}`), dialect.V03, -32602, nil},
	{"parts missing", rpc("SendMessage", `{"message":{"messageId":"m","role":"ROLE_USER"}}`), dialect.V10, -32602, nil},
	{"agent role from a client", rpc("message/send", `{"message":{"kind":"message","messageId":"m","role":"agent","parts":[{"kind":"text","text":"hi"}]}}`), dialect.V03, -32602, nil},
	{"1.0 agent role from a client", rpc("SendMessage", `{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"hi"}]}}`), dialect.V10, -32602, nil},
	{"unknown role", rpc("SendMessage", `{"message":{"messageId":"m","role":"ROLE_ROBOT","parts":[{"text":"hi"}]}}`), dialect.V10, -32602, nil},
	{"role missing", rpc("message/send", `{"message":{"kind":"message","messageId":"m","parts":[{"kind":"text","text":"hi"}]}}`), dialect.V03, -32602, nil},
	{"part without content", rpc("message/send", `{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"text"}]}}`), dialect.V03, -32602, nil},
	{"1.0 part without content", rpc("SendMessage", `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"mediaType":"text/plain"}]}}`), dialect.V10, -32602, nil},
	{"part with two contents", rpc("SendMessage", `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"a","url":"https://x"}]}}`), dialect.V10, -32602, nil},
	{"unknown part kind", rpc("message/send", `{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"image","text":"a"}]}}`), dialect.V03, -32602, nil},
	{"kind contradicts content", rpc("message/send", `{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"data","text":"a"}]}}`), dialect.V03, -32602, nil},
	{"file with bytes and uri", rpc("message/send", `{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"file","file":{"bytes":"YQ==","uri":"https://x"}}]}}`), dialect.V03, -32602, nil},
	{"file with neither", rpc("message/send", `{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"file","file":{"mimeType":"a/b"}}]}}`), dialect.V03, -32602, nil},
	{"text not string", rpc("SendMessage", `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":5}]}}`), dialect.V10, -32602, nil},
	{"duplicate messageId", rpc("SendMessage", `{"message":{"messageId":"a","messageId":"b","role":"ROLE_USER","parts":[{"text":"hi"}]}}`), dialect.V10, -32602, nil},
	{"case-colliding taskId", rpc("SendMessage", `{"message":{"messageId":"a","role":"ROLE_USER","taskId":"mine","TaskId":"theirs","parts":[{"text":"hi"}]}}`), dialect.V10, -32602, nil},
	{"a referenced task id too long", rpc("SendMessage", `{"message":{"messageId":"a","role":"ROLE_USER","referenceTaskIds":["`+strings.Repeat("r", 1025)+`"],"parts":[{"text":"hi"}]}}`), dialect.V10, -32602, nil},
	{"more referenced tasks than checked", rpc("SendMessage", `{"message":{"messageId":"a","role":"ROLE_USER","referenceTaskIds":["r`+strings.Repeat(`","r`, 64)+`"],"parts":[{"text":"hi"}]}}`), dialect.V10, -32602, nil},
	{"an inline push config for another task", rpc("SendMessage", `{"message":`+msg10+`,"configuration":{"taskPushNotificationConfig":{"taskId":"theirs","url":"https://hooks.example/a2a"}}}`), dialect.V10, -32602, nil},
	{"case-colliding params key", rpc("message/send", `{"message":`+msg03+`,"Message":`+msg03+`}`), dialect.V03, -32602, nil},
	{"blocking not bool", rpc("message/send", `{"message":`+msg03+`,"configuration":{"blocking":"yes"}}`), dialect.V03, -32602, nil},
	{"blocking and returnImmediately", rpc("SendMessage", `{"message":`+msg10+`,"configuration":{"blocking":true,"returnImmediately":true}}`), dialect.V10, -32602, nil},
	{"negative historyLength", rpc("tasks/get", `{"id":"t","historyLength":-1}`), dialect.V03, -32602, nil},
	{"fractional historyLength", rpc("GetTask", `{"id":"t","historyLength":1.5}`), dialect.V10, -32602, nil},
	{"historyLength string word", rpc("GetTask", `{"id":"t","historyLength":"ten"}`), dialect.V10, -32602, nil},
	{"acceptedOutputModes not array", rpc("message/send", `{"message":`+msg03+`,"configuration":{"acceptedOutputModes":"text/plain"}}`), dialect.V03, -32602, nil},
	{"get without id", rpc("tasks/get", `{}`), dialect.V03, -32602, nil},
	{"get id number", rpc("GetTask", `{"id":5}`), dialect.V10, -32602, nil},
	{"cancel empty id", rpc("CancelTask", `{"id":""}`), dialect.V10, -32602, nil},
	{"resubscribe without id", rpc("tasks/resubscribe", `{}`), dialect.V03, -32602, nil},
	{"subscribe without id", rpc("SubscribeToTask", `{}`), dialect.V10, -32602, nil},
	{"push set without url", rpc("tasks/pushNotificationConfig/set", `{"taskId":"t","pushNotificationConfig":{}}`), dialect.V03, -32602, nil},
	{"push create without taskId", rpc("CreateTaskPushNotificationConfig", `{"url":"https://x"}`), dialect.V10, -32602, nil},
	{"push get 0.x with 1.0 names", rpc("tasks/pushNotificationConfig/get", `{"taskId":"t","id":"c"}`), dialect.V03, -32602, nil},
	{"push get 1.0 without config id", rpc("GetTaskPushNotificationConfig", `{"taskId":"t"}`), dialect.V10, -32602, nil},
	{"push delete 0.x without config id", rpc("tasks/pushNotificationConfig/delete", `{"id":"t"}`), dialect.V03, -32602, nil},
	{"push list without task", rpc("ListTaskPushNotificationConfigs", `{}`), dialect.V10, -32602, nil},
	{"push auth empty schemes", rpc("tasks/pushNotificationConfig/set", `{"taskId":"t","pushNotificationConfig":{"url":"https://x","authentication":{"schemes":[]}}}`), dialect.V03, -32602, nil},
	{"list tasks page size 0", rpc("ListTasks", `{"pageSize":0}`), dialect.V10, -32602, nil},
	{"list tasks page size 101", rpc("ListTasks", `{"pageSize":101}`), dialect.V10, -32602, nil},
	{"list tasks unknown status", rpc("ListTasks", `{"status":"TASK_STATE_DANCING"}`), dialect.V10, -32602, nil},
	{"list tasks bad timestamp", rpc("ListTasks", `{"statusTimestampAfter":"yesterday"}`), dialect.V10, -32602, nil},
	{"unsupported version header", rpc("GetTask", `{"id":"t"}`), dialect.V10, -32009, []string{"A2A-Version", "2.0"}},
	{"unsupported version header 0.x", rpc("tasks/get", `{"id":"t"}`), dialect.V03, -32009, []string{"A2A-Version", "0.1"}},
	{"CR LF in id stays inside JSON", `{"jsonrpc":"2.0","id":"a\r\nX-Evil: 1","method":"tasks/get","params":{"id":"t"}}`, dialect.V03, -32001, nil},
	{"huge method name", rpc(strings.Repeat("Get", 30000), `{}`), dialect.V10, -32601, nil},
	{"huge slash method name", rpc(strings.Repeat("tasks/", 15000), `{}`), dialect.V03, -32601, nil},
	{"method with NUL", `{"jsonrpc":"2.0","id":1,"method":"tasks/get\u0000","params":{"id":"t"}}`, dialect.V03, -32601, nil},
	{"method with trailing space", rpc("GetTask ", `{"id":"t"}`), dialect.V10, -32601, nil},
	{"id null", `{"jsonrpc":"2.0","id":null,"method":"tasks/get","params":{"id":"t"}}`, dialect.V03, -32600, nil},
	{"id huge exponent", `{"jsonrpc":"2.0","id":1e400,"method":"tasks/get","params":{"id":"t"}}`, dialect.V03, -32001, nil},
	{"id negative zero", `{"jsonrpc":"2.0","id":-0,"method":"GetTask","params":{"id":"t"}}`, dialect.V10, -32001, nil},
	{"id string with NUL", `{"jsonrpc":"2.0","id":"a\u0000b","method":"GetTask","params":{"id":"t"}}`, dialect.V10, -32001, nil},
	{"id of 256 bytes", `{"jsonrpc":"2.0","id":"` + strings.Repeat("i", 254) + `","method":"GetTask","params":{"id":"t"}}`, dialect.V10, -32001, nil},
	{"params nested 99 deep", rpc("GetTask", `{"id":"t","metadata":`+strings.Repeat(`{"a":`, 97)+`1`+strings.Repeat(`}`, 97)+`}`), dialect.V10, -32001, nil},
	{"contextId of 2 KiB", rpc("SendMessage", `{"message":{"messageId":"m","role":"ROLE_USER","contextId":"`+strings.Repeat("c", 2048)+`","parts":[{"text":"hi"}]}}`), dialect.V10, -32602, nil},
	{"taskId of 2 KiB", rpc("message/send", `{"message":{"kind":"message","messageId":"m","role":"user","taskId":"`+strings.Repeat("t", 2048)+`","parts":[{"kind":"text","text":"hi"}]}}`), dialect.V03, -32602, nil},
	{"raw control character in a string", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tasks/get\",\"params\":{\"id\":\"a\r\nX-Evil: 1\"}}", dialect.V03, -32700, nil},
}

func TestHostileRequests(t *testing.T) {
	if len(hostileRequests) < 50 {
		t.Fatalf("the table must keep at least 50 cases, has %d", len(hostileRequests))
	}
	g := newGateway(t, backends[0].handler(t, nil), dialect.Version025)
	for _, tc := range hostileRequests {
		t.Run(tc.name, func(t *testing.T) {
			status, h, b := g.post(tc.body, tc.hdr...)
			ct := h.Get("Content-Type")
			if _, op, ok := dialect.Lookup(gjson.Get(tc.body, "method").Str); ok && op.Streaming() && ct == "text/event-stream" {
				// Stream requests get their errors as an event.
				ev, err := sseframe.NewReader(bytes.NewReader(b), 1<<20).Next()
				if err != nil {
					t.Fatalf("reading the error event: %v", err)
				}
				b, ct = ev.Data, "application/json"
			}
			if status != http.StatusOK || ct != "application/json" {
				t.Fatalf("HTTP %d %q: %s", status, ct, b)
			}
			if len(b) > 2048 {
				t.Fatalf("an answer of %d bytes amplifies the request: %.200s", len(b), b)
			}
			r := gjson.ParseBytes(b)
			e := wantError(t, r, tc.d, tc.code)
			if len(e.Get("message").Str) < 10 {
				t.Fatalf("message too terse to act on: %s", e.Raw)
			}
			if tc.code == -32700 && r.Get("id").Type != gjson.Null {
				t.Fatalf("a body that does not parse has no id to echo: %s", b)
			}
			if id := gjson.Get(tc.body, "id"); tc.code != -32700 && !strings.Contains(tc.name, "duplicate id") && (id.Type == gjson.Number || id.Type == gjson.String) && len(id.Raw) < 256 && r.Get("id").Raw != id.Raw {
				t.Fatalf("id %s not echoed: %s", id.Raw, b)
			}
		})
	}
	// Still serving.
	r := g.call("1", "message/send", `{"message":`+msg03+`}`)
	mustResult(t, r)
}

func TestRequestIDEchoedExactly(t *testing.T) {
	g := newGateway(t, backends[0].handler(t, nil), dialect.Version025)
	for _, id := range []string{`1`, `"abc"`, `1e3`, `123456789012345678901234567890`, `-0.5`, `"\u00e9\n"`, `0`} {
		r := g.call(id, "tasks/get", `{"id":"nope"}`)
		if r.Get("id").Raw != id {
			t.Fatalf("id %s echoed as %s", id, r.Get("id").Raw)
		}
	}
}

func TestBodyLimit(t *testing.T) {
	g := newGateway(t, backends[0].handler(t, nil), dialect.Version025, func(a *AgentConfig) { a.MaxBodyBytes = 1 << 20 })
	big := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"` + strings.Repeat("x", 10<<20) + `"}]}}}`
	// Declared length: refused before the body is read.
	status, _, b := g.post(big)
	if status != http.StatusOK {
		t.Fatalf("HTTP %d", status)
	}
	e := wantErrorSaying(t, gjson.ParseBytes(b), dialect.V10, -32600, "larger than")
	if !e.Get("data.0.reason").Exists() {
		t.Fatalf("want the 1.0 refusal of a body too large, with its reason: %s", e.Raw)
	}
	// A 0.x method, declared too large, gets the 0.x shape.
	status, _, b = g.post(strings.Replace(big, "SendMessage", "message/send", 1))
	if e := wantError(t, gjson.ParseBytes(b), dialect.V03, -32600); status != http.StatusOK || e.Get("data").Exists() {
		t.Fatalf("HTTP %d: want the 0.x refusal: %s", status, e.Raw)
	}
	// Chunked, no declared length: cut off at the limit.
	req, _ := http.NewRequest(http.MethodPost, g.url, io.MultiReader(bytes.NewReader([]byte(big))))
	req.ContentLength = -1
	_, b = roundTrip(t, req)
	if e := wantError(t, gjson.ParseBytes(b), dialect.V10, -32600); !e.Get("data.0.reason").Exists() {
		t.Fatalf("want the 1.0 refusal: %s", e.Raw)
	}
	mustResult(t, g.call("2", "message/send", `{"message":`+msg03+`}`))
}

func TestVersionHeaderDoesNotDecide(t *testing.T) {
	g := newGateway(t, backends[0].handler(t, nil), dialect.Version025)
	// A 1.0 method without the header is served as 1.0.
	status, _, b := g.post(rpc("SendMessage", `{"message":`+msg10+`}`))
	if status != 200 || !gjson.GetBytes(b, "result.task").Exists() {
		t.Fatalf("HTTP %d: %s", status, b)
	}
	// A 0.x method with "A2A-Version: 1.0" is still 0.x.
	_, _, b = g.post(rpc("message/send", `{"message":`+msg03+`}`), "A2A-Version", "1.0")
	if gjson.GetBytes(b, "result.kind").Str != "task" {
		t.Fatalf("0.x answer expected: %s", b)
	}
}

// hostileContentTypes are JSON-RPC bodies sent as something else than
// JSON, as a web page can send them cross-site without a preflight: each
// gets HTTP 415 and a JSON-RPC error in the dialect of the body's method.
// The accepted spellings are what the SDK clients send and what RFC 9110
// allows of them (parameters, any case).
var hostileContentTypes = []struct {
	contentType string // "-" sends none
	accepted    bool
}{
	{"-", false},
	{"", false},
	{"text/plain", false},
	{"text/plain;charset=UTF-8", false},
	{"application/x-www-form-urlencoded", false},
	{"multipart/form-data; boundary=x", false},
	{"application/jsonx", false},
	{"application/json-patch+json", false},
	{"json", false},
	{"application/json; charset", false},
	{"application/json", true},
	{"application/json; charset=utf-8", true},
	{"Application/JSON", true},
	{"application/a2a+json", true},
	{"application/a2a+json; charset=UTF-8", true},
	{`application/json; charset="utf-8"`, true},
	// JSON is UTF-8 (RFC 8259 §8.1): a body said to be in another charset
	// is refused naming it, not read as UTF-8 and refused as "not valid
	// UTF-8", or worse, read.
	{"application/json; charset=latin1", false},
	{"application/json; charset=utf-16", false},
}

func TestHostileContentTypes(t *testing.T) {
	g := newGateway(t, backends[0].handler(t, nil), dialect.Version025)
	g.agent.cfg.Tasks.AllowUnknown = false
	for _, tc := range hostileContentTypes {
		for _, c := range callers {
			t.Run(c.d.String()+"/"+tc.contentType, func(t *testing.T) {
				req, err := http.NewRequest(http.MethodPost, g.url, strings.NewReader(rpc(c.method(dialect.GetTask), `{"id":"no-such-task"}`)))
				if err != nil {
					t.Fatal(err)
				}
				if tc.contentType != "-" {
					req.Header["Content-Type"] = []string{tc.contentType}
				}
				if c.d == dialect.V10 {
					req.Header.Set("A2A-Version", "1.0")
				}
				res, b := roundTrip(t, req)
				if res.Header.Get("Content-Type") != "application/json" {
					t.Fatalf("HTTP %d %q: %s", res.StatusCode, res.Header.Get("Content-Type"), b)
				}
				r := gjson.ParseBytes(b)
				if tc.accepted {
					// Read and answered: the task is not the caller's.
					if res.StatusCode != http.StatusOK {
						t.Fatalf("HTTP %d: %s", res.StatusCode, b)
					}
					wantError(t, r, c.d, -32001)
					return
				}
				if res.StatusCode != http.StatusUnsupportedMediaType {
					t.Fatalf("HTTP %d, want 415: %s", res.StatusCode, b)
				}
				wantErrorSaying(t, r, c.d, -32600, "application/json")
			})
		}
	}
}

// TestVersionQueryParameter: the A2A-Version query parameter stands for
// the header, as the spec allows, for JSON-RPC calls and the card.
func TestVersionQueryParameter(t *testing.T) {
	g := newGateway(t, backends[1].handler(t, nil), dialect.Version10, func(a *AgentConfig) { a.Tasks.AllowUnknown = false })
	post := func(query, body string) gjson.Result {
		res, err := http.Post(g.url+query, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return gjson.ParseBytes(b)
	}
	wantErrorSaying(t, post("?A2A-Version=2.0", rpc("GetTask", `{"id":"t"}`)), dialect.V10, -32009, `"2.0"`)
	wantError(t, post("?A2A-Version=1.0", rpc("GetTask", `{"id":"t"}`)), dialect.V10, -32001)
	// The header, when sent, is what counts.
	status, _, b := g.post(rpc("GetTask", `{"id":"t"}`), "A2A-Version", "1.0")
	if wantError(t, gjson.ParseBytes(b), dialect.V10, -32001); status != http.StatusOK {
		t.Fatalf("HTTP %d", status)
	}
	// Two versions, in two headers or in the header and the query (its key
	// percent-encoded or not), are refused rather than one of them dropped.
	for _, c := range []struct {
		query  string
		header []string
	}{
		{"", []string{"1.0", "0.3"}},
		{"?A2A-Version=0.3", []string{"1.0"}},
		{"?A2A%2DVersion=0.3", []string{"1.0"}},
		{"?A2A-Version=1.0&A2A%2dVersion=0.3", nil},
	} {
		req, _ := http.NewRequest(http.MethodPost, g.url+c.query, strings.NewReader(rpc("GetTask", `{"id":"t"}`)))
		req.Header.Set("Content-Type", "application/json")
		req.Header["A2A-Version"] = c.header
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		wantErrorSaying(t, gjson.ParseBytes(b), dialect.V10, -32600, "A2A-Version is given twice")
	}
	// An unreadable body asking 1.0 in the query is answered in 1.0.
	if e := wantError(t, post("?A2A-Version=1.0", `{"jsonrpc":`), dialect.V10, -32700); !e.Get("data.0.reason").Exists() {
		t.Fatalf("want the 1.0 shape: %s", e.Raw)
	}
	if card := gjson.ParseBytes(g.get("/.well-known/agent-card.json?A2A-Version=1.0")); !card.Get("supportedInterfaces").Exists() || card.Get("url").Exists() {
		t.Fatalf("want the 1.0 card: %s", card.Raw)
	}
	if card := gjson.ParseBytes(g.get("/.well-known/agent-card.json?A2A-Version=0.3")); !card.Get("url").Exists() || card.Get("supportedInterfaces").Exists() {
		t.Fatalf("want the 0.3 card: %s", card.Raw)
	}
}

// TestContentEncoding: a body sent compressed (or said to be) is refused
// naming the coding, 415 in the caller's binding, rather than read as
// bytes that are "not valid UTF-8" or, with a plain body, served; and the
// headers that describe the caller's body never reach the backend with the
// body the gateway wrote in its place.
func TestContentEncoding(t *testing.T) {
	var mu sync.Mutex
	var seen http.Header
	back := scripted(func(w http.ResponseWriter, r *http.Request, id string) {
		mu.Lock()
		seen = r.Header.Clone()
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"result":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"}}}`)
	})
	g := newGateway(t, back, dialect.Version10, func(a *AgentConfig) { a.Tasks.AllowUnknown = true })
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = io.WriteString(zw, rpc("GetTask", `{"id":"t"}`))
	_ = zw.Close()
	send := func(path, coding string, body []byte) (*http.Response, gjson.Result) {
		req, _ := http.NewRequest(http.MethodPost, strings.TrimSuffix(g.url, "/")+path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Content-Encoding", coding)
		req.Header.Set("Content-Digest", "sha-256=:AAAA:")
		res, b := roundTrip(t, req)
		return res, gjson.ParseBytes(b)
	}
	for _, tc := range []struct {
		name, coding string
		body         []byte
	}{
		{"gzip body", "gzip", gz.Bytes()},
		{"plain body said to be br", "br", []byte(rpc("GetTask", `{"id":"t"}`))},
	} {
		res, r := send("/", tc.coding, tc.body)
		if res.StatusCode != http.StatusUnsupportedMediaType {
			t.Errorf("JSON-RPC %s: HTTP %d %s", tc.name, res.StatusCode, r.Raw)
		}
		wantErrorSaying(t, r, dialect.V03, -32600, "Content-Encoding")
		res, r = send("/message:send", tc.coding, tc.body)
		if res.StatusCode != http.StatusUnsupportedMediaType || !strings.Contains(r.Get("error.message").Str, "Content-Encoding") {
			t.Errorf("REST %s: HTTP %d %s", tc.name, res.StatusCode, r.Raw)
		}
	}
	res, r := send("/", "identity", []byte(rpc("GetTask", `{"id":"t"}`)))
	if res.StatusCode != http.StatusOK {
		t.Fatalf("identity: HTTP %d %s", res.StatusCode, r.Raw)
	}
	mustResult(t, r)
	mu.Lock()
	defer mu.Unlock()
	for _, k := range []string{"Content-Encoding", "Content-Digest"} {
		if v := seen.Values(k); len(v) > 0 {
			t.Errorf("the backend got the caller's %s %q with the gateway's body", k, v)
		}
	}
}
