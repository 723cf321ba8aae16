package agent10

import (
	"encoding/json"
	"testing"

	"github.com/a2agate/gateway/internal/agentcore"
	"github.com/a2agate/gateway/internal/agenttest"
)

func TestCompletedTaskCarriesTheResultArtifact(t *testing.T) {
	t.Parallel()
	_, srv := startAgent(t, Options{})
	raw := obj{"raw": "aGVsbG8=", "mediaType": "text/plain", "filename": "a.txt"}
	link := obj{"url": "https://example.com/y.pdf", "mediaType": "application/pdf", "metadata": obj{"m": 1}}
	data := obj{"data": obj{"k": []any{1, "two", nil}, "big": json.Number("12345678901234567890")}}
	list := obj{"data": []any{1, 2}, "mediaType": "application/json"}
	null := obj{"data": nil}

	res := client.Call(t, srv, "SendMessage", obj{"message": userMessage("Echo these", raw, link, data, list, null)}).(obj)
	agenttest.WantJSON(t, "artifacts", agenttest.Path(t, res, "task", "artifacts"), []any{obj{
		"artifactId": agenttest.Str(t, res, "task", "artifacts", 0, "artifactId"),
		"name":       "result",
		"parts":      []any{obj{"text": "done: Echo these"}, raw, link, data, list, null},
	}})
}

func TestRawBytesAreReencodedAsStandardBase64(t *testing.T) {
	t.Parallel()
	_, srv := startAgent(t, Options{})
	// URL-safe and unpadded, both of which ProtoJSON parsers accept.
	res := client.Call(t, srv, "SendMessage", obj{"message": userMessage("bytes", obj{"raw": "-_8"})}).(obj)
	if got := agenttest.Str(t, res, "task", "artifacts", 0, "parts", 1, "raw"); got != "+/8=" {
		t.Fatalf("raw = %q, want +/8=", got)
	}
	e := client.CallErr(t, srv, "SendMessage", obj{"message": userMessage("bytes", obj{"raw": "not base64!"})})
	wantCode(t, e, agentcore.CodeInvalidParams)
}

func TestReturnImmediately(t *testing.T) {
	t.Parallel()
	_, srv := startAgent(t, Options{})
	res := client.Call(t, srv, "SendMessage", obj{
		"message":       userMessage("Later please"),
		"configuration": obj{"returnImmediately": true},
	}).(obj)
	task := agenttest.Path(t, res, "task").(obj)
	if st := agenttest.Str(t, task, "status", "state"); st != "TASK_STATE_SUBMITTED" {
		t.Fatalf("state = %q, want submitted", st)
	}
	if _, ok := task["artifacts"]; ok {
		t.Fatal("a submitted task has artifacts")
	}
}

func TestSendHistoryLength(t *testing.T) {
	t.Parallel()
	_, srv := startAgent(t, Options{})
	for _, tt := range []struct {
		length any
		want   int
	}{{nil, 2}, {0, 0}, {1, 1}, {5, 2}} {
		cfg := obj{}
		if tt.length != nil {
			cfg["historyLength"] = tt.length
		}
		task := agenttest.Path(t, client.Call(t, srv, "SendMessage", obj{"message": userMessage("input x"), "configuration": cfg}), "task").(obj)
		h, ok := task["history"].([]any)
		if tt.want == 0 {
			if _, present := task["history"]; present {
				t.Fatalf("historyLength 0: history key present: %v", task["history"])
			}
			continue
		}
		if !ok || len(h) != tt.want {
			t.Fatalf("historyLength %v: %d messages, want %d", tt.length, len(h), tt.want)
		}
	}
}
