package proxy

import (
	"testing"

	"github.com/a2agate/gateway/dialect"
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
