package proxy

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/agent10"
)

// TestListTasksUnknownMemberRefused: ListTasks is answered by the gateway
// from its index, so a member it does not read cannot be forwarded either:
// a caller that misspells a filter ("state" for "status", "contextID"'s
// cousin "context") is told so, not handed every one of its tasks as
// though it had asked for no filter.
func TestListTasksUnknownMemberRefused(t *testing.T) {
	g := newGateway(t, backends[1].handler(t, nil), backends[1].version)
	c10 := callers[1]
	mustResult(t, g.call("1", c10.method(dialect.SendMessage), c10.send("m1", c10.text("input please"), "")))
	mustResult(t, g.call("2", c10.method(dialect.SendMessage), c10.send("m2", c10.text("hi"), "")))
	for _, tc := range []struct{ params, names string }{
		{`{"state":"TASK_STATE_INPUT_REQUIRED"}`, `"state"`},
		{`{"context":"c-elsewhere","pageSize":10}`, `"context"`},
		{`{"filter":{"contextId":"c"}}`, `"filter"`},
	} {
		r := g.call("3", "ListTasks", tc.params)
		if !r.Get("error").Exists() {
			t.Fatalf("ListTasks %s was answered as a listing without that filter: %.300s", tc.params, r.Raw)
		}
		wantErrorSaying(t, r, dialect.V10, -32602, tc.names)
	}
	// The members it does read, in either spelling, still list.
	mustResult(t, g.call("4", "ListTasks", `{"status":"TASK_STATE_INPUT_REQUIRED","page_size":10,"includeArtifacts":false}`))
}

// extendedCardBackend is a 1.0 agent whose GetExtendedAgentCard calls are
// answered with a small card and their params recorded.
type extendedCardBackend struct {
	mu     sync.Mutex
	params []string
}

func (b *extendedCardBackend) handler(t *testing.T) http.Handler {
	modern := agent10.New(agent10.Options{})
	t.Cleanup(modern.Close)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req := gjson.ParseBytes(body)
		if r.Method != http.MethodPost || req.Get("method").Str != "GetExtendedAgentCard" {
			r.Body = io.NopCloser(bytes.NewReader(body))
			modern.ServeHTTP(w, r)
			return
		}
		b.mu.Lock()
		b.params = append(b.params, req.Get("params").Raw)
		b.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+req.Get("id").Raw+`,"result":{"name":"x","description":"d","version":"1","supportedInterfaces":[{"url":"http://b/","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],"capabilities":{"extendedAgentCard":true},"defaultInputModes":["text"],"defaultOutputModes":["text"],"skills":[]}}`)
	})
}

func (b *extendedCardBackend) last() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.params) == 0 {
		return ""
	}
	return b.params[len(b.params)-1]
}

// TestExtendedCardParamsReachTheBackend: a 1.0 caller's GetExtendedAgentCard
// params are read and translated as every call's are: its tenant reaches a
// 1.0 backend (over JSON-RPC and as the REST binding's /{tenant} prefix),
// where the gateway sent {} whatever was asked and the backend answered
// with its default tenant's card; a tenant that is no string is refused,
// where it was never looked at.
func TestExtendedCardParamsReachTheBackend(t *testing.T) {
	var back extendedCardBackend
	g := newGateway(t, back.handler(t), dialect.Version10)
	mustResult(t, g.call("1", "GetExtendedAgentCard", `{"tenant":"acme"}`))
	if got := back.last(); gjson.Get(got, "tenant").Str != "acme" {
		t.Errorf("the backend was asked for the extended card with params %s, want tenant acme", got)
	}
	res, body := g.request(t, http.MethodGet, "/acme/extendedAgentCard", "", "A2A-Version", "1.0")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("REST /acme/extendedAgentCard: HTTP %d %s", res.StatusCode, body)
	}
	if got := back.last(); gjson.Get(got, "tenant").Str != "acme" {
		t.Errorf("REST /acme/extendedAgentCard: the backend was asked with params %s, want tenant acme", got)
	}
	asked := len(back.params)
	wantErrorSaying(t, g.call("2", "GetExtendedAgentCard", `{"tenant":5}`), dialect.V10, -32602, "tenant")
	if len(back.params) != asked {
		t.Errorf("a refused call reached the backend")
	}
	mustResult(t, g.call("3", "GetExtendedAgentCard", `{}`))
	if got := back.last(); strings.TrimSpace(got) != "{}" {
		t.Errorf("params {} reached the backend as %s", got)
	}
}

// TestPushConfigListPagingOfA0xCaller: 0.x lists a task's push configs in
// one answer, a bare array with no place for a next page's token, so a 0.x
// caller's pageSize or pageToken (1.0 members) is refused: passed on to a
// 1.0 backend, it had the caller shown the first page as though it were
// every config, the next page's token lost on the way back.
func TestPushConfigListPagingOfA0xCaller(t *testing.T) {
	off := false
	for _, relay := range []bool{false, true} {
		t.Run(map[bool]string{false: "relay off", true: "relay on"}[relay], func(t *testing.T) {
			on := true
			g := newGateway(t, backends[1].handler(t, nil), backends[1].version, allowLoopback,
				func(a *AgentConfig) { a.Push.Enabled = map[bool]*bool{false: &off, true: &on}[relay] })
			c03, c10 := callers[0], callers[1]
			id := c03.task(t, mustResult(t, g.call("1", c03.method(dialect.SendMessage), c03.send("m1", c03.text("input please"), "")))).Get("id").Str
			hook := newReceiver(t, 0).url
			for _, cid := range []string{"c1", "c2"} {
				mustResult(t, g.call("2", c10.method(dialect.CreatePushConfig), `{"taskId":"`+id+`","id":"`+cid+`","url":"`+hook+`"}`))
			}
			for _, params := range []string{`{"id":"` + id + `","pageSize":1}`, `{"id":"` + id + `","pageToken":"x"}`} {
				r := g.call("3", c03.method(dialect.ListPushConfigs), params)
				if !r.Get("error").Exists() {
					t.Fatalf("%s: answered %s", params, r.Raw)
				}
				wantErrorSaying(t, r, dialect.V03, -32602, "page")
			}
			if n := len(mustResult(t, g.call("4", c03.method(dialect.ListPushConfigs), `{"id":"`+id+`"}`)).Array()); n != 2 {
				t.Errorf("a 0.x list without paging: %d configs, want 2", n)
			}
		})
	}
}

// TestFileMemberOfA0xCaller: a member of a 0.x caller's file object that
// the gateway does not know is refused toward a 1.0 backend, whose part
// has no file object to carry it (it was dropped unsaid), naming it;
// toward a 0.x backend it is carried, and the send keeps its safe retry.
func TestFileMemberOfA0xCaller(t *testing.T) {
	c03 := callers[0]
	part := `{"kind":"file","file":{"uri":"https://files.example/y.pdf","mimeType":"application/pdf","sizeBytes":1024}}`
	g10 := newGateway(t, backends[1].handler(t, nil), backends[1].version)
	wantErrorSaying(t, g10.call("1", c03.method(dialect.SendMessage), c03.send("m1", part, "")), dialect.V03, -32602, `params.message.parts[0].file: has "sizeBytes"`)
	g03 := newGateway(t, backends[0].handler(t, nil), backends[0].version)
	first := c03.task(t, mustResult(t, g03.call("2", c03.method(dialect.SendMessage), c03.send("m2", part, "")))).Get("id").Str
	again := c03.task(t, mustResult(t, g03.call("3", c03.method(dialect.SendMessage), c03.send("m2", part, "")))).Get("id").Str
	if first == "" || again != first {
		t.Errorf("the retry of a send to a 0.x backend got task %q, the first %q", again, first)
	}
}
