package proxy

import (
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
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
		// Before any state, with nothing recorded yet: the stream still
		// tells one task's story from its first event.
		{"a second task before any state", []string{
			`{"artifactUpdate":{"taskId":"t-a","contextId":"c","artifact":{"artifactId":"x","parts":[{"text":"y"}]}}}`,
			`{"artifactUpdate":{"taskId":"t-z","contextId":"c","artifact":{"artifactId":"x","parts":[{"text":"z"}]}}}`,
			`{"statusUpdate":{"taskId":"t-z","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"}}}`}, 1, "answered about a second task", ""},
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

// TestHeldEventIsNotLostToTheStreamsEnd: toward a 0.x caller, a 1.0
// backend's input-required update waits for the backend's next move to
// learn whether it is final. When that move ends the stream in a fault (an
// error event, an event that is not a JSON-RPC response or answers another
// request, one past max_event_bytes, a connection that breaks), the update
// still reaches the caller, not final, before the error: it happened, and
// it is what the caller must act on. Before, only a stream cut inside an
// event sent it; every other fault dropped it unsaid.
func TestHeldEventIsNotLostToTheStreamsEnd(t *testing.T) {
	event := func(id, result string) string {
		return `data: {"jsonrpc":"2.0","id":` + id + `,"result":` + result + "}\n\n"
	}
	head := func(id string) string {
		return event(id, `{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING"}}}`) +
			event(id, `{"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_INPUT_REQUIRED"}}}`)
	}
	cases := []struct {
		name, says string
		code       int
		tail       func(id string) string
	}{
		{"an error event", "the backend's own words", -32603, func(id string) string {
			return `data: {"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32603,"message":"the backend's own words"}}` + "\n\n"
		}},
		{"not JSON-RPC", "not a JSON-RPC response", -32006, func(string) string { return "data: <html>\n\n" }},
		{"another request's event", "answered another request", -32603, func(string) string {
			return event("999999999", `{"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING"}}}`)
		}},
		{"an event too large", "larger than", -32006, func(id string) string {
			return "data: " + strings.Repeat("x", 8<<10) + "\n\n"
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := newGateway(t, scripted(func(w http.ResponseWriter, r *http.Request, id string) {
				w.Header().Set("Content-Type", "text/event-stream")
				sseWrite(w, head(id)+tc.tail(id)) // one write: the relay reads on without a wait
			}), dialect.Version10, func(a *AgentConfig) { a.MaxEventBytes = 4 << 10 })
			checkHeldThenError(t, g, tc.code, tc.says)
		})
	}
	t.Run("a connection that breaks", func(t *testing.T) {
		g := newGateway(t, scripted(func(w http.ResponseWriter, r *http.Request, id string) {
			body := head(id)
			rawReply(w, func(conn net.Conn) {
				_, _ = io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"+
					strconv.FormatInt(int64(len(body)), 16)+"\r\n"+body+"\r\nzz\r\n")
			})
		}), dialect.Version10)
		checkHeldThenError(t, g, -32603, "dropped the stream")
	})
}

// checkHeldThenError streams a send through g as a 0.x caller and wants the
// working task, the input-required update not final, then an error saying
// says, with code.
func checkHeldThenError(t *testing.T, g *testGateway, code int, says string) {
	t.Helper()
	c := callers[0]
	events := g.stream("1", c.method(dialect.SendStreamingMessage), c.send("m", c.text("hi"), "")).all()
	if len(events) != 3 {
		t.Fatalf("got %d events, want the task, the input-required update and the error: %v", len(events), events)
	}
	if res := mustResult(t, events[1]); res.Get("status.state").Str != "input-required" || res.Get("final").Bool() {
		t.Fatalf("second event: %s", events[1].Raw)
	}
	wantErrorSaying(t, events[2], c.d, code, says)
}
