package normalize

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/jsonscan"
)

// preserved is a metadata value written the way no encoder would write it:
// escaped Unicode and solidus, an integer beyond float64, exponent and
// trailing-zero numbers, negative zero and odd whitespace. Translation edits
// paths and must carry such subtrees byte for byte.
const preserved = `{"s":"caf\u00e9 \ud83d\ude00 \"q\" \/","big":123456789012345678901234567890,"e":1e3,"f":1.50,"neg":-0.0,"ws":[ 1 ,	2 ,
 {"a" :null} ]}`

func TestTranslationPreservesUntouchedBytes(t *testing.T) {
	t.Parallel()
	dataV03 := `{"kind":"data","data":` + preserved + `,"metadata":` + preserved + `}`
	dataV10 := `{"data":` + preserved + `,"metadata":` + preserved + `}`
	tests := []struct {
		name      string
		translate func(in []byte) ([]byte, error)
		in        string
		// count is how many times preserved must appear in the output.
		count int
	}{
		{
			name: "request 0.x to 1.0",
			translate: func(in []byte) ([]byte, error) {
				out, _, err := Params(dialect.SendMessage, dialect.V03, dialect.V10, in)
				return out, err
			},
			in: `{"message":{"kind":"message","messageId":"m1","role":"user","metadata":` + preserved +
				`,"parts":[` + dataV03 + `,{"kind":"text","text":"x","metadata":` + preserved + `}]},"metadata":` + preserved + `}`,
			count: 5,
		},
		{
			name: "request 1.0 to 0.x",
			translate: func(in []byte) ([]byte, error) {
				out, _, err := Params(dialect.SendMessage, dialect.V10, dialect.V03, in)
				return out, err
			},
			in:    `{"message":{"messageId":"m1","role":"ROLE_USER","metadata":` + preserved + `,"parts":[` + dataV10 + `]},"metadata":` + preserved + `}`,
			count: 4,
		},
		{
			name: "task result 1.0 to 0.x",
			translate: func(in []byte) ([]byte, error) {
				return Result(dialect.GetTask, dialect.V10, dialect.V03, in)
			},
			in: `{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING"},"metadata":` + preserved +
				`,"artifacts":[{"artifactId":"a1","metadata":` + preserved + `,"parts":[` + dataV10 + `]}]}`,
			count: 4,
		},
		{
			name: "stream event 0.x to 1.0",
			translate: func(in []byte) ([]byte, error) {
				return Event(dialect.V03, dialect.V10, in, false)
			},
			in: `{"kind":"artifact-update","taskId":"t1","contextId":"c1","metadata":` + preserved +
				`,"artifact":{"artifactId":"a1","parts":[` + dataV03 + `]}}`,
			count: 3,
		},
		{
			name: "error 1.0 to 0.x",
			translate: func(in []byte) ([]byte, error) {
				return errorObject(dialect.V10, dialect.V03, in)
			},
			in:    `{"code":-32001,"message":"Task not found","data":[{"@type":"` + dialect.ErrorInfoType + `","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org","metadata":` + preserved + `}]}`,
			count: 1,
		},
		{
			name: "unknown members 0.x to 1.0",
			translate: func(in []byte) ([]byte, error) {
				return Result(dialect.GetTask, dialect.V03, dialect.V10, in)
			},
			in:    `{"kind":"task","id":"t1","contextId":"c1","status":{"state":"working","x-ext":` + preserved + `},"x-ext":` + preserved + `}`,
			count: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if !json.Valid([]byte(tt.in)) {
				t.Fatalf("test input is not JSON: %s", tt.in)
			}
			out, err := tt.translate([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if got := bytes.Count(out, []byte(preserved)); got != tt.count {
				t.Errorf("preserved subtree appears %d times in the output, want %d:\n%s", got, tt.count, out)
			}
			if !json.Valid(out) {
				t.Errorf("output is not valid JSON:\n%s", out)
			}
		})
	}
}

func TestTranslationKeepsNonASCIIText(t *testing.T) {
	t.Parallel()
	in := []byte(`{"message":{"kind":"message","messageId":"m-é","role":"user","parts":[{"kind":"text","text":"日本語 \u65e5 \"quoted\"\n"}]}}`)
	out, _, err := Params(dialect.SendMessage, dialect.V03, dialect.V10, in)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"m-é"`, `"日本語 \u65e5 \"quoted\"\n"`} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("output lost %s:\n%s", want, out)
		}
	}
}

func TestParamsRequestInfo(t *testing.T) {
	t.Parallel()
	msg03 := `"message":{"kind":"message","messageId":"m1","role":"user","taskId":"t1","contextId":"c1","metadata":{"skillId":"from-message"},"parts":[{"kind":"text","text":"x"}]}`
	msg10 := `"message":{"messageId":"m1","role":"ROLE_USER","contextId":"c1","parts":[{"text":"x"}]}`
	tests := []struct {
		name   string
		op     dialect.Op
		from   dialect.ID
		params string
		want   RequestInfo
	}{
		{"send 1.0 with references", dialect.SendMessage, dialect.V10, `{"message":{"messageId":"m1","role":"ROLE_USER","referenceTaskIds":["r1","r\"2"],"parts":[{"text":"hi"}]}}`,
			RequestInfo{MessageID: "m1", Blocking: true, ReferenceTaskIDs: []string{"r1", `r"2`}}},
		{"send 0.x defaults", dialect.SendMessage, dialect.V03, `{` + msg03 + `}`,
			RequestInfo{MessageID: "m1", TaskID: "t1", ContextID: "c1", SkillID: "from-message", Blocking: true}},
		{"send 0.x blocking false", dialect.SendMessage, dialect.V03, `{` + msg03 + `,"configuration":{"blocking":false,"historyLength":4}}`,
			RequestInfo{MessageID: "m1", TaskID: "t1", ContextID: "c1", SkillID: "from-message", HistoryLength: 4, HasHistoryLength: true}},
		{"send 0.x historyLength 0 means all", dialect.SendMessage, dialect.V03, `{` + msg03 + `,"configuration":{"historyLength":0}}`,
			RequestInfo{MessageID: "m1", TaskID: "t1", ContextID: "c1", SkillID: "from-message", Blocking: true}},
		{"send 1.0 historyLength 0 means none", dialect.SendMessage, dialect.V10, `{` + msg10 + `,"configuration":{"historyLength":0}}`,
			RequestInfo{MessageID: "m1", ContextID: "c1", Blocking: true, HasHistoryLength: true}},
		{"send 1.0 returnImmediately", dialect.SendMessage, dialect.V10, `{` + msg10 + `,"configuration":{"returnImmediately":true}}`,
			RequestInfo{MessageID: "m1", ContextID: "c1"}},
		{"send 1.0 params.return_immediately", dialect.SendMessage, dialect.V10, `{` + msg10 + `,"return_immediately":true,"metadata":{"skillId":"from-params"}}`,
			RequestInfo{MessageID: "m1", ContextID: "c1", SkillID: "from-params"}},
		{"stream 1.0 returnImmediately false", dialect.SendStreamingMessage, dialect.V10, `{` + msg10 + `,"configuration":{"returnImmediately":false}}`,
			RequestInfo{MessageID: "m1", ContextID: "c1", Blocking: true}},
		{"get 0.x", dialect.GetTask, dialect.V03, `{"id":"t1","historyLength":2}`,
			RequestInfo{TaskID: "t1", HistoryLength: 2, HasHistoryLength: true}},
		{"get 0.x historyLength 0", dialect.GetTask, dialect.V03, `{"id":"t1","historyLength":0}`,
			RequestInfo{TaskID: "t1"}},
		{"get 1.0 historyLength 0", dialect.GetTask, dialect.V10, `{"id":"t1","historyLength":0}`,
			RequestInfo{TaskID: "t1", HasHistoryLength: true}},
		{"get 1.0 historyLength null", dialect.GetTask, dialect.V10, `{"id":"t1","historyLength":null}`,
			RequestInfo{TaskID: "t1"}},
		{"cancel", dialect.CancelTask, dialect.V10, `{"id":"t2"}`, RequestInfo{TaskID: "t2"}},
		{"subscribe", dialect.SubscribeToTask, dialect.V03, `{"id":"t3"}`, RequestInfo{TaskID: "t3"}},
		{"push set 0.x", dialect.CreatePushConfig, dialect.V03, `{"taskId":"t1","pushNotificationConfig":{"url":"https://h.example"}}`,
			RequestInfo{TaskID: "t1"}},
		{"push set 1.0 snake", dialect.CreatePushConfig, dialect.V10, `{"task_id":"t1","url":"https://h.example"}`,
			RequestInfo{TaskID: "t1"}},
		{"push get 0.x", dialect.GetPushConfig, dialect.V03, `{"id":"t1","pushNotificationConfigId":"c1"}`,
			RequestInfo{TaskID: "t1", PushConfigID: "c1"}},
		{"push get 0.2.5 any config", dialect.GetPushConfig, dialect.V03, `{"id":"t1"}`,
			RequestInfo{TaskID: "t1"}},
		{"push delete 1.0", dialect.DeletePushConfig, dialect.V10, `{"taskId":"t1","id":"c1"}`,
			RequestInfo{TaskID: "t1", PushConfigID: "c1"}},
		{"push list 1.0", dialect.ListPushConfigs, dialect.V10, `{"taskId":"t1"}`, RequestInfo{TaskID: "t1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, to := range []dialect.ID{dialect.V03, dialect.V10} {
				_, got, err := Params(tt.op, tt.from, to, []byte(tt.params))
				if err != nil {
					t.Fatalf("to %s: %v", to, err)
				}
				if !reflect.DeepEqual(got, tt.want) {
					t.Errorf("to %s: RequestInfo mismatch\nwant %+v\n got %+v", to, tt.want, got)
				}
			}
		})
	}
}

func TestParamsRefusesListTasksToV03(t *testing.T) {
	t.Parallel()
	_, _, err := Params(dialect.ListTasks, dialect.V10, dialect.V03, []byte(`{}`))
	checkKind(t, err, dialect.ErrUnsupportedOperation)
}

func TestExtendedCardParams(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		from   dialect.ID
		to     dialect.ID
		params string // "" for absent
		want   string // "" for no params
	}{
		{"0.3 none to 1.0", dialect.V03, dialect.V10, "", `{}`},
		{"0.3 null to 1.0", dialect.V03, dialect.V10, "null", `{}`},
		{"1.0 tenant to 0.3", dialect.V10, dialect.V03, `{"tenant":"a"}`, ""},
		{"1.0 extra members carried", dialect.V10, dialect.V10, `{"tenant":"a","x":1}`, `{"tenant":"a","x":1}`},
		{"0.3 empty to 1.0", dialect.V03, dialect.V10, `{}`, `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var in []byte
			if tt.params != "" {
				in = []byte(tt.params)
			}
			got, _, err := Params(dialect.GetExtendedCard, tt.from, tt.to, in)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	if _, _, err := Params(dialect.GetExtendedCard, dialect.V10, dialect.V10, []byte(`[]`)); err == nil {
		t.Error("array params accepted")
	}
	// 0.x has no params for the call: a member besides the tenant would be lost.
	if _, _, err := Params(dialect.GetExtendedCard, dialect.V10, dialect.V03, []byte(`{"tenant":"a","x":1}`)); err == nil || !strings.Contains(err.Error(), `"x"`) {
		t.Errorf("a member 0.x has no place for: %v", err)
	}
	if _, _, err := Params(dialect.GetExtendedCard, dialect.V10, dialect.V10, []byte(`{"tenant":"a","Tenant":"b"}`)); err == nil {
		t.Error("a tenant twice, in two cases, accepted")
	}
}

func TestParseRequestErrorKinds(t *testing.T) {
	t.Parallel()
	// The body's own objects nest 2 deep around x: jsonscan.MaxDepth-1 arrays make
	// it one level too deep.
	deep := strings.Repeat("[", jsonscan.MaxDepth-1) + strings.Repeat("]", jsonscan.MaxDepth-1)
	longID := `"` + strings.Repeat("x", maxIDBytes) + `"`
	tests := []struct {
		name        string
		body        string
		kind        dialect.ErrorKind
		wantID      string
		wantDialect dialect.ID
	}{
		{"empty body", "", dialect.ErrParse, "", 0},
		{"not JSON", `{"jsonrpc":`, dialect.ErrParse, "", 0},
		{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"GetTask\",\"params\":{\"id\":\"\xff\"}}", dialect.ErrParse, "", 0},
		{"too deep", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t","x":` + deep + `}}`, dialect.ErrParse, "", 0},
		{"string body", `"hi"`, dialect.ErrInvalidRequest, "", 0},
		{"id too long", `{"jsonrpc":"2.0","id":` + longID + `,"method":"GetTask","params":{"id":"t"}}`, dialect.ErrInvalidRequest, "", dialect.V10},
		{"unknown 0.x-looking method keeps id and dialect", `{"jsonrpc":"2.0","id":5,"method":"tasks/frob","params":{}}`, dialect.ErrMethodNotFound, "5", dialect.V03},
		{"unknown 1.0-looking method", `{"jsonrpc":"2.0","id":"a","method":"Frob","params":{}}`, dialect.ErrMethodNotFound, `"a"`, dialect.V10},
		{"method not a string", `{"jsonrpc":"2.0","id":1,"method":5,"params":{}}`, dialect.ErrInvalidRequest, "1", 0},
		{"params a string", `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":"t1"}`, dialect.ErrInvalidParams, "1", dialect.V03},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env, err := ParseRequest([]byte(tt.body))
			checkKind(t, err, tt.kind)
			if string(env.ID) != tt.wantID || env.Dialect != tt.wantDialect {
				t.Errorf("envelope id %q dialect %s, want %q %s", env.ID, env.Dialect, tt.wantID, tt.wantDialect)
			}
		})
	}
}

func TestParseRequestAcceptsEdgeShapes(t *testing.T) {
	t.Parallel()
	maxID := `"` + strings.Repeat("x", maxIDBytes-2) + `"`
	// root, params and metadata nest 3 deep: exactly jsonscan.MaxDepth in all.
	nested := strings.Repeat("[", jsonscan.MaxDepth-3) + strings.Repeat("]", jsonscan.MaxDepth-3)
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":` + maxID + `,"method":"GetTask","params":{"id":"t"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"CancelTask","params":{"id":"t","metadata":{"x":` + nested + `}}}`,
		`{"jsonrpc":"2.0","id":-1.5e3,"method":"GetExtendedAgentCard"}`,
		`{"jsonrpc":"2.0","id":1,"method":"GetExtendedAgentCard","params":null}`,
		"\n\t {\"params\":{\"id\":\"t\"},\"method\":\"tasks/get\",\"id\":\"\",\"jsonrpc\":\"2.0\"} \r\n",
	} {
		if _, err := ParseRequest([]byte(body)); err != nil {
			t.Errorf("%.60s...: %v", body, err)
		}
	}
}

func TestResultErrorsAreInvalidAgentResponse(t *testing.T) {
	t.Parallel()
	for _, op := range dialect.Ops {
		if op == dialect.GetExtendedCard {
			continue // cards are the card translator's business
		}
		_, err := Result(op, dialect.V10, dialect.V03, []byte(`"nonsense"`))
		var e *Error
		if !errors.As(err, &e) || e.Kind != dialect.ErrInvalidAgentResponse {
			t.Errorf("%s: want InvalidAgentResponse, got %v", op, err)
		}
	}
	_, err := Event(dialect.V03, dialect.V10, []byte(`{}`), false)
	checkKind(t, err, dialect.ErrInvalidAgentResponse)
}

func TestEventFinalFlag(t *testing.T) {
	t.Parallel()
	in := []byte(`{"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_INPUT_REQUIRED"}}}`)
	for _, final := range []bool{true, false} {
		out, err := Event(dialect.V10, dialect.V03, in, final)
		if err != nil {
			t.Fatal(err)
		}
		info, err := Inspect(out)
		if err != nil {
			t.Fatal(err)
		}
		if !info.HasFinal || info.Final != final {
			t.Errorf("final=%v: output says HasFinal=%v Final=%v: %s", final, info.HasFinal, info.Final, out)
		}
	}
	// A 0.x flag already present wins over the caller's default.
	out, err := Event(dialect.V03, dialect.V03, []byte(`{"kind":"status-update","taskId":"t1","contextId":"c1","status":{"state":"working"},"final":false}`), true)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out, []byte(`"final":false`)) {
		t.Errorf("explicit final overwritten: %s", out)
	}
}

func TestInspect(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want EventInfo
	}{
		{"0.x task", `{"kind":"task","id":"t1","contextId":"c1","status":{"state":"completed"}}`,
			EventInfo{Kind: KindTask, TaskID: "t1", ContextID: "c1", State: "TASK_STATE_COMPLETED"}},
		{"1.0 task", `{"task":{"id":"t1","context_id":"c1","status":{"state":"TASK_STATE_WORKING"}}}`,
			EventInfo{Kind: KindTask, TaskID: "t1", ContextID: "c1", State: "TASK_STATE_WORKING"}},
		{"0.x message", `{"kind":"message","messageId":"m","role":"agent","taskId":"t1","parts":[]}`,
			EventInfo{Kind: KindMessage, TaskID: "t1"}},
		{"1.0 message", `{"message":{"messageId":"m","role":"ROLE_AGENT","contextId":"c9","parts":[]}}`,
			EventInfo{Kind: KindMessage, ContextID: "c9"}},
		{"0.x status final", `{"kind":"status-update","taskId":"t1","contextId":"c1","status":{"state":"input-required"},"final":true}`,
			EventInfo{Kind: KindStatusUpdate, TaskID: "t1", ContextID: "c1", State: "TASK_STATE_INPUT_REQUIRED", Final: true, HasFinal: true}},
		{"1.0 status", `{"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_AUTH_REQUIRED"}}}`,
			EventInfo{Kind: KindStatusUpdate, TaskID: "t1", ContextID: "c1", State: "TASK_STATE_AUTH_REQUIRED"}},
		{"1.0 status snake", `{"status_update":{"task_id":"t1","status":{"state":5}}}`,
			EventInfo{Kind: KindStatusUpdate, TaskID: "t1", State: "TASK_STATE_CANCELED"}},
		{"0.x artifact", `{"kind":"artifact-update","taskId":"t1","contextId":"c1","artifact":{}}`,
			EventInfo{Kind: KindArtifactUpdate, TaskID: "t1", ContextID: "c1"}},
		{"1.0 artifact", `{"artifactUpdate":{"taskId":"t1","contextId":"c1","artifact":{}}}`,
			EventInfo{Kind: KindArtifactUpdate, TaskID: "t1", ContextID: "c1"}},
		{"unknown state reads empty", `{"kind":"task","id":"t1","status":{"state":"paused"}}`,
			EventInfo{Kind: KindTask, TaskID: "t1"}},
		{"0.x timestamp with an offset", `{"kind":"task","id":"t1","status":{"state":"working","timestamp":"2025-03-01T12:00:00.5+02:00"}}`,
			EventInfo{Kind: KindTask, TaskID: "t1", State: "TASK_STATE_WORKING", Timestamp: time.Date(2025, 3, 1, 10, 0, 0, 5e8, time.UTC)}},
		{"1.0 status timestamp", `{"statusUpdate":{"taskId":"t1","status":{"state":"TASK_STATE_WORKING","timestamp":"2025-03-01T10:00:00Z"}}}`,
			EventInfo{Kind: KindStatusUpdate, TaskID: "t1", State: "TASK_STATE_WORKING", Timestamp: time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)}},
		{"a timestamp that is no date-time reads zero", `{"kind":"task","id":"t1","status":{"state":"working","timestamp":"yesterday"}}`,
			EventInfo{Kind: KindTask, TaskID: "t1", State: "TASK_STATE_WORKING"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Inspect([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("want %+v\n got %+v", tt.want, got)
			}
		})
	}
	for _, bad := range []string{`[]`, `{}`, `{"kind":"progress"}`, `{"task":{},"message":{}}`, `{"taskStatusUpdate":{}}`} {
		if _, err := Inspect([]byte(bad)); err == nil {
			t.Errorf("Inspect(%s) accepted", bad)
		}
	}
}

// TestAppendResultInfo holds the info read during a result's translation to what
// Inspect reads on its own, and counts the history the gateway trims.
func TestAppendResultInfo(t *testing.T) {
	t.Parallel()
	tests := []struct {
		op       dialect.Op
		from, to dialect.ID
		in       string
		want     EventInfo
	}{
		{dialect.SendMessage, dialect.V10, dialect.V03, `{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING"},"history":[` +
			`{"messageId":"a","role":"ROLE_USER","parts":[{"text":"x"}]},{"messageId":"b","role":"ROLE_AGENT","parts":[{"text":"y"}]}]}}`,
			EventInfo{Kind: KindTask, TaskID: "t1", ContextID: "c1", State: "TASK_STATE_WORKING", History: 2, HasHistory: true}},
		{dialect.SendMessage, dialect.V03, dialect.V10, `{"kind":"task","id":"t1","contextId":"c1","status":{"state":"completed"},"history":[]}`,
			EventInfo{Kind: KindTask, TaskID: "t1", ContextID: "c1", State: "TASK_STATE_COMPLETED", HasHistory: true}},
		{dialect.SendMessage, dialect.V03, dialect.V03, `{"kind":"message","messageId":"m","role":"agent","contextId":"c1","parts":[{"kind":"text","text":"hi"}]}`,
			EventInfo{Kind: KindMessage, ContextID: "c1"}},
		{dialect.GetTask, dialect.V10, dialect.V10, `{"id":"t1","status":{"state":"TASK_STATE_FAILED"}}`,
			EventInfo{Kind: KindTask, TaskID: "t1", State: "TASK_STATE_FAILED"}},
		{dialect.CancelTask, dialect.V03, dialect.V10, `{"kind":"task","id":"t1","contextId":"c1","status":{"state":"canceled"},"history":[{"kind":"message","messageId":"a","role":"user","parts":[{"kind":"text","text":"x"}]}]}`,
			EventInfo{Kind: KindTask, TaskID: "t1", ContextID: "c1", State: "TASK_STATE_CANCELED", History: 1, HasHistory: true}},
		{dialect.GetPushConfig, dialect.V10, dialect.V10, `{"taskId":"t1","id":"p","url":"https://x.example/hook"}`, EventInfo{}},
		{dialect.SendMessage, dialect.V03, dialect.V03, `{"kind":"task","id":"t1","status":{"state":"working","timestamp":"2025-03-01T10:00:00"}}`,
			EventInfo{Kind: KindTask, TaskID: "t1", State: "TASK_STATE_WORKING", Timestamp: time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)}},
		{dialect.GetTask, dialect.V03, dialect.V10, `{"kind":"task","id":"t1","status":{"state":"working","timestamp":"2025-03-01T12:00:00+02:00"}}`,
			EventInfo{Kind: KindTask, TaskID: "t1", State: "TASK_STATE_WORKING", Timestamp: time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)}},
	}
	for _, tt := range tests {
		out, got, err := appendResult(nil, tt.op, tt.from, tt.to, []byte(tt.in), nil)
		if err != nil {
			t.Fatalf("%s %s: %v", tt.op, tt.in, err)
		}
		if got != tt.want {
			t.Errorf("%s %s:\nwant %+v\n got %+v", tt.op, tt.in, tt.want, got)
		}
		if want, _ := Result(tt.op, tt.from, tt.to, []byte(tt.in)); string(out) != string(want) {
			t.Errorf("%s: AppendResult wrote %s, Result %s", tt.op, out, want)
		}
		if tt.op == dialect.SendMessage {
			alone, _ := Inspect([]byte(tt.in))
			alone.History, alone.HasHistory = got.History, got.HasHistory
			if alone != got {
				t.Errorf("%s: Inspect reads %+v, AppendResult %+v", tt.in, alone, got)
			}
		}
	}
}

func TestKindString(t *testing.T) {
	t.Parallel()
	want := map[Kind]string{KindNone: "none", KindTask: "task", KindMessage: "message", KindStatusUpdate: "status_update", KindArtifactUpdate: "artifact_update"}
	for k, s := range want {
		if k.String() != s {
			t.Errorf("Kind(%d).String() = %q, want %q", k, k.String(), s)
		}
	}
}

func TestAppendError(t *testing.T) {
	t.Parallel()
	withMeta := &Error{Kind: dialect.ErrTaskNotFound, Message: "task t9 not found", Metadata: []KV{{"taskId", "t9"}, {"q", `a"b`}}}
	tests := []struct {
		name string
		d    dialect.ID
		e    *Error
		want string
	}{
		{"1.0 with metadata", dialect.V10, withMeta,
			`{"code":-32001,"message":"task t9 not found","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org","metadata":{"taskId":"t9","q":"a\"b"}}]}`},
		{"0.x with metadata", dialect.V03, withMeta,
			`{"code":-32001,"message":"task t9 not found","data":{"taskId":"t9","q":"a\"b"}}`},
		{"1.0 default message", dialect.V10, &Error{Kind: dialect.ErrVersionNotSupported},
			`{"code":-32009,"message":"Protocol version not supported","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"VERSION_NOT_SUPPORTED","domain":"a2a-protocol.org"}]}`},
		{"0.x without metadata has no data", dialect.V03, Errorf(dialect.ErrInvalidParams, "bad <%s>", "x"),
			`{"code":-32602,"message":"bad \u003cx\u003e"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := AppendError([]byte("prefix:"), tt.d, tt.e)
			if string(got) != "prefix:"+tt.want {
				t.Errorf("got  %s\nwant prefix:%s", got, tt.want)
			}
			// What the gateway raises must read back through its own translator.
			if _, err := errorObject(tt.d, tt.d, got[len("prefix:"):]); err != nil {
				t.Errorf("errorObject rejects AppendError output: %v", err)
			}
		})
	}
}

func TestErrorObjectRoundTrip(t *testing.T) {
	t.Parallel()
	for _, row := range dialect.ErrorCodes {
		e := &Error{Kind: row.Kind, Metadata: []KV{{"k", "v"}}}
		v03 := AppendError(nil, dialect.V03, e)
		v10, err := errorObject(dialect.V03, dialect.V10, v03)
		if err != nil {
			t.Fatal(err)
		}
		if want := AppendError(nil, dialect.V10, e); !jsonEqual(v10, want) {
			t.Errorf("%s: 0.x to 1.0\n got %s\nwant %s", row.Reason, v10, want)
		}
		back, err := errorObject(dialect.V10, dialect.V03, v10)
		if err != nil {
			t.Fatal(err)
		}
		if !jsonEqual(back, v03) {
			t.Errorf("%s: round trip\n got %s\nwant %s", row.Reason, back, v03)
		}
	}
}

// TestErrorObjectUnknownCodeGetsErrorInfo: a backend's error of a code no
// dialect defines, without data, reaches a 1.0 caller with an ErrorInfo
// (reason UNKNOWN), as one with data does, from either dialect; its code
// and message are kept. A 0.x caller's passes as it is, and so does a
// known code's, whose code names its kind.
func TestErrorObjectUnknownCodeGetsErrorInfo(t *testing.T) {
	t.Parallel()
	const unknown = `{"code":-32099,"message":"quota exceeded"}`
	want := `{"code":-32099,"message":"quota exceeded","data":[{"@type":"` + dialect.ErrorInfoType + `","reason":"UNKNOWN","domain":"` + dialect.Domain + `"}]}`
	for _, from := range []dialect.ID{dialect.V03, dialect.V10} {
		got, err := errorObject(from, dialect.V10, []byte(unknown))
		if err != nil || !jsonEqual(got, []byte(want)) {
			t.Errorf("%s to 1.0: %s, %v; want %s", from, got, err, want)
		}
		if got, _ := errorObject(from, dialect.V03, []byte(unknown)); string(got) != unknown {
			t.Errorf("%s to 0.x: %s, want it as it is", from, got)
		}
	}
	known := `{"code":-32001,"message":"Task not found"}`
	if got, _ := errorObject(dialect.V03, dialect.V10, []byte(known)); string(got) != known {
		t.Errorf("a known code without data: %s, want it as it is", got)
	}
}

// TestErrorObjectMetadataKeysOnce: a 0.x error's data object that repeats
// a key becomes ErrorInfo metadata (a map) with the key once, its first
// value. Before, the key went out twice: a map ProtoJSON parsers refuse,
// and that others read with the last value.
func TestErrorObjectMetadataKeysOnce(t *testing.T) {
	t.Parallel()
	got, err := errorObject(dialect.V03, dialect.V10, []byte(`{"code":-32001,"message":"x","data":{"taskId":"a","n":2,"taskId":"b"}}`))
	want := `{"code":-32001,"message":"x","data":[{"@type":"` + dialect.ErrorInfoType + `","reason":"TASK_NOT_FOUND","domain":"` + dialect.Domain + `","metadata":{"taskId":"a","n":"2"}}]}`
	if err != nil || string(got) != want {
		t.Fatalf("got %s, %v\nwant %s", got, err, want)
	}
}

func TestParseReply(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		body       string
		wantID     string
		wantResult string
		wantError  string
		wantErr    bool
	}{
		{"result", `{"jsonrpc":"2.0","id":"r1","result":{"kind":"task"}}`, `"r1"`, `{"kind":"task"}`, "", false},
		{"null result", `{"jsonrpc":"2.0","id":1,"result":null}`, "1", "null", "", false},
		{"no result (Go 1.0 empty)", `{"jsonrpc":"2.0","id":1}`, "1", "null", "", false},
		{"error", `{"jsonrpc":"2.0","id":2,"error":{"code":-32001,"message":"x"}}`, "2", "", `{"code":-32001,"message":"x"}`, false},
		{"both", `{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1}}`, "", "", "", true},
		{"not 2.0", `{"jsonrpc":"1.0","id":1,"result":{}}`, "", "", "", true},
		{"error without code", `{"jsonrpc":"2.0","id":1,"error":{"message":"x"}}`, "", "", "", true},
		{"duplicate result", `{"jsonrpc":"2.0","id":1,"result":{},"result":[]}`, "", "", "", true},
		{"case smuggled error", `{"jsonrpc":"2.0","id":1,"result":{},"Error":{"code":1}}`, "", "", "", true},
		{"not JSON", `{"jsonrpc":"2.0"`, "", "", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, err := ParseReply([]byte(tt.body))
			if tt.wantErr {
				checkKind(t, err, dialect.ErrInvalidAgentResponse)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(r.ID) != tt.wantID || string(r.Result) != tt.wantResult || string(r.Error) != tt.wantError {
				t.Errorf("got id %s result %s error %s", r.ID, r.Result, r.Error)
			}
		})
	}
}

func TestAppendResponses(t *testing.T) {
	t.Parallel()
	if got := string(AppendResultResponse(nil, []byte(`"a"`), []byte(`{}`))); got != `{"jsonrpc":"2.0","id":"a","result":{}}` {
		t.Errorf("AppendResult: %s", got)
	}
	if got := string(AppendErrorResponse(nil, nil, []byte(`{"code":-32700,"message":"x"}`))); got != `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}` {
		t.Errorf("AppendErrorResponse: %s", got)
	}
}

func TestTrimHistory(t *testing.T) {
	t.Parallel()
	hist := `[{"messageId":"1"},{"messageId":"2"},{"messageId":"3"}]`
	task03 := `{"kind":"task","id":"t","history":` + hist + `,"metadata":{"a":1}}`
	send10 := `{"task":{"id":"t","history":` + hist + `}}`
	tests := []struct {
		name string
		op   dialect.Op
		d    dialect.ID
		in   string
		n    int
		want string
		same bool // the input comes back uncopied
	}{
		{"keeps last n", dialect.GetTask, dialect.V03, task03, 2, `{"kind":"task","id":"t","history":[{"messageId":"2"},{"messageId":"3"}],"metadata":{"a":1}}`, false},
		{"zero removes history", dialect.GetTask, dialect.V03, task03, 0, `{"kind":"task","id":"t","metadata":{"a":1}}`, false},
		{"1.0 send result path", dialect.SendMessage, dialect.V10, send10, 1, `{"task":{"id":"t","history":[{"messageId":"3"}]}}`, false},
		{"1.0 send zero", dialect.SendMessage, dialect.V10, send10, 0, `{"task":{"id":"t"}}`, false},
		{"already short", dialect.GetTask, dialect.V10, task03, 3, task03, true},
		{"no history", dialect.GetTask, dialect.V10, `{"id":"t"}`, 0, `{"id":"t"}`, true},
		{"message result", dialect.SendMessage, dialect.V10, `{"message":{"messageId":"m"}}`, 0, `{"message":{"messageId":"m"}}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := []byte(tt.in)
			got, err := TrimHistory(tt.op, tt.d, in, tt.n)
			if err != nil {
				t.Fatal(err)
			}
			if !jsonEqual(got, []byte(tt.want)) {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
			if tt.same != sameSlice(in, got) {
				t.Errorf("same slice = %v, want %v", !tt.same, tt.same)
			}
			if string(in) != tt.in {
				t.Errorf("input modified: %s", in)
			}
		})
	}
}

func TestParseListTasks(t *testing.T) {
	t.Parallel()
	q, err := ParseListTasks(nil)
	if err != nil || q != (ListQuery{PageSize: ListTasksDefaultPageSize}) {
		t.Fatalf("defaults: %+v, %v", q, err)
	}
	q, err = ParseListTasks([]byte(`{"context_id":"c","status":"input-required","page_size":"7","pageToken":"p","historyLength":0,
		"statusTimestampAfter":"2025-01-01T02:00:00+02:00","include_artifacts":true}`))
	want := ListQuery{ContextID: "c", State: "TASK_STATE_INPUT_REQUIRED", PageSize: 7, PageToken: "p", HasHistoryLength: true,
		UpdatedAfter: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), IncludeArtifacts: true}
	if err != nil || q != want {
		t.Fatalf("got %+v, %v\nwant %+v", q, err, want)
	}
	if q.UpdatedAfter.Location() != time.UTC {
		t.Errorf("UpdatedAfter is not UTC: %v", q.UpdatedAfter)
	}
	if q, err = ParseListTasks([]byte(`{"status":"TASK_STATE_UNSPECIFIED"}`)); err != nil || q.State != "" {
		t.Errorf("UNSPECIFIED must mean any state: %+v, %v", q, err)
	}
	for _, bad := range []string{
		`{"pageSize":101}`, `{"pageSize":0}`, `{"pageSize":1.5}`, `{"historyLength":-1}`,
		`{"statusTimestampAfter":"soon"}`, `{"statusTimestampAfter":5}`, `{"includeArtifacts":"yes"}`,
		`{"contextId":1}`, `{"pageToken":false}`, `{"status":"bogus"}`, `{"pageSize":1,"page_size":2}`,
		`{"PageSize":1}`, `[]`,
	} {
		_, err := ParseListTasks([]byte(bad))
		var e *Error
		if !errors.As(err, &e) || e.Kind != dialect.ErrInvalidParams {
			t.Errorf("ParseListTasks(%s): want InvalidParams, got %v", bad, err)
		}
	}
}

func TestStateV10(t *testing.T) {
	t.Parallel()
	for _, p := range dialect.TaskStates {
		for _, in := range []string{`"` + p.V03 + `"`, `"` + p.V10 + `"`} {
			if got := stateV10(jsonscan.Parse([]byte(in))); got != p.V10 {
				t.Errorf("stateV10(%s) = %q, want %q", in, got, p.V10)
			}
		}
	}
	for _, in := range []string{`"TASK_STATE_CANCELLED"`, `5`} {
		if got := stateV10(jsonscan.Parse([]byte(in))); got != "TASK_STATE_CANCELED" {
			t.Errorf("stateV10(%s) = %q", in, got)
		}
	}
	for _, in := range []string{`"Completed"`, `9`, `2.5`, `null`, `{}`} {
		if got := stateV10(jsonscan.Parse([]byte(in))); got != "" {
			t.Errorf("stateV10(%s) = %q, want empty", in, got)
		}
	}
}

func TestErrorUnwrap(t *testing.T) {
	t.Parallel()
	_, _, err := Params(dialect.GetTask, dialect.V10, dialect.V03, []byte(`{"id":5}`))
	var e *Error
	if !errors.As(err, &e) || e.Err == nil {
		t.Fatalf("want an *Error wrapping the path error, got %#v", err)
	}
	var pe *pathError
	if !errors.As(err, &pe) {
		t.Errorf("errors.As cannot reach the path error through Unwrap")
	}
	if got := AsError(errors.New("boom"), dialect.ErrInternal); got.Kind != dialect.ErrInternal || got.Message != "boom" {
		t.Errorf("AsError wrapped %+v", got)
	}
	if got := AsError(err, dialect.ErrInternal); got != e {
		t.Errorf("AsError replaced an existing *Error")
	}
}

func TestInt32Of(t *testing.T) {
	t.Parallel()
	good := map[string]int32{`5`: 5, `-3`: -3, `0`: 0, `1e2`: 100, `"7"`: 7, `"-0"`: 0, `"1e1"`: 10, `2147483647`: 2147483647}
	for in, want := range good {
		if got, ok := int32Of(jsonscan.Parse([]byte(in))); !ok || got != want {
			t.Errorf("int32Of(%s) = %d, %v; want %d", in, got, ok, want)
		}
	}
	for _, in := range []string{`1.5`, `2147483648`, `-2147483649`, `1e10`, `"5abc"`, `"0x10"`, `" 5"`, `"5 "`, `"3 4"`,
		`"+5"`, `"05"`, `"1_000"`, `"Infinity"`, `"NaN"`, `""`, `"1.5"`, `true`, `null`, `[]`} {
		if got, ok := int32Of(jsonscan.Parse([]byte(in))); ok {
			t.Errorf("int32Of(%s) = %d, accepted", in, got)
		}
	}
}

// TestValidRejects covers what Valid must refuse and accept at its edges:
// raw control characters, bad escapes, trailing data, escaped quotes
// around the depth limit.
func TestValidRejects(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("[", jsonscan.MaxDepth+1) + strings.Repeat("]", jsonscan.MaxDepth+1)
	for _, in := range []string{
		"{\"a\":\"b\x01\"}", "{\"a\x1f\":1}", "[\"\t\"]", "\"\n\"", "{\"a\":\"\xff\"}", deep,
		`{"a":"\"` + deep + `"}x`, `{"a":"\\"` + deep + `}`, `{"a":"` + strings.Repeat(`\\`, 5) + `"` + deep + `"}`,
		`{"a":1}{}`, `{"a":tru}`, `{"a":"\q"}`,
	} {
		if Valid([]byte(in)) {
			t.Errorf("Valid(%.40q) = true", in)
		}
	}
	nested := strings.Repeat("[", jsonscan.MaxDepth) + strings.Repeat("]", jsonscan.MaxDepth)
	for _, in := range []string{
		nested, `{"a":"` + deep + `"}`, `{"a":"\"` + deep + `"}`, `{"a":"\\\"` + deep + `"}`,
		"{\"a\":\"\x7f \u2028 \\u0000\"}", `"\\"`, `["\\\\", "\"[[["]`,
	} {
		if !Valid([]byte(in)) {
			t.Errorf("Valid(%.40q) = false", in)
		}
	}
}

// TestFileMemberWithoutPlaceIn10: a 0.x caller's file object with a
// member the gateway does not know is refused toward a 1.0 backend, whose
// part has no file object to carry it (it was dropped unsaid), and kept
// toward a 0.x one; a backend's file, translated for a caller, is not
// refused.
func TestFileMemberWithoutPlaceIn10(t *testing.T) {
	t.Parallel()
	params := []byte(`{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"file","file":{"uri":"https://x/y.pdf","mimeType":"application/pdf","sizeBytes":1024}}]}}`)
	_, _, err := Params(dialect.SendMessage, dialect.V03, dialect.V10, params)
	checkKind(t, err, dialect.ErrInvalidParams)
	if err == nil || !strings.Contains(err.Error(), `params.message.parts[0].file: has "sizeBytes"`) {
		t.Errorf("toward 1.0: %v", err)
	}
	out, _, err := Params(dialect.SendMessage, dialect.V03, dialect.V03, params)
	if err != nil || !strings.Contains(string(out), `"sizeBytes":1024`) {
		t.Errorf("toward 0.x: %v %s", err, out)
	}
	task := []byte(`{"kind":"task","id":"t","contextId":"c","status":{"state":"completed"},"artifacts":[{"artifactId":"a","parts":[{"kind":"file","file":{"uri":"https://x/y.pdf","sizeBytes":1024}}]}]}`)
	if _, err := Result(dialect.GetTask, dialect.V03, dialect.V10, task); err != nil {
		t.Errorf("a backend's file toward a 1.0 caller: %v", err)
	}
}
