package normalize

import (
	"bytes"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/testfiles"
)

// TestSendFoldGolden runs testdata/sendfold: each backend stream, in the
// dialect its file names, folded event by event, answers each caller's
// dialect as NAME.answer.vNN.json says; both streams of a name fold to the
// same answers.
func TestSendFoldGolden(t *testing.T) {
	streams := testfiles.Glob(t, "testdata", "sendfold", "*.events.v*.jsonl")
	for _, path := range streams {
		base, tag, _ := strings.Cut(strings.TrimSuffix(path, ".jsonl"), ".events.")
		from := map[string]dialect.ID{"v03": dialect.V03, "v10": dialect.V10}[tag]
		t.Run(filepath.Base(base)+"."+tag, func(t *testing.T) {
			var fold SendFold
			for i, line := range bytes.Split(goldenFile(t, path), []byte("\n")) {
				canon, info, err := appendInspectedEvent(nil, from, dialect.V10, line, nil)
				if err != nil {
					t.Fatalf("event %d: %v", i, err)
				}
				if err := fold.Add(canon, info); err != nil {
					t.Fatalf("event %d: %v", i, err)
				}
			}
			for _, to := range []dialect.ID{dialect.V10, dialect.V03} {
				got, info, err := fold.AppendAnswer(nil, to)
				if err != nil {
					t.Fatalf("to %s: %v", to, err)
				}
				if info.Kind != KindTask && info.Kind != KindMessage {
					t.Errorf("to %s: the answer is a %s", to, info.Kind)
				}
				compareGolden(t, base+".answer."+fileTag(to)+".json", got)
			}
		})
	}
}

// An empty fold has no answer, and a message after the task joins its
// history rather than replacing it.
func TestSendFoldEdges(t *testing.T) {
	var fold SendFold
	if _, _, err := fold.AppendAnswer(nil, dialect.V10); err == nil {
		t.Fatal("an empty fold answered")
	}
	for _, ev := range []string{
		`{"task":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}`,
		`{"message":{"role":"ROLE_AGENT","messageId":"m","taskId":"t","contextId":"c","parts":[{"text":"on it"}]}}`,
	} {
		canon, info, err := appendInspectedEvent(nil, dialect.V10, dialect.V10, []byte(ev), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := fold.Add(canon, info); err != nil {
			t.Fatal(err)
		}
	}
	got, info, err := fold.AppendAnswer(nil, dialect.V10)
	if err != nil || info.Kind != KindTask || info.History != 1 {
		t.Fatalf("%v %+v %s", err, info, got)
	}
}

// TestSendFoldAsFoldWebhook: the fold of a send's stream, which holds the
// task in pieces, answers with the task FoldWebhook's one write per event
// makes, over every rule: a task, status updates with messages (one
// repeated), new, appended, replaced and re-appended artifacts, an append
// to an artifact without parts, a message, and an update of a second task
// that starts the fold over.
func TestSendFoldAsFoldWebhook(t *testing.T) {
	events := []string{
		`{"task":{"id":"t1","contextId":"c","status":{"state":"TASK_STATE_SUBMITTED"},"history":[{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}],"artifacts":[{"artifactId":"old","parts":[{"text":"o"}]}],"metadata":{"k":"v"}}}`,
		`{"statusUpdate":{"taskId":"t1","contextId":"c","status":{"state":"TASK_STATE_WORKING","message":{"messageId":"m2","role":"ROLE_AGENT","parts":[{"text":"on it"}]}}}}`,
		`{"statusUpdate":{"taskId":"t1","contextId":"c","status":{"state":"TASK_STATE_WORKING","message":{"messageId":"m2","role":"ROLE_AGENT","parts":[{"text":"on it"}]}}}}`,
		`{"artifactUpdate":{"taskId":"t1","contextId":"c","artifact":{"artifactId":"a","parts":[{"text":"1"}]}}}`,
		`{"artifactUpdate":{"taskId":"t1","contextId":"c","append":true,"artifact":{"artifactId":"a","parts":[{"text":"2"},{"text":"3"}]}}}`,
		`{"artifactUpdate":{"taskId":"t1","contextId":"c","append":true,"artifact":{"artifactId":"old","parts":[{"text":"p"}]}}}`,
		`{"artifactUpdate":{"taskId":"t1","contextId":"c","artifact":{"artifactId":"e","name":"empty","parts":[]}}}`,
		`{"artifactUpdate":{"taskId":"t1","contextId":"c","append":true,"artifact":{"artifactId":"e","parts":[{"text":"e1"}]}}}`,
		`{"artifactUpdate":{"taskId":"t1","contextId":"c","artifact":{"artifactId":"a","name":"again","parts":[{"text":"x"}]}}}`,
		`{"artifactUpdate":{"taskId":"t1","contextId":"c","append":true,"artifact":{"artifactId":"a","parts":[{"text":"y"}]}}}`,
		`{"message":{"messageId":"m3","taskId":"t1","contextId":"c","role":"ROLE_AGENT","parts":[{"text":"note"}]}}`,
		`{"statusUpdate":{"taskId":"t1","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"}}}`,
	}
	restart := []string{
		`{"artifactUpdate":{"taskId":"t2","contextId":"c","artifact":{"artifactId":"a","parts":[{"text":"z"}]}}}`,
		`{"statusUpdate":{"taskId":"t2","contextId":"c","status":{"state":"TASK_STATE_WORKING","message":{"messageId":"n1","role":"ROLE_AGENT","parts":[{"text":"n"}]}}}}`,
	}
	for _, script := range [][]string{events, append(events[:4:4], restart...)} {
		var fold SendFold
		var want []byte
		for i, e := range script {
			reply, err := ParseReply([]byte(`{"jsonrpc":"2.0","id":1,"result":` + e + `}`))
			if err != nil {
				t.Fatal(err)
			}
			canon, info, err := AppendInspectedEvent(nil, dialect.V10, dialect.V10, &reply)
			if err != nil {
				t.Fatalf("event %d: %v", i, err)
			}
			if want, err = FoldWebhook(want, canon, info); err != nil {
				t.Fatal(err)
			}
			if err := fold.Add(canon, info); err != nil {
				t.Fatal(err)
			}
		}
		got, _, err := fold.AppendAnswer(nil, dialect.V10)
		if err != nil {
			t.Fatal(err)
		}
		if task := []byte(gjson.GetBytes(got, "task").Raw); !jsonEqual(task, want) {
			t.Errorf("the fold answered\n %s\nFoldWebhook made\n %s", task, want)
		}
		if n := fold.Size(); n < len(want)-64 || n > len(want)+64 {
			t.Errorf("Size %d, the task is %d bytes", n, len(want))
		}
	}
}

// TestSendFoldLinear: folding a stream of many small appended chunks
// allocates about as much per event however long the stream already is.
// Before, each event rewrote the whole task: ten times the chunks took a
// hundred times the bytes, and 20000 chunks of an answer streamed a few
// tokens at a time over half a minute.
func TestSendFoldLinear(t *testing.T) {
	fold := func(n int) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		var f SendFold
		for i := range n + 1 {
			e := `{"task":{"id":"t1","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}`
			if i > 0 {
				e = `{"artifactUpdate":{"taskId":"t1","contextId":"c","append":true,"artifact":{"artifactId":"a","parts":[{"text":"some tokens here"}]}}}`
			}
			reply, _ := ParseReply([]byte(`{"jsonrpc":"2.0","id":1,"result":` + e + `}`))
			canon, info, err := AppendInspectedEvent(nil, dialect.V10, dialect.V10, &reply)
			if err != nil {
				t.Fatal(err)
			}
			if err := f.Add(canon, info); err != nil {
				t.Fatal(err)
			}
		}
		if _, _, err := f.AppendAnswer(nil, dialect.V10); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	small, large := fold(500), fold(5000)
	t.Logf("allocated: %d bytes for 500 chunks, %d for 5000", small, large)
	// Ten times the events: linear is about ten times the bytes, the
	// quadratic fold a hundred.
	if large > 20*small {
		t.Fatalf("500 chunks folded in %d bytes allocated, 5000 in %d: not linear", small, large)
	}
}
