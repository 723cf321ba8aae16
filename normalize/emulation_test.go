package normalize

import (
	"errors"
	"testing"
	"time"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/jsonscan"
)

func TestTaskParams(t *testing.T) {
	for _, tt := range []struct {
		op      dialect.Op
		to      dialect.ID
		history int
		want    string
	}{
		{dialect.GetTask, dialect.V10, -1, `{"id":"t\"1"}`},
		{dialect.GetTask, dialect.V10, 3, `{"id":"t\"1","historyLength":3}`},
		{dialect.GetTask, dialect.V03, 2, `{"id":"t\"1","historyLength":2}`},
		{dialect.GetTask, dialect.V03, -1, `{"id":"t\"1","historyLength":2147483647}`},
		{dialect.GetTask, dialect.V03, 0, `{"id":"t\"1","historyLength":1}`},
		{dialect.ListPushConfigs, dialect.V10, -1, `{"taskId":"t\"1"}`},
		{dialect.ListPushConfigs, dialect.V03, -1, `{"id":"t\"1"}`},
	} {
		got, err := TaskParams(tt.op, tt.to, "", `t"1`, tt.history)
		if err != nil || string(got) != tt.want {
			t.Errorf("TaskParams(%s, %s, %d) = %s, %v; want %s", tt.op, tt.to, tt.history, got, err, tt.want)
		}
	}
	if _, err := TaskParams(dialect.SendMessage, dialect.V10, "", "t", -1); err == nil {
		t.Error("TaskParams writes params for a send")
	}
	// The tenant goes to a 1.0 backend; 0.x has none.
	for to, want := range map[dialect.ID]string{dialect.V10: `{"tenant":"a\"b","id":"t"}`, dialect.V03: `{"id":"t","historyLength":2147483647}`} {
		if got, err := TaskParams(dialect.GetTask, to, `a"b`, "t", -1); err != nil || string(got) != want {
			t.Errorf("TaskParams with a tenant to %s = %s, %v; want %s", to, got, err, want)
		}
	}
}

func TestFirstPushConfig(t *testing.T) {
	for _, tt := range []struct {
		d          dialect.ID
		list, want string
	}{
		{dialect.V03, `[{"taskId":"a","pushNotificationConfig":{"url":"u"}},{"taskId":"b"}]`, `{"taskId":"a","pushNotificationConfig":{"url":"u"}}`},
		{dialect.V10, `{"configs":[{"id":"c1"},{"id":"c2"}]}`, `{"id":"c1"}`},
		{dialect.V03, `[]`, ""},
		{dialect.V10, `{"configs":[]}`, ""},
		{dialect.V10, `{}`, ""},
		{dialect.V03, `[1]`, ""},
	} {
		got, ok := FirstPushConfig(tt.d, []byte(tt.list))
		if string(got) != tt.want || ok != (tt.want != "") {
			t.Errorf("FirstPushConfig(%s, %s) = %s, %v; want %q", tt.d, tt.list, got, ok, tt.want)
		}
	}
}

func TestAppendRequest(t *testing.T) {
	if got := string(AppendRequest([]byte("x"), []byte(`"a"`), "GetTask", []byte(`{"id":"t"}`))); got != `x{"jsonrpc":"2.0","id":"a","method":"GetTask","params":{"id":"t"}}` {
		t.Errorf("AppendRequest = %s", got)
	}
	if got := string(AppendRequest(nil, nil, "GetExtendedAgentCard", nil)); got != `{"jsonrpc":"2.0","id":1,"method":"GetExtendedAgentCard"}` {
		t.Errorf("AppendRequest without id or params = %s", got)
	}
}

func TestParseAgentError(t *testing.T) {
	ae, err := ParseAgentError(dialect.V03, dialect.V10, []byte(`{"code":-32001,"message":"no such task","data":{"taskId":"t"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if ae.Code != -32001 || ae.Message != "no such task" || !Valid(ae.Object) {
		t.Errorf("ParseAgentError = %+v", ae)
	}
	if want, _ := errorObject(dialect.V03, dialect.V10, []byte(`{"code":-32001,"message":"no such task","data":{"taskId":"t"}}`)); string(ae.Object) != string(want) {
		t.Errorf("Object = %s, errorObject says %s", ae.Object, want)
	}
	var as *AgentError
	if e := AsError(ae, dialect.ErrInternal); !errors.As(e, &as) || as != ae || e.Message != "no such task" {
		t.Errorf("an AgentError wrapped in an Error is not found again: %+v", e)
	}
	if _, err := ParseAgentError(dialect.V03, dialect.V10, []byte(`{"code":"x","message":"m"}`)); err == nil {
		t.Error("an error without an integer code parses")
	}
}

func TestAgentErrorLimitMessage(t *testing.T) {
	for _, tc := range []struct {
		message string
		n       int
		want    string
	}{
		{"short", 8, "short"},
		{"exactly8", 8, "exactly8"},
		{"nine char", 8, "nine cha… (1 bytes cut)"},
		{"aéé", 4, "aé… (2 bytes cut)"}, // not inside the second é
	} {
		ae, err := ParseAgentError(dialect.V10, dialect.V10, []byte(`{"code":-32603,"message":"`+tc.message+`","data":[]}`))
		if err != nil {
			t.Fatal(err)
		}
		ae.LimitMessage(tc.n)
		if ae.Message != tc.want || jsonscan.Member(jsonscan.Parse(ae.Object), "message").Str != tc.want || !Valid(ae.Object) {
			t.Errorf("LimitMessage(%q, %d) = %q, Object %s; want %q", tc.message, tc.n, ae.Message, ae.Object, tc.want)
		}
	}
}

func TestSetContextIDAndWithoutArtifacts(t *testing.T) {
	got, err := SetContextID([]byte(`{"message":{"role":"user","parts":[]}}`), "c1")
	if err != nil || string(got) != `{"message":{"role":"user","parts":[],"contextId":"c1"}}` {
		t.Errorf("SetContextID = %s, %v", got, err)
	}
	task := []byte(`{"id":"t","artifacts":[{"artifactId":"a"}],"status":{"state":"TASK_STATE_WORKING","timestamp":"2026-01-02T03:04:05.5Z"}}`)
	got, err = WithoutArtifacts(task)
	if err != nil || string(got) != `{"id":"t","status":{"state":"TASK_STATE_WORKING","timestamp":"2026-01-02T03:04:05.5Z"}}` {
		t.Errorf("WithoutArtifacts = %s, %v", got, err)
	}
	if same, _ := WithoutArtifacts(got); &same[0] != &got[0] {
		t.Error("WithoutArtifacts copies a task that has none")
	}
	if state, ts := TaskStatus(task); state != "TASK_STATE_WORKING" || !ts.Equal(time.Date(2026, 1, 2, 3, 4, 5, 5e8, time.UTC)) {
		t.Errorf("TaskStatus = %q, %v", state, ts)
	}
	if state, ts := TaskStatus([]byte(`{"id":"t"}`)); state != "" || !ts.IsZero() {
		t.Errorf("TaskStatus of a task without status = %q, %v", state, ts)
	}
}

func TestAppendListTasksResponse(t *testing.T) {
	got := AppendListTasksResponse(nil, []byte(`7`), TaskPage{Tasks: [][]byte{[]byte(`{"id":"a"}`), []byte(`{"id":"b"}`)}, NextPageToken: "n\"x", PageSize: 2, TotalSize: 5})
	if want := `{"jsonrpc":"2.0","id":7,"result":{"tasks":[{"id":"a"},{"id":"b"}],"nextPageToken":"n\"x","pageSize":2,"totalSize":5}}`; string(got) != want {
		t.Errorf("AppendListTasksResponse = %s\nwant %s", got, want)
	}
	if got := AppendListTasksResponse(nil, []byte(`7`), TaskPage{PageSize: 50}); string(got) != `{"jsonrpc":"2.0","id":7,"result":{"tasks":[],"nextPageToken":"","pageSize":50,"totalSize":0}}` {
		t.Errorf("an empty page = %s", got)
	}
}

func TestGuessRequestDialect(t *testing.T) {
	for body, want := range map[string]dialect.ID{`{"method":"tasks/get"`: dialect.V03, `{"method":"GetTask","id":`: dialect.V10, `{"method":"x/y"}`: dialect.V03} {
		if got, ok := GuessRequestDialect([]byte(body)); !ok || got != want {
			t.Errorf("GuessRequestDialect(%s) = %v, %v", body, got, ok)
		}
	}
	if _, ok := GuessRequestDialect([]byte(`{"method":1}`)); ok {
		t.Error("a numeric method guesses a dialect")
	}
}

func TestRepeatedSnapshot(t *testing.T) {
	sent := `{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING","timestamp":"2026-01-01T00:00:00Z"},"history":[]}}`
	for _, tt := range []struct {
		name, got  string
		repeat     bool
		wantUpdate string
	}{
		{"same status", `{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING","timestamp":"2026-01-01T00:00:00Z"},"history":[{"messageId":"m"}]}}`, true, ""},
		{"newer status", `{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED","timestamp":"2026-01-01T00:00:01Z"}}}`, true,
			`{"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED","timestamp":"2026-01-01T00:00:01Z"}}}`},
		{"another task", `{"task":{"id":"t2","contextId":"c1","status":{"state":"TASK_STATE_WORKING"}}}`, false, ""},
		{"an update", `{"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING"}}}`, false, ""},
	} {
		update, repeat := RepeatedSnapshot([]byte(sent), []byte(tt.got))
		if repeat != tt.repeat || string(update) != tt.wantUpdate {
			t.Errorf("%s: RepeatedSnapshot = %s, %v; want %s, %v", tt.name, update, repeat, tt.wantUpdate, tt.repeat)
		}
	}
}
