package proxy

import (
	"io"
	"net/http"
	"testing"

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
