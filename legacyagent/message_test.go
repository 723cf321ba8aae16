package legacyagent

import (
	"encoding/json"
	"testing"

	"github.com/a2agate/gateway/internal/agenttest"
)

func TestCompletedTaskCarriesTheResultArtifact(t *testing.T) {
	t.Parallel()
	_, srv := startAgent(t, Options{})
	file := obj{"kind": "file", "file": obj{"bytes": "aGVsbG8=", "mimeType": "text/plain", "name": "a.txt"}}
	link := obj{"kind": "file", "file": obj{"uri": "https://example.com/y.pdf", "mimeType": "application/pdf"}, "metadata": obj{"m": 1}}
	data := obj{"kind": "data", "data": obj{"k": []any{1, "two", nil}, "big": json.Number("12345678901234567890")}}

	res := client.Call(t, srv, "message/send", obj{"message": userMessage("Echo these", file, link, data)}).(obj)
	agenttest.WantJSON(t, "artifacts", res["artifacts"], []any{obj{
		"artifactId": agenttest.Str(t, res, "artifacts", 0, "artifactId"),
		"name":       "result",
		"parts":      []any{obj{"kind": "text", "text": "done: Echo these"}, file, link, data},
	}})
}

func TestNonBlockingSendReturnsAtOnce(t *testing.T) {
	t.Parallel()
	_, srv := startAgent(t, Options{})
	res := client.Call(t, srv, "message/send", obj{
		"message":       userMessage("Later please"),
		"configuration": obj{"acceptedOutputModes": []any{"text/plain"}, "blocking": false},
	}).(obj)
	if st := agenttest.Str(t, res, "status", "state"); st != "submitted" {
		t.Fatalf("state = %q, want submitted", st)
	}
	if _, ok := res["artifacts"]; ok {
		t.Fatal("a submitted task has artifacts")
	}

	// Following the task shows it run to completion; it may have completed
	// already, in which case the Task event alone says so.
	s := client.OpenStream(t, srv, "tasks/resubscribe", obj{"id": res["id"]})
	var last string
	for {
		ev, ok := s.Next()
		if !ok {
			break
		}
		last = agenttest.Str(t, ev, "status", "state")
	}
	if last != "completed" {
		t.Fatalf("last state seen = %q, want completed", last)
	}
}

func TestSendHistoryLength(t *testing.T) {
	t.Parallel()
	_, srv := startAgent(t, Options{})
	res := client.Call(t, srv, "message/send", obj{
		"message":       userMessage("input x"),
		"configuration": obj{"acceptedOutputModes": []any{}, "historyLength": 1},
	}).(obj)
	if h := agenttest.Path(t, res, "history").([]any); len(h) != 1 || agenttest.Str(t, h[0], "role") != "agent" {
		t.Fatalf("history = %v, want only the agent's question", h)
	}
}
