package proxy

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/dialect"
)

// statusBackend is a 1.0 agent whose tasks keep the status they were given
// until the test changes it: a read answers the same status, timestamp and
// all. stamp gives a new task's timestamp ("" for none).
type statusBackend struct {
	mu    sync.Mutex
	tasks map[string][2]string // id → state, timestamp
	stamp func() string
}

func newStatusBackend() *statusBackend {
	return &statusBackend{tasks: map[string][2]string{}, stamp: func() string { return time.Now().UTC().Format(time.RFC3339Nano) }}
}

func (b *statusBackend) set(id, state, stamp string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.tasks[id] = [2]string{state, stamp}
}

func (b *statusBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := gjson.ParseBytes(body)
	b.mu.Lock()
	var id string
	switch req.Get("method").Str {
	case "SendMessage":
		id = "t" + strconv.Itoa(len(b.tasks)+1)
		b.tasks[id] = [2]string{"TASK_STATE_WORKING", b.stamp()}
	default:
		id = req.Get("params.id").Str
	}
	st := b.tasks[id]
	b.mu.Unlock()
	status := `{"state":"` + st[0] + `"`
	if st[1] != "" {
		status += `,"timestamp":"` + st[1] + `"`
	}
	task := `{"id":"` + id + `","contextId":"c-` + id + `","status":` + status + `}}`
	if req.Get("method").Str == "SendMessage" {
		task = `{"task":` + task + `}`
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+req.Get("id").Raw+`,"result":`+task+`}`)
}

func listedIDs(r gjson.Result) []string {
	var ids []string
	for _, t := range r.Get("tasks").Array() {
		ids = append(ids, t.Get("id").Str)
	}
	return ids
}

// sendTasks sends n messages, each making a task; ids prefix their message ids.
func sendTasks(t *testing.T, g *testGateway, ids string, n int) {
	t.Helper()
	c := callers[1]
	for i := range n {
		mustResult(t, g.call(strconv.Itoa(i), "SendMessage", c.send(ids+strconv.Itoa(i), c.text("go"), c.nonBlocking())))
	}
}

// TestListTasksPagingStableAcrossReads: reading a task whose status has not
// changed does not move it in the listing, so the second page of a walk
// is the rest of the first walk. Before, each read recorded the gateway's
// time of reading as the status time: the read task jumped to the head of
// the list, and the walk's next page, after it, lost it.
func TestListTasksPagingStableAcrossReads(t *testing.T) {
	g := newGateway(t, newStatusBackend(), dialect.Version10, withAuth(t))
	alice := g.as(token(t, "alice"))
	sendTasks(t, alice, "m", 3)
	first := mustResult(t, alice.call("11", "ListTasks", `{"pageSize":2}`))
	if ids := listedIDs(first); len(ids) != 2 || ids[0] != "t3" || ids[1] != "t2" {
		t.Fatalf("first page %v, want [t3 t2]: %s", ids, first.Raw)
	}
	mustResult(t, alice.call("21", "GetTask", `{"id":"t1"}`))
	mustResult(t, alice.call("22", "GetTask", `{"id":"t2"}`))
	again := mustResult(t, alice.call("12", "ListTasks", `{"pageSize":2}`))
	if ids := listedIDs(again); len(ids) != 2 || ids[0] != "t3" || ids[1] != "t2" {
		t.Errorf("first page after reads %v, want [t3 t2] still: %s", ids, again.Raw)
	}
	next := mustResult(t, alice.call("13", "ListTasks", `{"pageSize":2,"pageToken":"`+first.Get("nextPageToken").Str+`"}`))
	if ids := listedIDs(next); len(ids) != 1 || ids[0] != "t1" {
		t.Errorf("second page after reads %v, want [t1]: %s", ids, next.Raw)
	}
}

// TestListTasksStatusTimestampAfterIsTheStatusTime: statusTimestampAfter
// keeps the tasks whose status changed since, not those the gateway read
// since; a status change (here without a timestamp, as 0.x may answer) is
// recorded at the gateway's time and listed.
func TestListTasksStatusTimestampAfterIsTheStatusTime(t *testing.T) {
	back := newStatusBackend()
	g := newGateway(t, back, dialect.Version10, withAuth(t))
	alice := g.as(token(t, "alice"))
	sendTasks(t, alice, "m", 2)
	since := time.Now().UTC()
	for _, id := range []string{"t1", "t2"} {
		mustResult(t, alice.call("3", "GetTask", `{"id":"`+id+`"}`))
	}
	after := `{"statusTimestampAfter":"` + since.Format(time.RFC3339Nano) + `"}`
	if ids := listedIDs(mustResult(t, alice.call("11", "ListTasks", after))); len(ids) != 0 {
		t.Errorf("statusTimestampAfter a time past every status change listed %v, read since but unchanged", ids)
	}
	back.set("t2", "TASK_STATE_COMPLETED", "")
	mustResult(t, alice.call("23", "GetTask", `{"id":"t2"}`))
	if ids := listedIDs(mustResult(t, alice.call("12", "ListTasks", after))); len(ids) != 1 || ids[0] != "t2" {
		t.Errorf("statusTimestampAfter listed %v, want [t2], completed since", ids)
	}
	rec, err := g.agent.tasks.Get(context.Background(), g.agent.cfg.Name, "t2")
	if err != nil || rec.State != "TASK_STATE_COMPLETED" || rec.Updated.Before(since) {
		t.Errorf("t2 indexed as %+v (%v), want completed, at or after %v", rec, err, since)
	}
}

// TestStatusTimeBoundedByTheGatewaysClock: a backend's clock far ahead does
// not pin its task at the head of the listing, and one far behind does not
// hide a new task from statusTimestampAfter or drop a state change as
// older than the status the index holds.
func TestStatusTimeBoundedByTheGatewaysClock(t *testing.T) {
	back := newStatusBackend()
	g := newGateway(t, back, dialect.Version10, withAuth(t))
	alice := g.as(token(t, "alice"))
	start := time.Now().UTC()
	back.stamp = func() string { return "2100-01-01T00:00:00Z" }
	sendTasks(t, alice, "a", 1) // t1, from the future
	back.stamp = func() string { return time.Now().UTC().Format(time.RFC3339Nano) }
	sendTasks(t, alice, "b", 1) // t2, now
	if ids := listedIDs(mustResult(t, alice.call("11", "ListTasks", `{}`))); len(ids) != 2 || ids[0] != "t2" {
		t.Errorf("listing %v, want t2 first: t1's timestamp in 2100 pins it at the head", ids)
	}
	back.stamp = func() string { return "1970-01-01T00:00:00Z" }
	since := time.Now().UTC()
	sendTasks(t, alice, "c", 1) // t3, from the past
	after := `{"statusTimestampAfter":"` + since.Format(time.RFC3339Nano) + `"}`
	if ids := listedIDs(mustResult(t, alice.call("12", "ListTasks", after))); len(ids) != 1 || ids[0] != "t3" {
		t.Errorf("statusTimestampAfter listed %v, want [t3], sent since with a timestamp of 1970", ids)
	}
	back.set("t3", "TASK_STATE_COMPLETED", "1970-01-01T00:00:01Z")
	mustResult(t, alice.call("21", "GetTask", `{"id":"t3"}`))
	for id, want := range map[string]string{"t1": "TASK_STATE_WORKING", "t3": "TASK_STATE_COMPLETED"} {
		rec, err := g.agent.tasks.Get(context.Background(), g.agent.cfg.Name, id)
		if err != nil || rec.State != want || rec.Updated.Before(start) || rec.Updated.After(time.Now()) {
			t.Errorf("%s indexed as %+v (%v), want %s, at a time between the test's start and now", id, rec, err, want)
		}
	}
}
