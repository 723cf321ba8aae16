package proxy

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/testnet"
	"github.com/a2agate/gateway/store"
)

func task03(id string) string {
	return `{"kind":"task","id":"` + id + `","contextId":"c1","status":{"state":"working"}}`
}

// TestRepliesToAnotherRequest: a backend reply, or stream event, whose id
// is not the one the gateway sent answers another call and is refused; one
// about another task than asked is refused and never recorded.
func TestRepliesToAnotherRequest(t *testing.T) {
	cases := []struct {
		name    string
		backend func(w http.ResponseWriter, r *http.Request, id string)
		message string // "" for a success
	}{
		{"other id", func(w http.ResponseWriter, r *http.Request, id string) {
			io.WriteString(w, `{"jsonrpc":"2.0","id":999,"result":`+task03("t1")+`}`)
		}, "the backend answered another request"},
		{"string id for a number", func(w http.ResponseWriter, r *http.Request, id string) {
			io.WriteString(w, `{"jsonrpc":"2.0","id":"`+id+`","result":`+task03("t1")+`}`)
		}, "the backend answered another request"},
		{"no id", func(w http.ResponseWriter, r *http.Request, id string) {
			io.WriteString(w, `{"jsonrpc":"2.0","result":`+task03("t1")+`}`)
		}, "the backend answered another request"},
		{"error for another id", func(w http.ResponseWriter, r *http.Request, id string) {
			io.WriteString(w, `{"jsonrpc":"2.0","id":998,"error":{"code":-32001,"message":"Task not found"}}`)
		}, "the backend answered another request"},
		{"huge other id", func(w http.ResponseWriter, r *http.Request, id string) {
			io.WriteString(w, `{"jsonrpc":"2.0","id":"`+strings.Repeat("z", 100000)+`","result":`+task03("t1")+`}`)
		}, "the backend answered another request"},
		{"another task", func(w http.ResponseWriter, r *http.Request, id string) {
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"result":`+task03("t2")+`}`)
		}, "the backend answered about another task"},
		{"same id respelled", func(w http.ResponseWriter, r *http.Request, id string) {
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`.0e0,"result":`+task03("t1")+`}`)
		}, ""},
		{"error without id", func(w http.ResponseWriter, r *http.Request, id string) {
			io.WriteString(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"cannot read the request"}}`)
		}, "cannot read the request"},
	}
	for _, tc := range cases {
		for _, c := range callers {
			for _, op := range []dialect.Op{dialect.GetTask, dialect.CancelTask} {
				t.Run(tc.name+"/"+c.d.String()+"/"+op.String(), func(t *testing.T) {
					g := newGateway(t, scripted(tc.backend), dialect.Version03, func(a *AgentConfig) { a.Tasks.AllowUnknown = true })
					r := g.call("1", c.method(op), `{"id":"t1"}`)
					if tc.message == "" {
						if got := mustResult(t, r).Get("id").Str; got != "t1" {
							t.Fatalf("task %q", got)
						}
						return
					}
					code := -32603
					if tc.name == "error without id" {
						code = -32600
					}
					e := wantError(t, r, c.d, code)
					if msg := e.Get("message").Str; !strings.Contains(msg, tc.message) || len(msg) > 300 || strings.Contains(msg, "t2") {
						t.Fatalf("message %q does not say %q (briefly, naming no other task)", msg, tc.message)
					}
					if _, err := g.agent.tasks.Get(context.Background(), "test", "t2"); !errors.Is(err, store.ErrNotFound) {
						t.Fatalf("the other task was recorded: %v", err)
					}
				})
			}
		}
	}
}

// TestStreamEventsForAnotherRequest: a stream event with another id, or
// a subscription's event about another task, ends the stream with an error.
func TestStreamEventsForAnotherRequest(t *testing.T) {
	event := func(id, task string) string {
		return `data: {"jsonrpc":"2.0","id":` + id + `,"result":{"kind":"status-update","taskId":"` + task + `","contextId":"c1","status":{"state":"working"},"final":false}}` + "\n\n"
	}
	cases := []struct {
		name    string
		op      dialect.Op
		second  func(id string) string
		message string
	}{
		{"other id", dialect.SendStreamingMessage, func(string) string { return event("77", "t1") }, "the backend answered another request"},
		{"no id", dialect.SendStreamingMessage, func(string) string {
			return `data: {"jsonrpc":"2.0","result":{"kind":"status-update","taskId":"t1","contextId":"c1","status":{"state":"working"},"final":false}}` + "\n\n"
		}, "the backend answered another request"},
		{"subscription to another task", dialect.SubscribeToTask, func(id string) string { return event(id, "t2") }, "the backend answered about another task"},
	}
	for _, tc := range cases {
		for _, c := range callers {
			t.Run(tc.name+"/"+c.d.String(), func(t *testing.T) {
				g := newGateway(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.Method != http.MethodPost {
						http.NotFound(w, r)
						return
					}
					body, _ := io.ReadAll(r.Body)
					id := gjson.GetBytes(body, "id").Raw
					if gjson.GetBytes(body, "method").Str == "tasks/get" {
						// The 1.0 subscription's snapshot.
						io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"result":`+task03("t1")+`}`)
						return
					}
					w.Header().Set("Content-Type", "text/event-stream")
					sseWrite(w, event(id, "t1"), tc.second(id))
					<-r.Context().Done()
				}), dialect.Version03, func(a *AgentConfig) { a.Tasks.AllowUnknown = true })
				params := c.send("m", c.text("hi"), "")
				if tc.op == dialect.SubscribeToTask {
					params = `{"id":"t1"}`
				}
				events := g.stream("9", c.method(tc.op), params).all()
				if c.d == dialect.V10 && tc.op == dialect.SubscribeToTask {
					// The 1.0 subscription's first event is the task itself.
					events = events[1:]
				}
				if len(events) != 2 {
					t.Fatalf("want the first event and an error event, got %d: %v", len(events), events)
				}
				mustResult(t, events[0])
				e := wantError(t, events[1], c.d, -32603)
				if msg := e.Get("message").Str; !strings.Contains(msg, tc.message) || strings.Contains(msg, "t2") {
					t.Fatalf("message %q does not say %q", msg, tc.message)
				}
				if _, err := g.agent.tasks.Get(context.Background(), "test", "t2"); !errors.Is(err, store.ErrNotFound) {
					t.Fatalf("the other task was recorded: %v", err)
				}
			})
		}
	}
}

// TestUnsolicitedResponseIsNotReused: a backend that sends a second,
// unasked response right after the first on a kept-alive connection. The
// transport drops that connection, so that no later call gets the stale
// response: every later call gets its own answer. The test waits for the
// drop before the second call: net/http looks for unasked bytes only
// after it has put the connection back in its pool (transport.go,
// readLoop), so a call made in between could be written on it first.
func TestUnsolicitedResponseIsNotReused(t *testing.T) {
	ln := testnet.Listen(t)
	var conns, requests atomic.Int64
	staleDropped := make(chan struct{})
	reply := func(id, text string) string {
		body := `{"jsonrpc":"2.0","id":` + id + `,"result":{"kind":"message","messageId":"r","role":"agent","parts":[{"kind":"text","text":"` + text + `"}]}}`
		return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
	}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go func() {
				defer conn.Close()
				sentStale := false
				defer func() {
					if sentStale {
						close(staleDropped)
					}
				}()
				br := bufio.NewReader(conn)
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					body, _ := io.ReadAll(req.Body)
					if req.Method != http.MethodPost {
						// The gateway's card fetch: not a call of the test's.
						io.WriteString(conn, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
						continue
					}
					id := gjson.GetBytes(body, "id").Raw
					text := gjson.GetBytes(body, "params.message.parts.0.text").Str
					out := reply(id, text)
					if text == "call 0" && requests.Add(1) == 1 {
						// One write: the stale response is in the gateway's
						// buffer as soon as the first is.
						out += reply(id, "stale")
						sentStale = true
					}
					if _, err := io.WriteString(conn, out); err != nil {
						return
					}
				}
			}()
		}
	}()
	g := newGateway(t, http.NotFoundHandler(), dialect.Version03, func(a *AgentConfig) {
		a.Backend.URL = "http://" + ln.Addr().String() + "/"
	})
	c := callers[0]
	for i := range 21 {
		want := "call " + strconv.Itoa(i)
		r := g.call("1", c.method(dialect.SendMessage), c.send("m"+strconv.Itoa(i), c.text(want), ""))
		if got := mustResult(t, r).Get("parts.0.text").Str; got != want {
			t.Fatalf("call %d answered %q: %s", i, got, r.Raw)
		}
		if i == 0 {
			await(t, staleDropped, "the connection that carried the unsolicited response to be dropped")
		}
	}
	if n := conns.Load(); n < 2 {
		t.Fatalf("the connection that carried the unsolicited response was reused (%d connections)", n)
	}
}

// TestBackendErrorSaysWhoseWordsFollow: a backend error's text, which
// names the backend's own methods and field paths, reaches a caller of the
// other dialect prefixed with whose it is; a caller of the same dialect
// gets it as it is.
func TestBackendErrorSaysWhoseWordsFollow(t *testing.T) {
	for _, bv := range []dialect.Version{dialect.Version03, dialect.Version10} {
		for _, c := range callers {
			t.Run(string(bv)+"/"+c.d.String(), func(t *testing.T) {
				g := newGateway(t, scripted(func(w http.ResponseWriter, r *http.Request, id string) {
					io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":-32602,"message":"params.message.parts[0]: no content"}}`)
				}), bv)
				e := wantError(t, g.call("1", c.method(dialect.SendMessage), c.send("m", c.text("hi"), "")), c.d, -32602)
				want := "params.message.parts[0]: no content"
				if bv.ID() != c.d {
					theirs, _ := dialect.MethodName(bv.ID(), dialect.SendMessage)
					want = `backend "test" (A2A ` + string(bv) + `; your ` + c.method(dialect.SendMessage) + ` is its ` + theirs + `) answered: ` + want
				}
				if got := e.Get("message").Str; got != want {
					t.Fatalf("message %q, want %q", got, want)
				}
			})
		}
	}
}

// TestContinuationAnsweredWithAnotherTask: a message continuing task t1
// answered with task t2, in a unary send or a stream, is refused and t2 is
// not recorded.
func TestContinuationAnsweredWithAnotherTask(t *testing.T) {
	for _, stream := range []bool{false, true} {
		for _, c := range callers {
			t.Run(c.d.String()+map[bool]string{false: "/unary", true: "/stream"}[stream], func(t *testing.T) {
				g := newGateway(t, scripted(func(w http.ResponseWriter, r *http.Request, id string) {
					if !stream {
						io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"result":`+task03("t2")+`}`)
						return
					}
					w.Header().Set("Content-Type", "text/event-stream")
					sseWrite(w, `data: {"jsonrpc":"2.0","id":`+id+`,"result":`+task03("t2")+`}`+"\n\n")
				}), dialect.Version03, func(a *AgentConfig) { a.Tasks.AllowUnknown = true })
				var e gjson.Result
				if !stream {
					e = wantError(t, g.call("1", c.method(dialect.SendMessage), c.continuation("m", "t1", "more")), c.d, -32603)
				} else {
					s := g.stream("1", c.method(dialect.SendStreamingMessage), c.continuation("m", "t1", "more"))
					e = wantError(t, streamError(t, s), c.d, -32603)
				}
				if msg := e.Get("message").Str; !strings.Contains(msg, "the backend answered about another task") || strings.Contains(msg, "t2") {
					t.Fatalf("message %q", msg)
				}
				if _, err := g.agent.tasks.Get(context.Background(), "test", "t2"); !errors.Is(err, store.ErrNotFound) {
					t.Fatalf("the other task was recorded: %v", err)
				}
			})
		}
	}
}

// TestMixedUpReplyOfAnotherCall: a backend that answers each request with
// the reply to the one before it (a mixed-up or stale response) hands no
// caller another call's answer, even when both callers used the same
// JSON-RPC id: the gateway gives every backend request an id of its own and
// refuses a reply with another.
func TestMixedUpReplyOfAnotherCall(t *testing.T) {
	var mu sync.Mutex
	previous := ""
	back := scripted(func(w http.ResponseWriter, r *http.Request, id string) {
		w.Header().Set("Content-Type", "application/json")
		mu.Lock()
		defer mu.Unlock()
		if previous != "" {
			io.WriteString(w, previous)
		} else {
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":-32603,"message":"warming up"}}`)
		}
		previous = `{"jsonrpc":"2.0","id":` + id + `,"result":{"kind":"message","messageId":"r","role":"agent","parts":[{"kind":"text","text":"secret of call ` + id + `"}]}}`
	})
	g := newGateway(t, back, dialect.Version03)
	c := callers[0]
	for i := range 3 {
		r := g.call("1", c.method(dialect.SendMessage), c.send("m"+strconv.Itoa(i), c.text("hello"), ""))
		if strings.Contains(r.Raw, "secret") {
			t.Fatalf("call %d was answered another call's reply: %s", i, r.Raw)
		}
		if i > 0 && !strings.Contains(wantError(t, r, c.d, -32603).Get("message").Str, "answered another request") {
			t.Fatalf("call %d: %s", i, r.Raw)
		}
	}
}
