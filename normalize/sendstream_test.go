package normalize

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

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
