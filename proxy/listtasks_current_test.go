package proxy

import (
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/dialect"
)

// TestListTasksStatusFilterReadsTheCurrentState: a task the index last saw
// submitted, which its backend has since completed without the gateway
// seeing, is not listed under status TASK_STATE_SUBMITTED (the listing
// reads its current state, and the filter is about that state), and is
// listed under TASK_STATE_COMPLETED. totalSize counts only what matched.
func TestListTasksStatusFilterReadsTheCurrentState(t *testing.T) {
	task := func(state string) string {
		return `{"id":"t1","contextId":"c1","status":{"state":"` + state + `","timestamp":"2026-01-02T03:04:05Z"}}`
	}
	back := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req := gjson.ParseBytes(body)
		w.Header().Set("Content-Type", "application/json")
		result := task("TASK_STATE_COMPLETED") // the backend finished it since
		if req.Get("method").Str == "SendMessage" {
			result = `{"task":` + task("TASK_STATE_SUBMITTED") + `}`
		}
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+req.Get("id").Raw+`,"result":`+result+`}`)
	})
	tg := newGateway(t, back, dialect.Version10, withAuth(t))
	alice := tg.as(token(t, "alice"))
	c := callers[1]
	mustResult(t, alice.call("1", "SendMessage", c.send("m1", c.text("wait"), c.nonBlocking())))

	submitted := mustResult(t, alice.call("2", "ListTasks", `{"status":"TASK_STATE_SUBMITTED"}`))
	if n := len(submitted.Get("tasks").Array()); n != 0 || submitted.Get("totalSize").Int() != 0 {
		t.Errorf("status TASK_STATE_SUBMITTED listed a task that is not: %s", submitted.Raw)
	}
	completed := mustResult(t, alice.call("3", "ListTasks", `{"status":"TASK_STATE_COMPLETED"}`))
	if completed.Get("tasks.0.id").Str != "t1" || completed.Get("totalSize").Int() != 1 {
		t.Errorf("status TASK_STATE_COMPLETED: %s", completed.Raw)
	}
}

// TestListTasksStatusFilterFindsATaskFinishedUnseen: a task the index
// last saw working, which its backend completed while nobody read it, is
// listed under TASK_STATE_COMPLETED by the first listing that asks; one
// the index saw completed is never read for TASK_STATE_WORKING (a final
// state is not left), and one it saw failed is not listed as completed.
// Before, the index picked by the state it last saw, so the completed
// task was missing until some other read brought the index up to date.
func TestListTasksStatusFilterFindsATaskFinishedUnseen(t *testing.T) {
	var sends atomic.Int32
	var reads sync.Map
	task := func(id, state string) string {
		return `{"id":"` + id + `","contextId":"c1","status":{"state":"` + state + `","timestamp":"2026-01-02T03:04:05Z"}}`
	}
	sent := map[string]string{"t1": "TASK_STATE_WORKING", "t2": "TASK_STATE_COMPLETED", "t3": "TASK_STATE_FAILED"}
	back := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req := gjson.ParseBytes(body)
		w.Header().Set("Content-Type", "application/json")
		var result string
		if req.Get("method").Str == "SendMessage" {
			id := "t" + strconv.Itoa(int(sends.Add(1)))
			result = `{"task":` + task(id, sent[id]) + `}`
		} else {
			id := req.Get("params.id").Str
			reads.Store(id, true)
			state := sent[id]
			if id == "t1" {
				state = "TASK_STATE_COMPLETED" // finished since, unseen
			}
			result = task(id, state)
		}
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+req.Get("id").Raw+`,"result":`+result+`}`)
	})
	tg := newGateway(t, back, dialect.Version10, withAuth(t))
	alice := tg.as(token(t, "alice"))
	c := callers[1]
	for _, m := range []string{"m1", "m2", "m3"} {
		mustResult(t, alice.call("1", "SendMessage", c.send(m, c.text("go"), c.nonBlocking())))
	}
	completed := mustResult(t, alice.call("2", "ListTasks", `{"status":"TASK_STATE_COMPLETED"}`))
	var ids []string
	for _, t := range completed.Get("tasks").Array() {
		ids = append(ids, t.Get("id").Str)
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []string{"t1", "t2"}) {
		t.Fatalf("status TASK_STATE_COMPLETED listed %v, want t1 (completed unseen) and t2: %s", ids, completed.Raw)
	}
	if _, read := reads.Load("t3"); read {
		t.Errorf("a task the index saw failed was read for a completed listing")
	}
	reads.Clear()
	mustResult(t, alice.call("3", "ListTasks", `{"status":"TASK_STATE_WORKING"}`))
	if _, read := reads.Load("t2"); read {
		t.Errorf("a task the index saw completed was read for a working listing")
	}
}

// TestListTasksLeavesOutATaskItsBackendForgot: a listed task its backend
// no longer has (restarted, expired) answers the backend's "task not
// found" when read: the listing leaves it out, as one the gateway finds
// gone itself, rather than fail as a whole with that task's error.
func TestListTasksLeavesOutATaskItsBackendForgot(t *testing.T) {
	var sends atomic.Int32
	back := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req := gjson.ParseBytes(body)
		task := func(id string) string {
			return `{"id":"` + id + `","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED","timestamp":"2026-01-02T03:04:05Z"}}`
		}
		w.Header().Set("Content-Type", "application/json")
		var answer string
		switch id := req.Get("params.id").Str; {
		case req.Get("method").Str == "SendMessage":
			answer = `"result":{"task":` + task("t"+strconv.Itoa(int(sends.Add(1)))) + `}`
		case id == "t1":
			answer = `"error":{"code":-32001,"message":"Task not found: ` + id + `"}`
		default:
			answer = `"result":` + task(id)
		}
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+req.Get("id").Raw+`,`+answer+`}`)
	})
	tg := newGateway(t, back, dialect.Version10, withAuth(t))
	alice := tg.as(token(t, "alice"))
	c := callers[1]
	for _, m := range []string{"m1", "m2"} {
		mustResult(t, alice.call("1", "SendMessage", c.send(m, c.text("hi"), "")))
	}
	r := mustResult(t, alice.call("2", "ListTasks", `{}`))
	if r.Get("tasks.#").Int() != 1 || r.Get("tasks.0.id").Str != "t2" || r.Get("totalSize").Int() != 1 {
		t.Errorf("ListTasks: %s", r.Raw)
	}
}

// TestListTasksStopsAtTheFirstFailedRead: a listing whose backend stalls
// fails at the first read that fails, within response_header_timeout,
// naming it: the reads still waiting are not made, so that a page of 17
// tasks against a stalled backend waits one timeout, not one per round of
// listFetchers reads.
func TestListTasksStopsAtTheFirstFailedRead(t *testing.T) {
	var sends, gets atomic.Int32
	back := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req := gjson.ParseBytes(body)
		if req.Get("method").Str == "GetTask" {
			gets.Add(1)
			<-r.Context().Done() // stalled until the gateway gives up
			return
		}
		id := "t" + strconv.Itoa(int(sends.Add(1)))
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+req.Get("id").Raw+`,"result":{"task":{"id":"`+id+`","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED","timestamp":"2026-01-02T03:04:05Z"}}}}`)
	})
	tg := newGateway(t, back, dialect.Version10, withAuth(t), func(a *AgentConfig) { a.Backend.ResponseHeaderTimeout = 100 * time.Millisecond })
	alice := tg.as(token(t, "alice"))
	c := callers[1]
	const tasks = 2*listFetchers + 1
	for i := range tasks {
		mustResult(t, alice.call("1", "SendMessage", c.send("m"+strconv.Itoa(i), c.text("hi"), "")))
	}
	e := alice.call("2", "ListTasks", `{}`).Get("error")
	if !strings.Contains(e.Get("message").Str, "response_header_timeout") {
		t.Errorf("ListTasks against a stalled backend: %s", e.Raw)
	}
	if n := gets.Load(); n > listFetchers {
		t.Errorf("the listing read %d tasks from a backend that had stalled on the first %d", n, listFetchers)
	}
}

// TestListTasksPageBounded: a page whose tasks are more than
// max_reply_bytes together (each read is bounded by it, a page of 100
// reads was not) is refused, saying how to ask for less, and one within it
// is answered: the listing holds no more than a reply's worth of tasks.
func TestListTasksPageBounded(t *testing.T) {
	big := strings.Repeat("x", 64<<10)
	var sends atomic.Int32
	back := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req := gjson.ParseBytes(body)
		id := req.Get("params.id").Str
		if req.Get("method").Str == "SendMessage" {
			id = "t" + strconv.Itoa(int(sends.Add(1)))
		}
		task := `{"id":"` + id + `","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED","timestamp":"2026-01-02T03:04:05Z"},"artifacts":[{"artifactId":"a","parts":[{"text":"` + big + `"}]}]}`
		if req.Get("method").Str == "SendMessage" {
			task = `{"task":` + task + `}`
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+req.Get("id").Raw+`,"result":`+task+`}`)
	})
	tg := newGateway(t, back, dialect.Version10, withAuth(t), func(a *AgentConfig) { a.MaxReplyBytes = 200 << 10 })
	alice := tg.as(token(t, "alice"))
	c := callers[1]
	for i := range 5 {
		mustResult(t, alice.call("1", "SendMessage", c.send("m"+strconv.Itoa(i), c.text("hi"), "")))
	}
	wantErrorSaying(t, alice.call("2", "ListTasks", `{"includeArtifacts":true}`), dialect.V10, -32602, "max_reply_bytes")
	if r := mustResult(t, alice.call("3", "ListTasks", `{"includeArtifacts":true,"pageSize":2}`)); len(r.Get("tasks").Array()) != 2 {
		t.Errorf("a page within the bound: %.200s", r.Raw)
	}
}
