package proxy

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/dialect"
)

// TestListTasksCarriesTheTenant: a listing below a tenant (REST
// /{tenant}/tasks, or params.tenant) reads each task from a 1.0 backend
// under that tenant, as the caller's own GetTask would: the backend, which
// keeps tasks per tenant, answers the tenant's task and refuses the
// other's, which the listing leaves out (totalSize too). Without the
// tenant the backend found neither, and the caller's own task went
// missing.
func TestListTasksCarriesTheTenant(t *testing.T) {
	back := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req := gjson.ParseBytes(body)
		tenant := req.Get("params.tenant").Str
		task := func(tenant string) string {
			return `{"id":"t-` + tenant + `","contextId":"c-` + tenant + `","status":{"state":"TASK_STATE_COMPLETED","timestamp":"2026-01-02T03:04:05Z"}}`
		}
		w.Header().Set("Content-Type", "application/json")
		answer := `"result":` + task(tenant)
		switch {
		case req.Get("method").Str == "SendMessage":
			answer = `"result":{"task":` + task(tenant) + `}`
		case tenant == "" || req.Get("params.id").Str != "t-"+tenant:
			answer = `"error":{"code":-32001,"message":"Task not found"}`
		}
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+req.Get("id").Raw+`,`+answer+`}`)
	})
	tg := newGateway(t, back, dialect.Version10, withAuth(t))
	alice := token(t, "alice")
	for _, tenant := range []string{"A", "B"} {
		st, _, r := restDo(t, tg, "POST", "/"+tenant+"/message:send", "application/json", `{"message":{"messageId":"n-`+tenant+`","role":"ROLE_USER","parts":[{"text":"hi"}]}}`, alice)
		if st != http.StatusOK || r.Get("task.id").Str != "t-"+tenant {
			t.Fatalf("send below tenant %s: HTTP %d %s", tenant, st, r.Raw)
		}
	}
	st, _, list := restDo(t, tg, "GET", "/A/tasks", "", "", alice)
	if st != http.StatusOK || list.Get("tasks.#").Int() != 1 || list.Get("tasks.0.id").Str != "t-A" || list.Get("totalSize").Int() != 1 {
		t.Errorf("GET /A/tasks: HTTP %d %s", st, list.Raw)
	}
	r := mustResult(t, tg.as(alice).call("1", "ListTasks", `{"tenant":"B"}`))
	if r.Get("tasks.#").Int() != 1 || r.Get("tasks.0.id").Str != "t-B" || r.Get("totalSize").Int() != 1 {
		t.Errorf(`ListTasks {"tenant":"B"}: %s`, r.Raw)
	}
}

// TestPushRelayCarriesTheTenant: a push config set below a tenant has the
// relay's config registered with a 1.0 backend under that tenant (and
// deleted under it with the caller's last config), as the caller's own
// call would be: a backend that keeps tasks per tenant found no task for
// a registration without it, and the caller's own task answered 404.
func TestPushRelayCarriesTheTenant(t *testing.T) {
	var mu sync.Mutex
	var calls []string
	back := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req := gjson.ParseBytes(body)
		method, tenant := req.Get("method").Str, req.Get("params.tenant").Str
		mu.Lock()
		calls = append(calls, method+"@"+tenant)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		answer := `"error":{"code":-32001,"message":"Task not found"}`
		switch {
		case method == "SendMessage":
			answer = `"result":{"task":{"id":"t-` + tenant + `","contextId":"c-` + tenant + `","status":{"state":"TASK_STATE_WORKING"}}}`
		case tenant != "A" || req.Get("params.taskId").Str != "t-A":
		case method == "CreateTaskPushNotificationConfig":
			answer = `"result":` + req.Get("params").Raw
		case method == "DeleteTaskPushNotificationConfig":
			answer = `"result":{}`
		}
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+req.Get("id").Raw+`,`+answer+`}`)
	})
	tg := newGateway(t, back, dialect.Version10, withAuth(t))
	alice := token(t, "alice")
	st, _, r := restDo(t, tg, "POST", "/A/message:send", "application/json", `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}`, alice)
	if st != http.StatusOK || r.Get("task.id").Str != "t-A" {
		t.Fatalf("send below tenant A: HTTP %d %s", st, r.Raw)
	}
	st, _, r = restDo(t, tg, "POST", "/A/tasks/t-A/pushNotificationConfigs", "application/json", `{"url":"https://hooks.example/a2a"}`, alice)
	if st != http.StatusOK || r.Get("url").Str != "https://hooks.example/a2a" {
		t.Fatalf("push config below tenant A: HTTP %d %s", st, r.Raw)
	}
	st, _, r = restDo(t, tg, "DELETE", "/A/tasks/t-A/pushNotificationConfigs/"+r.Get("id").Str, "", "", alice)
	if st != http.StatusOK {
		t.Fatalf("push config delete below tenant A: HTTP %d %s", st, r.Raw)
	}
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(calls, " "); !strings.Contains(got, "CreateTaskPushNotificationConfig@A") || !strings.Contains(got, "DeleteTaskPushNotificationConfig@A") {
		t.Errorf("the backend got %s", got)
	}
}

// TestFinalTaskReadCarriesTheTenant: a message below a tenant to a task its
// 1.0 backend finished unseen is refused by the backend in its own words;
// the gateway reads the task, under that tenant, to learn that it is final
// and give the caller its spec's answer (UnsupportedOperation). Read
// without the tenant, a backend keeping tasks per tenant found no task,
// and the backend's words stood.
func TestFinalTaskReadCarriesTheTenant(t *testing.T) {
	back := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req := gjson.ParseBytes(body)
		tenant := req.Get("params.tenant").Str
		task := func(state string) string {
			return `{"id":"t-A","contextId":"c-A","status":{"state":"` + state + `","timestamp":"2026-01-02T03:04:05Z"}}`
		}
		w.Header().Set("Content-Type", "application/json")
		answer := `"error":{"code":-32001,"message":"Task not found"}`
		switch {
		case tenant != "A":
		case req.Get("method").Str == "SendMessage" && req.Get("params.message.taskId").Str == "":
			answer = `"result":{"task":` + task("TASK_STATE_WORKING") + `}`
		case req.Get("method").Str == "SendMessage":
			// a2a-go v2's refusal of a message to a finished task
			answer = `"error":{"code":-32602,"message":"task t-A is in a terminal state"}`
		case req.Get("method").Str == "GetTask" && req.Get("params.id").Str == "t-A":
			answer = `"result":` + task("TASK_STATE_COMPLETED")
		}
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+req.Get("id").Raw+`,`+answer+`}`)
	})
	tg := newGateway(t, back, dialect.Version10, withAuth(t))
	alice := token(t, "alice")
	if st, _, r := restDo(t, tg, "POST", "/A/message:send", "application/json", `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}`, alice); st != http.StatusOK {
		t.Fatalf("send below tenant A: HTTP %d %s", st, r.Raw)
	}
	st, _, r := restDo(t, tg, "POST", "/A/message:send", "application/json", `{"message":{"messageId":"m2","taskId":"t-A","role":"ROLE_USER","parts":[{"text":"more"}]}}`, alice)
	if r.Get("error.details.0.reason").Str != "UNSUPPORTED_OPERATION" {
		t.Errorf("a message to a task finished unseen: HTTP %d %s", st, r.Raw)
	}
}
