package normalize

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"github.com/a2agate/gateway/dialect"
)

// TestStructWithRepeatedKeyRefused: a metadata object (or a data part's
// value, or an object anywhere inside either) that names a key twice is
// refused where it is read, naming the key and where it is, in every
// direction, passing through too: protojson refuses such a map ("duplicate
// map key"), so a gRPC caller got an INTERNAL error where JSON-RPC and REST
// callers got the map, read as the first value by the gateway and as the
// last by most of them.
func TestStructWithRepeatedKeyRefused(t *testing.T) {
	t.Parallel()
	const dup = `{"k":1,"k":2}`
	task03 := func(md string) string {
		return `{"kind":"task","id":"t","contextId":"c","status":{"state":"working"},"metadata":` + md + `}`
	}
	task10 := func(md string) string {
		return `{"id":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"},"metadata":` + md + `}`
	}
	many := `{"a0":0,"a1":1,"a2":2,"a3":3,"a4":4,"a5":5,"a6":6,"a7":7,"a8":8,"a9":9,"a3":3}`
	tests := []struct {
		name, in string
		from     dialect.ID
		reply    bool
		op       dialect.Op
		path     string // where the error says the repeat is
		key      string
	}{
		{"0.x task metadata", task03(dup), dialect.V03, true, dialect.GetTask, "metadata", "k"},
		{"1.0 task metadata", task10(dup), dialect.V10, true, dialect.GetTask, "metadata", "k"},
		{"nested in an array", task10(`{"a":[{"x":1},{"x":1,"y":2,"x":3}]}`), dialect.V10, true, dialect.GetTask, "metadata.a[1]", "x"},
		{"escaped spelling", task10(`{"k":1,"\u006b":2}`), dialect.V10, true, dialect.GetTask, "metadata", "k"},
		{"past the first eight", task10(many), dialect.V10, true, dialect.GetTask, "metadata", "a3"},
		{"status message metadata", `{"id":"t","status":{"state":"TASK_STATE_WORKING","message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"x"}],"metadata":` + dup + `}}}`, dialect.V10, true, dialect.GetTask, "status.message.metadata", "k"},
		{"artifact metadata", `{"id":"t","status":{"state":"TASK_STATE_WORKING"},"artifacts":[{"artifactId":"a","parts":[{"text":"x"}],"metadata":` + dup + `}]}`, dialect.V10, true, dialect.GetTask, "artifacts[0].metadata", "k"},
		{"part metadata", `{"id":"t","status":{"state":"TASK_STATE_WORKING"},"history":[{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"x","metadata":` + dup + `}]}]}`, dialect.V10, true, dialect.GetTask, "history[0].parts[0].metadata", "k"},
		{"0.x data part", `{"kind":"task","id":"t","contextId":"c","status":{"state":"working"},"history":[{"kind":"message","messageId":"m","role":"agent","parts":[{"kind":"data","data":{"o":` + dup + `}}]}]}`, dialect.V03, true, dialect.GetTask, "history[0].parts[0].data.o", "k"},
		{"status update metadata", `{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"},"metadata":` + dup + `}}`, dialect.V10, true, dialect.SendStreamingMessage, "statusUpdate.metadata", "k"},
		{"0.x send message metadata", `{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"text","text":"x"}],"metadata":` + dup + `}}`, dialect.V03, false, dialect.SendMessage, "message.metadata", "k"},
		{"1.0 send metadata", `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]},"metadata":` + dup + `}`, dialect.V10, false, dialect.SendMessage, "metadata", "k"},
		{"1.0 data part value", `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"data":[` + dup + `]}]}}`, dialect.V10, false, dialect.SendMessage, "message.parts[0].data[0]", "k"},
		{"cancel metadata", `{"id":"t","metadata":` + dup + `}`, dialect.V10, false, dialect.CancelTask, "metadata", "k"},
	}
	for _, tt := range tests {
		for _, to := range []dialect.ID{dialect.V03, dialect.V10} {
			t.Run(tt.name+"/to "+to.String(), func(t *testing.T) {
				t.Parallel()
				var err error
				kind := dialect.ErrInvalidParams
				if tt.reply {
					kind = dialect.ErrInvalidAgentResponse
					_, err = Result(tt.op, tt.from, to, []byte(tt.in))
				} else {
					_, _, err = Params(tt.op, tt.from, to, []byte(tt.in))
				}
				if err == nil {
					t.Fatalf("accepted")
				}
				checkKind(t, err, kind)
				if want := tt.path + `: repeats key "` + tt.key + `"`; !strings.Contains(err.Error(), want) {
					t.Fatalf("error %q does not say %q", err, want)
				}
			})
		}
	}
}

// TestStructKeysRepeatedOnlyAcrossObjects: the same key in sibling or
// nested objects is no repeat, and the check leaves a passing document the
// same slice.
func TestStructKeysRepeatedOnlyAcrossObjects(t *testing.T) {
	t.Parallel()
	in := []byte(`{"id":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"},"metadata":{"k":{"k":{"k":1}},"a":[{"k":1},{"k":2}],"a0":0,"a1":1,"a2":2,"a3":3,"a4":4,"a5":5,"a6":6,"a7":7,"a8":8}}`)
	out, err := Result(dialect.GetTask, dialect.V10, dialect.V10, in)
	if err != nil {
		t.Fatal(err)
	}
	if &out[0] != &in[0] {
		t.Fatalf("copied: %s", out)
	}
}

func TestWebhookStructWithRepeatedKeyRefused(t *testing.T) {
	t.Parallel()
	_, _, err := WebhookCanonical([]byte(`{"kind":"status-update","taskId":"t","contextId":"c","status":{"state":"working"},"final":false,"metadata":{"k":1,"k":2}}`))
	if err == nil || !strings.Contains(err.Error(), `repeats key "k"`) {
		t.Fatalf("err %v", err)
	}
}

// TestErrorInfoMetadataRepeatedKeyOnce: a 1.0 backend's ErrorInfo whose
// metadata names a key twice reaches a caller of either dialect with the
// key once, its first value, as a 0.x error's data object does (an error
// is rebuilt, not refused: the caller must still learn of it). Before, a
// 0.x caller got the data object and a 1.0 caller the ErrorInfo with the
// key twice, which ProtoJSON parsers refuse and others read as the last.
func TestErrorInfoMetadataRepeatedKeyOnce(t *testing.T) {
	t.Parallel()
	obj := `{"code":-32001,"message":"no such task","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org","metadata":{"taskId":"mine","taskId":"theirs","x":"1"}},{"@type":"type.googleapis.com/google.rpc.DebugInfo","detail":"d"}]}`
	for _, to := range []dialect.ID{dialect.V03, dialect.V10} {
		e, err := ParseAgentError(dialect.V10, to, []byte(obj))
		if err != nil {
			t.Fatal(err)
		}
		got := string(e.Object)
		if strings.Count(got, `"taskId"`) != 1 || !strings.Contains(got, `"taskId":"mine"`) || strings.Contains(got, "theirs") || !strings.Contains(got, `"x":"1"`) {
			t.Errorf("to %s: %s", to, got)
		}
		if to == dialect.V10 && !strings.Contains(got, `"detail":"d"`) {
			t.Errorf("to 1.0, the other detail is gone: %s", got)
		}
	}
}

// TestErrorInfoMetadataValuesStrings: ErrorInfo.metadata is
// map<string,string>, so toward a 1.0 caller a value that is no string (an
// object with a key twice inside, a number) is written as its JSON text, as
// the gRPC binding gives it (rpcerror's stringMap): left as it was, a
// ProtoJSON parser refuses the whole error, and the nested repeat stayed
// for others to read each their own way.
func TestErrorInfoMetadataValuesStrings(t *testing.T) {
	t.Parallel()
	info := `{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org","metadata":`
	for _, md := range []string{`{"taskId":"t1","n":5,"o":{"a":1,"a":2}}`, `{"taskId":"t1","taskId":"t2","n":5,"o":{"a":1,"a":2}}`} {
		obj := `{"code":-32001,"message":"no such task","data":[` + info + md + `}]}`
		e, err := ParseAgentError(dialect.V10, dialect.V10, []byte(obj))
		if err != nil {
			t.Fatal(err)
		}
		var parsed struct {
			Data []struct {
				Metadata map[string]string `json:"metadata"`
			} `json:"data"`
		}
		if err := json.Unmarshal(e.Object, &parsed); err != nil || len(parsed.Data) != 1 {
			t.Fatalf("metadata %s: %s is not an ErrorInfo with string metadata: %v", md, e.Object, err)
		}
		want := map[string]string{"taskId": "t1", "n": "5", "o": `{"a":1,"a":2}`}
		if got := parsed.Data[0].Metadata; !maps.Equal(got, want) {
			t.Errorf("metadata %s: got %v, want %v", md, got, want)
		}
	}
}
