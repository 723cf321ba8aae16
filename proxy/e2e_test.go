package proxy

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/jsontest"
	"github.com/a2agate/gateway/internal/testnet"
)

// caller speaks one dialect in the end-to-end tests.
type caller struct {
	d dialect.ID
}

var callers = []caller{{dialect.V03}, {dialect.V10}}

func (c caller) method(op dialect.Op) string {
	m, _ := dialect.MethodName(c.d, op)
	return m
}

// send builds send params for a user message with the given parts (in this
// caller's spelling) and configuration members.
func (c caller) send(id, parts, config string) string {
	s := `{"message":{"messageId":"` + id + `","role":"ROLE_USER","parts":[` + parts + `]}`
	if c.d == dialect.V03 {
		s = `{"message":{"kind":"message","messageId":"` + id + `","role":"user","parts":[` + parts + `]}`
	}
	if config != "" {
		s += `,"configuration":{` + config + `}`
	}
	return s + `}`
}

// nonBlocking is the send configuration member that asks for an answer
// before the task is done.
func (c caller) nonBlocking() string {
	if c.d == dialect.V03 {
		return `"blocking":false`
	}
	return `"returnImmediately":true`
}

func (c caller) text(s string) string {
	if c.d == dialect.V03 {
		return `{"kind":"text","text":"` + s + `"}`
	}
	return `{"text":"` + s + `"}`
}

func (c caller) continuation(id, taskID, text string) string {
	if c.d == dialect.V03 {
		return `{"message":{"kind":"message","messageId":"` + id + `","role":"user","taskId":"` + taskID + `","parts":[` + c.text(text) + `]}}`
	}
	return `{"message":{"messageId":"` + id + `","role":"ROLE_USER","taskId":"` + taskID + `","parts":[` + c.text(text) + `]}}`
}

// task returns the task of a send result, checking its shape.
func (c caller) task(t *testing.T, result gjson.Result) gjson.Result {
	t.Helper()
	if c.d == dialect.V03 {
		if result.Get("kind").Str != "task" {
			t.Fatalf("0.x send result is not a task: %s", result.Raw)
		}
		return result
	}
	if !result.Get("task").Exists() {
		t.Fatalf("1.0 send result is not {\"task\":…}: %s", result.Raw)
	}
	return result.Get("task")
}

func (c caller) state(s string) string {
	if c.d == dialect.V03 {
		return s
	}
	return "TASK_STATE_" + strings.ToUpper(strings.ReplaceAll(s, "-", "_"))
}

// forEachPair runs f for every caller dialect against every backend dialect.
func forEachPair(t *testing.T, f func(t *testing.T, c caller, g *testGateway)) {
	forEachPairOf(t, backends, f)
}

// forEachPairOf runs f for every caller dialect against each of kinds, in
// parallel, each with a gateway of its own.
func forEachPairOf(t *testing.T, kinds []backendKind, f func(t *testing.T, c caller, g *testGateway)) {
	forEachCallerOf(t, kinds, func(t *testing.T, c caller, b backendKind) {
		f(t, c, newGateway(t, b.handler(t, nil), b.version))
	})
}

// forEachCallerOf runs f for every caller dialect against each of kinds, in
// parallel, leaving the gateway to f.
func forEachCallerOf(t *testing.T, kinds []backendKind, f func(t *testing.T, c caller, b backendKind)) {
	for _, b := range kinds {
		for _, c := range callers {
			t.Run(c.d.String()+"-to-"+b.name, func(t *testing.T) {
				t.Parallel()
				f(t, c, b)
			})
		}
	}
}

func TestSendBlockingCompletesWithArtifact(t *testing.T) {
	forEachPair(t, func(t *testing.T, c caller, g *testGateway) {
		r := g.call(`"s1"`, c.method(dialect.SendMessage), c.send("m1", c.text("hello world"), ""))
		task := c.task(t, mustResult(t, r))
		noForeignKeys(t, c.d, r.Raw)
		if got := task.Get("status.state").Str; got != c.state("completed") {
			t.Fatalf("state %q, want %q: %s", got, c.state("completed"), task.Raw)
		}
		if got := task.Get("artifacts.0.parts.0.text").Str; got != "done: hello world" {
			t.Fatalf("artifact text %q: %s", got, task.Raw)
		}
		if ts := task.Get("status.timestamp").Str; c.d == dialect.V10 && ts != "" && !strings.HasSuffix(ts, "Z") {
			t.Fatalf("1.0 timestamp %q is not UTC Z", ts)
		}
		// The task is there to get, in the caller's dialect.
		id := task.Get("id").Str
		got := mustResult(t, g.call("7", c.method(dialect.GetTask), `{"id":"`+id+`"}`))
		if got.Get("id").Str != id || got.Get("status.state").Str != c.state("completed") {
			t.Fatalf("get: %s", got.Raw)
		}
		if c.d == dialect.V03 && got.Get("kind").Str != "task" {
			t.Fatalf("0.x get result without kind: %s", got.Raw)
		}
	})
}

func TestDirectMessageAnswer(t *testing.T) {
	forEachPair(t, func(t *testing.T, c caller, g *testGateway) {
		r := mustResult(t, g.call("1", c.method(dialect.SendMessage), c.send("m1", c.text("what is A2A?"), "")))
		noForeignKeys(t, c.d, r.Raw)
		msg := r
		if c.d == dialect.V10 {
			msg = r.Get("message")
		} else if r.Get("kind").Str != "message" {
			t.Fatalf("not a message: %s", r.Raw)
		}
		role := map[dialect.ID]string{dialect.V03: "agent", dialect.V10: "ROLE_AGENT"}[c.d]
		if msg.Get("role").Str != role || !strings.Contains(msg.Get("parts.0.text").Str, "what is A2A?") {
			t.Fatalf("message: %s", r.Raw)
		}
	})
}

func TestFileAndDataPartsSurvive(t *testing.T) {
	forEachPair(t, func(t *testing.T, c caller, g *testGateway) {
		var parts string
		if c.d == dialect.V03 {
			parts = c.text("echo these") + `,{"kind":"file","file":{"bytes":"aGVsbG8=","mimeType":"text/plain","name":"a.txt"}},{"kind":"file","file":{"uri":"https://example.com/y.pdf","mimeType":"application/pdf"}},{"kind":"data","data":{"k":[1,2,{"x":"é"}]}}`
		} else {
			parts = c.text("echo these") + `,{"raw":"aGVsbG8=","mediaType":"text/plain","filename":"a.txt"},{"url":"https://example.com/y.pdf","mediaType":"application/pdf"},{"data":{"k":[1,2,{"x":"é"}]}},{"data":[1,2,3]}`
		}
		task := c.task(t, mustResult(t, g.call("1", c.method(dialect.SendMessage), c.send("m1", parts, ""))))
		noForeignKeys(t, c.d, task.Raw)
		got := task.Get("artifacts.0.parts")
		var want []string
		if c.d == dialect.V03 {
			want = []string{
				`{"kind":"file","file":{"bytes":"aGVsbG8=","mimeType":"text/plain","name":"a.txt"}}`,
				`{"kind":"file","file":{"uri":"https://example.com/y.pdf","mimeType":"application/pdf"}}`,
				`{"kind":"data","data":{"k":[1,2,{"x":"é"}]}}`,
			}
		} else {
			want = []string{
				`{"raw":"aGVsbG8=","mediaType":"text/plain","filename":"a.txt"}`,
				`{"url":"https://example.com/y.pdf","mediaType":"application/pdf"}`,
				`{"data":{"k":[1,2,{"x":"é"}]}}`,
				`{"data":[1,2,3]}`,
			}
		}
		arr := got.Array()
		if len(arr) != len(want)+1 {
			t.Fatalf("artifact parts: want %d, got %s", len(want)+1, got.Raw)
		}
		for i, w := range want {
			if !jsonSame(arr[i+1].Raw, w) {
				t.Errorf("part %d:\nwant %s\ngot  %s", i+1, w, arr[i+1].Raw)
			}
		}
	})
}

func TestNonBlockingSendThenPoll(t *testing.T) {
	forEachPair(t, func(t *testing.T, c caller, g *testGateway) {
		task := c.task(t, mustResult(t, g.call("1", c.method(dialect.SendMessage), c.send("m1", c.text("wait"), c.nonBlocking()))))
		id := task.Get("id").Str
		if s := task.Get("status.state").Str; s != c.state("submitted") && s != c.state("working") {
			t.Fatalf("non-blocking send answered %q", s)
		}
		canceled := mustResult(t, g.call("2", c.method(dialect.CancelTask), `{"id":"`+id+`"}`))
		if canceled.Get("status.state").Str != c.state("canceled") {
			t.Fatalf("cancel: %s", canceled.Raw)
		}
		got := mustResult(t, g.call("3", c.method(dialect.GetTask), `{"id":"`+id+`"}`))
		if got.Get("status.state").Str != c.state("canceled") {
			t.Fatalf("get after cancel: %s", got.Raw)
		}
		// A second cancel of a canceled task is not cancelable in both dialects.
		wantError(t, g.call("4", c.method(dialect.CancelTask), `{"id":"`+id+`"}`), c.d, -32002)
	})
}

func TestInputRequiredThenContinuation(t *testing.T) {
	forEachPair(t, func(t *testing.T, c caller, g *testGateway) {
		task := c.task(t, mustResult(t, g.call("1", c.method(dialect.SendMessage), c.send("m1", c.text("input please"), ""))))
		if task.Get("status.state").Str != c.state("input-required") {
			t.Fatalf("want input-required: %s", task.Raw)
		}
		done := c.task(t, mustResult(t, g.call("2", c.method(dialect.SendMessage), c.continuation("m2", task.Get("id").Str, "Ada"))))
		if done.Get("status.state").Str != c.state("completed") || !strings.Contains(done.Get("artifacts.0.parts.0.text").Str, "Ada") {
			t.Fatalf("continuation: %s", done.Raw)
		}
	})
}

func TestFailingTask(t *testing.T) {
	forEachPair(t, func(t *testing.T, c caller, g *testGateway) {
		task := c.task(t, mustResult(t, g.call("1", c.method(dialect.SendMessage), c.send("m1", c.text("fail now"), ""))))
		if task.Get("status.state").Str != c.state("failed") {
			t.Fatalf("want failed: %s", task.Raw)
		}
	})
}

func TestHistoryLength(t *testing.T) {
	forEachPair(t, func(t *testing.T, c caller, g *testGateway) {
		task := c.task(t, mustResult(t, g.call("1", c.method(dialect.SendMessage), c.send("m1", c.text("input please"), ""))))
		id := task.Get("id").Str
		c.task(t, mustResult(t, g.call("2", c.method(dialect.SendMessage), c.continuation("m2", id, "Ada"))))
		all := mustResult(t, g.call("3", c.method(dialect.GetTask), `{"id":"`+id+`"}`))
		n := len(all.Get("history").Array())
		if n < 2 {
			t.Fatalf("want at least 2 history messages: %s", all.Raw)
		}
		one := mustResult(t, g.call("4", c.method(dialect.GetTask), `{"id":"`+id+`","historyLength":1}`))
		if h := one.Get("history").Array(); len(h) != 1 || h[0].Get("messageId").Str != all.Get(fmt.Sprintf("history.%d.messageId", n-1)).Str {
			t.Fatalf("historyLength 1 must keep the newest message: %s", one.Raw)
		}
		zero := mustResult(t, g.call("5", c.method(dialect.GetTask), `{"id":"`+id+`","historyLength":0}`))
		switch h := zero.Get("history"); {
		case c.d == dialect.V10 && h.Exists():
			t.Fatalf("1.0 historyLength 0 means no history: %s", zero.Raw)
		case c.d == dialect.V03 && len(h.Array()) != n:
			t.Fatalf("0.x historyLength 0 means all %d: %s", n, zero.Raw)
		}
	})
}

func TestPushConfigLifecycle(t *testing.T) {
	forEachPair(t, func(t *testing.T, c caller, g *testGateway) {
		task := c.task(t, mustResult(t, g.call("1", c.method(dialect.SendMessage), c.send("m1", c.text("input please"), ""))))
		id := task.Get("id").Str
		var set, get, list, del string
		if c.d == dialect.V03 {
			set = `{"taskId":"` + id + `","pushNotificationConfig":{"id":"cfg1","url":"https://hooks.example/a2a","token":"tok","authentication":{"schemes":["Bearer"],"credentials":"secret"}}}`
			get = `{"id":"` + id + `","pushNotificationConfigId":"cfg1"}`
			list = `{"id":"` + id + `"}`
			del = `{"id":"` + id + `","pushNotificationConfigId":"cfg1"}`
		} else {
			set = `{"taskId":"` + id + `","id":"cfg1","url":"https://hooks.example/a2a","token":"tok","authentication":{"scheme":"Bearer","credentials":"secret"}}`
			get = `{"taskId":"` + id + `","id":"cfg1"}`
			list = `{"taskId":"` + id + `"}`
			del = get
		}
		check := func(r gjson.Result) {
			t.Helper()
			noForeignKeys(t, c.d, r.Raw)
			cfg := r
			if c.d == dialect.V03 {
				cfg = r.Get("pushNotificationConfig")
				if cfg.Get("authentication.schemes.0").Str != "Bearer" {
					t.Fatalf("schemes: %s", r.Raw)
				}
			} else if cfg.Get("authentication.scheme").Str != "Bearer" {
				t.Fatalf("scheme: %s", r.Raw)
			}
			if r.Get("taskId").Str != id || cfg.Get("id").Str != "cfg1" || cfg.Get("url").Str != "https://hooks.example/a2a" || cfg.Get("token").Str != "tok" {
				t.Fatalf("push config: %s", r.Raw)
			}
		}
		check(mustResult(t, g.call("2", c.method(dialect.CreatePushConfig), set)))
		check(mustResult(t, g.call("3", c.method(dialect.GetPushConfig), get)))
		l := mustResult(t, g.call("4", c.method(dialect.ListPushConfigs), list))
		items := l.Get("configs")
		if c.d == dialect.V03 {
			items = l
		}
		if n := len(items.Array()); n != 1 {
			t.Fatalf("list: %s", l.Raw)
		}
		check(items.Get("0"))
		d := mustResult(t, g.call("5", c.method(dialect.DeletePushConfig), del))
		if want := map[dialect.ID]string{dialect.V03: "null", dialect.V10: "{}"}[c.d]; d.Raw != want {
			t.Fatalf("delete result %s, want %s", d.Raw, want)
		}
	})
}

func TestUnknownTaskErrors(t *testing.T) {
	forEachPair(t, func(t *testing.T, c caller, g *testGateway) {
		for _, op := range []dialect.Op{dialect.GetTask, dialect.CancelTask} {
			e := wantError(t, g.call(`"x"`, c.method(op), `{"id":"no-such-task"}`), c.d, -32001)
			if c.d == dialect.V10 && e.Get("data.0.reason").Str != "TASK_NOT_FOUND" {
				t.Errorf("%s: 1.0 error without ErrorInfo reason: %s", op, e.Raw)
			}
		}
		wantError(t, g.call(`"y"`, c.method(dialect.SendMessage), c.continuation("m9", "no-such-task", "hi")), c.d, -32001)
	})
}

func jsonSame(a, b string) bool { return jsontest.Equal([]byte(a), []byte(b)) }

// TestPushConfigGetWithoutConfigID covers the 0.2.5 form of get, which names
// only the task, against both backends.
func TestPushConfigGetWithoutConfigID(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			g := newGateway(t, b.handler(t, nil), b.version)
			c := callers[0]
			task := c.task(t, mustResult(t, g.call("1", "message/send", c.send("m1", c.text("input please"), ""))))
			id := task.Get("id").Str
			if b.version == dialect.Version10 {
				// The gateway's own answer; a 0.x backend answers for itself.
				wantError(t, g.call("2", "tasks/pushNotificationConfig/get", `{"id":"`+id+`"}`), c.d, -32001)
			}
			set := mustResult(t, g.call("3", "tasks/pushNotificationConfig/set", `{"taskId":"`+id+`","pushNotificationConfig":{"url":"https://hooks.example/x"}}`))
			got := mustResult(t, g.call("4", "tasks/pushNotificationConfig/get", `{"id":"`+id+`"}`))
			if got.Get("pushNotificationConfig.url").Str != "https://hooks.example/x" || got.Get("pushNotificationConfig.id").Str != set.Get("pushNotificationConfig.id").Str {
				t.Fatalf("get without config id: %s (set answered %s)", got.Raw, set.Raw)
			}
		})
	}
}

func TestAgentPathWithAndWithoutTrailingSlash(t *testing.T) {
	g := newGateway(t, backends[0].handler(t, nil), dialect.Version025, func(a *AgentConfig) { a.Path = "/a2a/helpdesk/" })
	for _, p := range []string{"a2a/helpdesk", "a2a/helpdesk/"} {
		g2 := *g
		g2.url = strings.TrimSuffix(g.url, "/") + "/" + p
		mustResult(t, g2.call("1", "message/send", `{"message":`+msg03+`}`))
	}
}

// TestAgentPathWithoutSlashNotRedirected: however the config spells an
// agent's path, every binding answers at it spelt without the trailing
// slash as with it, at once: JSON-RPC, the cards and the REST routes, and
// a request no binding takes at the path itself gets the agent's JSON 404
// rather than ServeMux's redirect with an HTML body.
func TestAgentPathWithoutSlashNotRedirected(t *testing.T) {
	for _, tc := range []struct {
		path     string
		bindings []string
		bare     string // the message of a GET at the path itself
	}{
		{"/a2a/helpdesk/", nil, "no A2A HTTP+JSON route at /"},
		{"/a2a/helpdesk", nil, "no A2A HTTP+JSON route at /"},
		{"/a2a/helpdesk", []string{"jsonrpc"}, `agent "test" does not publish the HTTP+JSON binding: its bindings setting leaves http_json out`},
	} {
		t.Run(tc.path+strings.Join(tc.bindings, ","), func(t *testing.T) {
			g := newGateway(t, backends[1].handler(t, nil), dialect.Version10, func(a *AgentConfig) { a.Path, a.Bindings = tc.path, tc.bindings })
			base := strings.TrimSuffix(g.url, "/") + "/a2a/helpdesk"
			for _, u := range []string{base, base + "/"} {
				if status, r := doNoRedirect(t, "POST", u, `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"none"}}`); status != http.StatusOK || r.Get("error.code").Int() != -32001 {
					t.Errorf("JSON-RPC at %s: HTTP %d %s", u, status, r.Raw)
				}
				for _, method := range []string{"GET", "DELETE"} {
					status, r := doNoRedirect(t, method, u, "")
					if status != http.StatusNotFound || r.Get("error.message").Str != tc.bare {
						t.Errorf("%s %s: HTTP %d %s, want 404 %q", method, u, status, r.Raw, tc.bare)
					}
				}
			}
			if status, r := doNoRedirect(t, "GET", base+"/.well-known/agent-card.json", ""); status != http.StatusOK || r.Get("name").Str == "" {
				t.Errorf("card: HTTP %d %s", status, r.Raw)
			}
			if tc.bindings != nil {
				return
			}
			status, task := doNoRedirect(t, "POST", base+"/message:send", `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hello"}]}}`)
			id := task.Get("task.id").Str
			if status != http.StatusOK || id == "" {
				t.Fatalf("REST send: HTTP %d %s", status, task.Raw)
			}
			if status, got := doNoRedirect(t, "GET", base+"/tasks/"+id, ""); status != http.StatusOK || got.Get("id").Str != id {
				t.Errorf("REST get: HTTP %d %s", status, got.Raw)
			}
		})
	}
}

// noRedirect is a client that shows a redirect rather than follow it.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// doNoRedirect sends a 1.0 request with a JSON body to url and returns the
// answer, which must be JSON and no redirect.
func doNoRedirect(t *testing.T, method, url, body string) (int, gjson.Result) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	res, b := testnet.RoundTrip(t, noRedirect, req)
	if ct := res.Header.Get("Content-Type"); ct != "application/json" || res.Header.Get("Location") != "" {
		t.Fatalf("%s %s: HTTP %d, Content-Type %q, Location %q: %s", method, url, res.StatusCode, ct, res.Header.Get("Location"), b)
	}
	return res.StatusCode, gjson.ParseBytes(b)
}

// TestNestedAgentPathWithoutSlash: an agent's path below another's, spelt
// without its slash, is that agent's, not a redirect nor its parent's.
func TestNestedAgentPathWithoutSlash(t *testing.T) {
	child := AgentConfig{Name: "child", Path: "/a/b/", PublicURL: "http://gateway.test/a/b/", Backend: BackendConfig{URL: "http://127.0.0.1:1/", Dialect: dialect.Version10},
		Bindings: []string{"jsonrpc"}}
	child.SetDefaults()
	b, err := NewAgent(context.Background(), child, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	gw, err := NewGateway([]*Agent{idleAgent(t, "parent", "/a"), b})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gw.Close)
	url := httptestServer(t, gw)
	for path, want := range map[string]string{
		"/a":   "no A2A HTTP+JSON route at /",
		"/a/b": `agent "child" does not publish the HTTP+JSON binding: its bindings setting leaves http_json out`,
	} {
		if status, r := doNoRedirect(t, "GET", url+path, ""); status != http.StatusNotFound || r.Get("error.message").Str != want {
			t.Errorf("GET %s: HTTP %d %s, want 404 %q", path, status, r.Raw, want)
		}
	}
}
