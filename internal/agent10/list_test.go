package agent10

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/a2agate/gateway/internal/agentcore"
	"github.com/a2agate/gateway/internal/agenttest"
)

// listIDs calls ListTasks and returns the result and its task ids in order.
func listIDs(t *testing.T, a *Agent, params obj) (obj, []any) {
	t.Helper()
	res := client.ServeResult(t, a, "ListTasks", params)
	var ids []any
	for _, task := range agenttest.Path(t, res, "tasks").([]any) {
		ids = append(ids, agenttest.Path(t, task, "id"))
	}
	return res, ids
}

func TestListTasks(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		a := New(Options{})
		defer a.Close()
		// One task a second, so that the status timestamps order them.
		create := func(text, contextID string) any {
			msg := userMessage(text)
			msg["contextId"] = contextID
			res := client.ServeResult(t, a, "SendMessage", obj{"message": msg, "configuration": obj{"returnImmediately": true}})
			synctest.Wait() // the task's script has run as far as it goes
			time.Sleep(time.Second)
			return agenttest.Path(t, res, "task", "id")
		}
		t0 := create("finish", "A")
		t1 := create("input", "B")
		t2 := create("fail", "A")
		t3 := create("finish", "B")
		t4 := create("wait", "A")

		res, ids := listIDs(t, a, obj{})
		agenttest.WantJSON(t, "all", ids, []any{t4, t3, t2, t1, t0})
		agenttest.WantJSON(t, "sizes", []any{res["pageSize"], res["totalSize"], res["nextPageToken"]}, []any{50, 5, ""})
		for _, task := range agenttest.Path(t, res, "tasks").([]any) {
			if _, ok := task.(obj)["artifacts"]; ok {
				t.Fatal("artifacts listed without includeArtifacts")
			}
			agenttest.Path(t, task, "history") // kept when historyLength is unset
		}
		res, _ = listIDs(t, a, obj{"includeArtifacts": true, "historyLength": 0})
		if agenttest.Str(t, res, "tasks", 1, "artifacts", 0, "name") != "result" {
			t.Fatal("includeArtifacts did not include the artifacts")
		}
		if _, ok := agenttest.Path(t, res, "tasks", 1).(obj)["history"]; ok {
			t.Fatal("historyLength 0 kept the history")
		}

		_, ids = listIDs(t, a, obj{"contextId": "A"})
		agenttest.WantJSON(t, "context A", ids, []any{t4, t2, t0})
		res, ids = listIDs(t, a, obj{"status": "TASK_STATE_COMPLETED"})
		agenttest.WantJSON(t, "completed", ids, []any{t3, t0})
		agenttest.WantJSON(t, "completed total", res["totalSize"], 2)
		_, ids = listIDs(t, a, obj{"status": "TASK_STATE_WORKING", "contextId": "A"})
		agenttest.WantJSON(t, "working in A", ids, []any{t4})
		_, ids = listIDs(t, a, obj{"statusTimestampAfter": "2000-01-01T00:00:02.000Z"})
		agenttest.WantJSON(t, "since t2", ids, []any{t4, t3, t2})
		_, ids = listIDs(t, a, obj{"statusTimestampAfter": "2000-01-01T02:00:02+02:00"})
		agenttest.WantJSON(t, "since t2, other offset", ids, []any{t4, t3, t2})

		// Pages of two, stable even when a task is created between calls.
		res, ids = listIDs(t, a, obj{"pageSize": 2})
		agenttest.WantJSON(t, "page 1", ids, []any{t4, t3})
		agenttest.WantJSON(t, "page 1 sizes", []any{res["pageSize"], res["totalSize"]}, []any{2, 5})
		create("late", "C")
		res, ids = listIDs(t, a, obj{"pageSize": 2, "pageToken": res["nextPageToken"]})
		agenttest.WantJSON(t, "page 2", ids, []any{t2, t1})
		res, ids = listIDs(t, a, obj{"pageSize": 2, "pageToken": res["nextPageToken"]})
		agenttest.WantJSON(t, "page 3", ids, []any{t0})
		if res["nextPageToken"] != "" {
			t.Fatalf("last page nextPageToken = %v, want \"\"", res["nextPageToken"])
		}

		for _, params := range []obj{
			{"pageSize": 0}, {"pageSize": 101}, {"status": "completed"}, {"pageToken": "bogus"},
			{"statusTimestampAfter": "yesterday"}, {"historyLength": -1}, {"includeArtifacts": "yes"},
		} {
			var out struct{ Error obj }
			body := client.Serve(t, a, "ListTasks", params)
			if err := jsonUnmarshal(body, &out); err != nil || out.Error == nil {
				t.Fatalf("ListTasks %v = %s, want an error", params, body)
			}
			if out.Error["code"] != float64(agentcore.CodeInvalidParams) {
				t.Fatalf("ListTasks %v: code %v, want -32602", params, out.Error["code"])
			}
		}
	})
}

func TestListTasksEmpty(t *testing.T) {
	srv := parallelAgent(t)
	agenttest.WantJSON(t, "empty", client.Call(t, srv, "ListTasks", obj{}), obj{"tasks": []any{}, "nextPageToken": "", "pageSize": 50, "totalSize": 0})
}
