package proxy

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/store"
)

// TestStreamOfOneTaskToItsEnd: a backend's stream is relayed as the
// story of one task in one context, up to its final event. A backend that
// goes on after a final event (done, then working again), that switches
// to a second task, or that moves the task to another context, is not
// followed: the caller gets the events up to there, then the end or an
// error, and the index keeps the final state. Before, all of it was
// relayed and recorded: a 0.x caller got events after "final": true, the
// index held the completed task as working again (never evicted, in the
// caller's share), the second task became the caller's, and the other
// context's id reached the caller.
func TestStreamOfOneTaskToItsEnd(t *testing.T) {
	working := `{"task":{"id":"t-a","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}`
	completed := `{"statusUpdate":{"taskId":"t-a","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"}}}`
	for _, tc := range []struct {
		name   string
		events []string
		// relayed is how many of the backend's events the caller gets;
		// says, when set, what the error event after them says.
		relayed int
		says    string
		// state is t-a's state in the index afterwards.
		state string
	}{
		{"final then more", []string{working, completed,
			`{"artifactUpdate":{"taskId":"t-a","contextId":"c","artifact":{"artifactId":"late","parts":[{"text":"after the end"}]}}}`,
			`{"statusUpdate":{"taskId":"t-a","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}`}, 2, "", "TASK_STATE_COMPLETED"},
		{"message then more", []string{`{"message":{"messageId":"r","role":"ROLE_AGENT","parts":[{"text":"x"}]}}`, working}, 1, "", ""},
		{"a second task", []string{working,
			`{"task":{"id":"t-z","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}`,
			`{"statusUpdate":{"taskId":"t-z","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"}}}`}, 1, "answered about a second task", "TASK_STATE_WORKING"},
		{"another context", []string{working,
			`{"artifactUpdate":{"taskId":"t-a","contextId":"c-other","artifact":{"artifactId":"x","parts":[{"text":"y"}]}}}`, completed}, 1, "with another contextId", "TASK_STATE_WORKING"},
	} {
		for _, c := range callers {
			t.Run(tc.name+"/"+c.d.String(), func(t *testing.T) {
				tasks := store.NewMemory(store.MemoryConfig{})
				t.Cleanup(func() { tasks.Close() })
				g := newGatewayOpts(t, scripted(func(w http.ResponseWriter, r *http.Request, id string) {
					w.Header().Set("Content-Type", "text/event-stream")
					for _, e := range tc.events {
						sseWrite(w, `data: {"jsonrpc":"2.0","id":`+id+`,"result":`+e+"}\n\n")
					}
				}), dialect.Version10, Options{Tasks: tasks})
				events := g.stream("1", c.method(dialect.SendStreamingMessage), c.send("m", c.text("hi"), "")).all()
				want := tc.relayed
				if tc.says != "" {
					want++
				}
				if len(events) != want {
					t.Fatalf("got %d events, want %d: %v", len(events), want, events)
				}
				for _, ev := range events[:tc.relayed] {
					if ev.Get("error").Exists() || strings.Contains(ev.Raw, "t-z") || strings.Contains(ev.Raw, "c-other") {
						t.Errorf("relayed: %s", ev.Raw)
					}
				}
				if tc.says != "" {
					wantErrorSaying(t, events[tc.relayed], c.d, -32603, tc.says)
				}
				if _, err := tasks.Get(context.Background(), "test", "t-z"); err == nil {
					t.Error("the second task was recorded as the caller's")
				}
				if tc.state == "" {
					return
				}
				if got, err := tasks.Get(context.Background(), "test", "t-a"); err != nil || got.State != tc.state || got.ContextID != "c" {
					t.Errorf("t-a in the index: %+v, %v; want %s in context c", got, err, tc.state)
				}
			})
		}
	}
}
