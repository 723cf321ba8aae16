package proxy

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/dialect"
	sseframe "github.com/a2agate/gateway/internal/sse"
)

// eventStream reads a gateway's SSE answer event by event.
type eventStream struct {
	t    *testing.T
	res  *http.Response
	rd   *sseframe.Reader
	id   string
	done context.CancelFunc
}

func (g *testGateway) stream(id, method, params string) *eventStream {
	g.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	g.t.Cleanup(cancel)
	res, err := http.DefaultClient.Do(g.streamRequest(ctx, id, method, params))
	if err != nil {
		g.t.Fatal(err)
	}
	g.t.Cleanup(func() { res.Body.Close() })
	return &eventStream{t: g.t, res: res, rd: sseframe.NewReader(res.Body, 1<<20), id: id, done: cancel}
}

// streamRequest is the request of a streaming call as a caller of method's
// dialect sends it.
func (g *testGateway) streamRequest(ctx context.Context, id, method, params string) *http.Request {
	body := `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":` + params + `}`
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, g.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if d, _, _ := dialect.Lookup(method); d == dialect.V10 {
		req.Header.Set("A2A-Version", "1.0")
	}
	if g.token != "" {
		req.Header.Set("Authorization", "Bearer "+g.token)
	}
	return req
}

// next returns the next JSON-RPC response event, or false at the end.
func (s *eventStream) next() (gjson.Result, bool) {
	s.t.Helper()
	for {
		ev, err := s.rd.Next()
		if err == io.EOF {
			return gjson.Result{}, false
		}
		if err != nil {
			s.t.Fatalf("reading the stream: %v", err)
		}
		if ev.Data == nil {
			continue
		}
		r := gjson.ParseBytes(append([]byte(nil), ev.Data...))
		if r.Get("jsonrpc").Str != "2.0" || r.Get("id").Raw != s.id {
			s.t.Fatalf("event does not echo id %s: %s", s.id, ev.Data)
		}
		return r, true
	}
}

// onlyError checks that the stream is one error event of code, in a 200
// event stream, as every caller dialect gets a streaming call's error.
func (s *eventStream) onlyError(d dialect.ID, code int) gjson.Result {
	s.t.Helper()
	if s.res.StatusCode != http.StatusOK || s.res.Header.Get("Content-Type") != "text/event-stream" {
		s.t.Fatalf("a streaming call's error must come as an event stream, got HTTP %d %q", s.res.StatusCode, s.res.Header.Get("Content-Type"))
	}
	events := s.all()
	if len(events) != 1 {
		s.t.Fatalf("want one error event, got %v", events)
	}
	return wantError(s.t, events[0], d, code)
}

// all reads the rest of the stream.
func (s *eventStream) all() []gjson.Result {
	var out []gjson.Result
	for {
		r, ok := s.next()
		if !ok {
			return out
		}
		out = append(out, r)
	}
}

// kindOf names an event result in either dialect.
func kindOf(d dialect.ID, result gjson.Result) string {
	if d == dialect.V03 {
		return result.Get("kind").Str
	}
	for _, k := range []string{"task", "message", "statusUpdate", "artifactUpdate"} {
		if result.Get(k).Exists() {
			return k
		}
	}
	return ""
}

func stateOf(d dialect.ID, result gjson.Result) string {
	if d == dialect.V03 {
		return result.Get("status.state").Str
	}
	if t := result.Get("task"); t.Exists() {
		return t.Get("status.state").Str
	}
	return result.Get("statusUpdate.status.state").Str
}

func TestStreamSubmittedToCompleted(t *testing.T) {
	forEachPair(t, func(t *testing.T, c caller, g *testGateway) {
		s := g.stream(`"st"`, c.method(dialect.SendStreamingMessage), c.send("m1", c.text("run the report"), ""))
		if ct := s.res.Header.Get("Content-Type"); ct != "text/event-stream" {
			t.Fatalf("Content-Type %q", ct)
		}
		events := s.all()
		if len(events) < 3 {
			t.Fatalf("want at least task, working and completed events, got %d", len(events))
		}
		var kinds, states []string
		for i, e := range events {
			r := mustResult(t, e)
			noForeignKeys(t, c.d, r.Raw)
			kinds = append(kinds, kindOf(c.d, r))
			states = append(states, stateOf(c.d, r))
			if c.d == dialect.V03 && r.Get("kind").Str == "status-update" {
				final := r.Get("final")
				if !final.IsBool() {
					t.Fatalf("0.x status update without final: %s", r.Raw)
				}
				if final.Bool() != (i == len(events)-1) {
					t.Fatalf("event %d final=%v, want final only on the last: %s", i, final.Bool(), r.Raw)
				}
			}
		}
		if states[len(states)-1] != c.state("completed") {
			t.Fatalf("last state %q; kinds %v states %v", states[len(states)-1], kinds, states)
		}
		wantArtifact := map[dialect.ID]string{dialect.V03: "artifact-update", dialect.V10: "artifactUpdate"}[c.d]
		if !strings.Contains(strings.Join(kinds, ","), wantArtifact) {
			t.Fatalf("no artifact update in %v", kinds)
		}
	})
}

func TestStreamedDirectMessage(t *testing.T) {
	forEachPair(t, func(t *testing.T, c caller, g *testGateway) {
		events := g.stream("5", c.method(dialect.SendStreamingMessage), c.send("m1", c.text("is it on?"), "")).all()
		if len(events) != 1 {
			t.Fatalf("want exactly one message event, got %d", len(events))
		}
		r := mustResult(t, events[0])
		if kindOf(c.d, r) != "message" {
			t.Fatalf("not a message: %s", r.Raw)
		}
	})
}

// TestStreamNotBuffered proves the gateway flushes each event as it comes:
// the backend sends its first events and then blocks until the test has
// read them through the gateway.
func TestStreamNotBuffered(t *testing.T) {
	forEachCallerOf(t, backends, func(t *testing.T, c caller, b backendKind) {
		hold := make(chan struct{})
		g := newGateway(t, b.handler(t, hold), b.version)
		s := g.stream("1", c.method(dialect.SendStreamingMessage), c.send("m1", c.text("wait for it"), ""))
		got := make(chan gjson.Result, 1)
		go func() {
			// The working event arrives while the backend is held.
			for {
				r, ok := s.next()
				if !ok || stateOf(c.d, r.Get("result")) == c.state("working") {
					got <- r
					return
				}
			}
		}()
		select {
		case r := <-got:
			if !r.Exists() {
				t.Fatal("stream ended before the working event")
			}
		case <-time.After(10 * time.Second):
			t.Fatal("gateway is buffering: the first events did not arrive while the backend was still working")
		}
		close(hold)
		events := s.all()
		if len(events) == 0 || stateOf(c.d, events[len(events)-1].Get("result")) != c.state("completed") {
			t.Fatalf("after release the stream must end completed: %v", events)
		}
	})
}

// TestStreamEventsSentTogetherArriveTogether: events the backend sent in
// one write are flushed together, and none of them waits for the backend's
// next move. The backend sends three (a working update and two artifact
// chunks) and then blocks until the caller has read all three translated.
// The caller reads on its own goroutine: a gateway that never flushed would
// not even send the response's head.
func TestStreamEventsSentTogetherArriveTogether(t *testing.T) {
	for _, c := range callers {
		t.Run(c.d.String(), func(t *testing.T) {
			hold := make(chan struct{})
			g := newGateway(t, scripted(func(w http.ResponseWriter, r *http.Request, id string) {
				w.Header().Set("Content-Type", "text/event-stream")
				chunk := func(text string, last bool) string {
					return `data: {"jsonrpc":"2.0","id":` + id + `,"result":{"kind":"artifact-update","taskId":"t1","contextId":"c1","artifact":{"artifactId":"a1","parts":[{"kind":"text","text":"` + text + `"}]},"append":true,"lastChunk":` + strconv.FormatBool(last) + `}}` + "\n\n"
				}
				sseWrite(w, working(id)+chunk("to", false)+chunk("kens", true))
				select {
				case <-hold:
				case <-r.Context().Done():
					return
				}
				sseWrite(w, `data: {"jsonrpc":"2.0","id":`+id+`,"result":{"kind":"status-update","taskId":"t1","contextId":"c1","status":{"state":"completed"},"final":true}}`+"\n\n")
			}), dialect.Version03)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			type read struct {
				events [][]byte // data of each event, in order
				err    error
			}
			first, rest := make(chan read, 1), make(chan read, 1)
			go func() {
				res, err := http.DefaultClient.Do(g.streamRequest(ctx, "4", c.method(dialect.SendStreamingMessage), c.send("m1", c.text("go"), "")))
				if err != nil {
					first <- read{err: err}
					return
				}
				defer res.Body.Close()
				rd := sseframe.NewReader(res.Body, 1<<20)
				var got read
				for out := first; ; {
					ev, err := rd.Next()
					if err != nil {
						got.err = err
						out <- got
						return
					}
					if ev.Data == nil {
						continue
					}
					if got.events = append(got.events, bytes.Clone(ev.Data)); len(got.events) == 3 && out == first {
						out <- got
						got, out = read{}, rest
					}
				}
			}()
			var together read
			select {
			case together = <-first:
			case <-time.After(10 * time.Second):
				close(hold) // lets the exchange end, so the test does
				t.Fatal("gateway is buffering: events the backend sent together did not all arrive while it was still working")
			}
			if len(together.events) != 3 {
				t.Fatalf("the stream ended after %d of the 3 events the backend sent together: %v", len(together.events), together.err)
			}
			for i, data := range together.events {
				if e := gjson.ParseBytes(data); e.Get("id").Raw != "4" || !e.Get("result").Exists() {
					t.Errorf("event %d is not a result for the caller's id 4: %s", i, data)
				}
			}
			close(hold)
			after := <-rest
			if len(after.events) != 1 || after.err != io.EOF || stateOf(c.d, gjson.ParseBytes(after.events[0]).Get("result")) != c.state("completed") {
				t.Fatalf("after release the stream must end with the completed update: %q, %v", after.events, after.err)
			}
		})
	}
}

func TestStreamInputRequiredThenStreamingContinuation(t *testing.T) {
	forEachPair(t, func(t *testing.T, c caller, g *testGateway) {
		events := g.stream("1", c.method(dialect.SendStreamingMessage), c.send("m1", c.text("input please"), "")).all()
		last := mustResult(t, events[len(events)-1])
		if stateOf(c.d, last) != c.state("input-required") {
			t.Fatalf("last event: %s", last.Raw)
		}
		if c.d == dialect.V03 && last.Get("kind").Str == "status-update" && !last.Get("final").Bool() {
			t.Fatalf("input-required that ends the stream must be final for 0.x: %s", last.Raw)
		}
		taskID := last.Get("taskId").Str
		if c.d == dialect.V10 {
			taskID = last.Get("statusUpdate.taskId").Str
		}
		if taskID == "" {
			taskID = last.Get("id").Str + last.Get("task.id").Str
		}
		more := g.stream("2", c.method(dialect.SendStreamingMessage), c.continuation("m2", taskID, "Ada")).all()
		end := mustResult(t, more[len(more)-1])
		if stateOf(c.d, end) != c.state("completed") {
			t.Fatalf("continuation ended %s", end.Raw)
		}
	})
}

func TestResubscribeMidTaskThenCancel(t *testing.T) {
	forEachPair(t, func(t *testing.T, c caller, g *testGateway) {
		task := c.task(t, mustResult(t, g.call("1", c.method(dialect.SendMessage), c.send("m1", c.text("wait"), c.nonBlocking()))))
		id := task.Get("id").Str
		s := g.stream("2", c.method(dialect.SubscribeToTask), `{"id":"`+id+`"}`)
		first, ok := s.next()
		if !ok {
			t.Fatal("subscription ended at once")
		}
		r := mustResult(t, first)
		if c.d == dialect.V10 && !r.Get("task").Exists() {
			t.Fatalf("a 1.0 subscription must start with the task: %s", r.Raw)
		}
		mustResult(t, g.call("3", c.method(dialect.CancelTask), `{"id":"`+id+`"}`))
		events := s.all()
		if len(events) == 0 || stateOf(c.d, mustResult(t, events[len(events)-1])) != c.state("canceled") {
			t.Fatalf("subscription must end canceled, got %v", events)
		}
		if c.d == dialect.V10 {
			g.stream("4", c.method(dialect.SubscribeToTask), `{"id":"`+id+`"}`).onlyError(c.d, -32004)
		}
	})
}

// TestStreamErrorBeforeBackend: an error found before the backend is
// called reaches a streaming caller as an error event too.
func TestStreamErrorBeforeBackend(t *testing.T) {
	forEachPair(t, func(t *testing.T, c caller, g *testGateway) {
		g.stream("1", c.method(dialect.SendStreamingMessage), `{"message":{"messageId":"","parts":[]}}`).onlyError(c.d, -32602)
		g.stream("2", c.method(dialect.SubscribeToTask), `{}`).onlyError(c.d, -32602)
	})
}

func TestStreamUnknownTask(t *testing.T) {
	forEachPair(t, func(t *testing.T, c caller, g *testGateway) {
		g.stream("1", c.method(dialect.SubscribeToTask), `{"id":"nope"}`).onlyError(c.d, -32001)
	})
}
