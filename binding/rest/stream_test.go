package rest

import (
	"bufio"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
)

// streamCore writes a JSON-RPC event stream, one event per step, each step
// waiting for the test's go-ahead: an event still held by the front end
// would never reach the test, which fails on its timeout.
type streamCore struct {
	events []string
	next   chan struct{}
	werr   chan error // the error of each Write, after the last event too
}

func (c *streamCore) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	for _, ev := range c.events {
		<-c.next
		_, err := io.WriteString(w, ev)
		_ = rc.Flush()
		c.werr <- err
	}
}

func readEvent(t *testing.T, br *bufio.Reader) string {
	t.Helper()
	got := make(chan string, 1)
	go func() {
		var b strings.Builder
		for {
			line, err := br.ReadString('\n')
			b.WriteString(line)
			if err != nil || line == "\n" {
				got <- b.String()
				return
			}
		}
	}()
	select {
	case s := <-got:
		return s
	case <-time.After(10 * time.Second):
		t.Fatal("the event did not arrive: the front end holds it back")
		return ""
	}
}

// TestStreamRewrittenEventByEvent: each JSON-RPC envelope reaches the caller
// as its bare result while the core is still streaming; a keep-alive passes
// as is; an error event becomes {"error": Status} and ends the stream, after
// which the core's writes fail so it stops.
func TestStreamRewrittenEventByEvent(t *testing.T) {
	core := &streamCore{
		events: []string{
			"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"task\":{\"id\":\"t1\"}}}\n\n",
			": keep-alive\n\n",
			"id: 7\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"statusUpdate\":{\"taskId\":\"t1\"}}}\n\n",
			"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32603,\"message\":\"backend went away\"}}\n\n",
			"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"task\":{\"id\":\"late\"}}}\n\n",
		},
		next: make(chan struct{}, 1), werr: make(chan error, 8),
	}
	srv := httptest.NewServer(NewHandler(core, Options{}))
	defer srv.Close()
	core.next <- struct{}{}
	res, err := http.Post(srv.URL+"/message:stream", "application/json", strings.NewReader(`{"message":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" || res.Header.Get("Cache-Control") != "no-cache" {
		t.Fatalf("HTTP %d %v", res.StatusCode, res.Header)
	}
	br := bufio.NewReader(res.Body)
	want := []string{
		"data: {\"task\":{\"id\":\"t1\"}}\n\n",
		": keep-alive\n\n",
		"id: 7\ndata: {\"statusUpdate\":{\"taskId\":\"t1\"}}\n\n",
	}
	for i, w := range want {
		if got := readEvent(t, br); got != w {
			t.Fatalf("event %d: %q, want %q", i, got, w)
		}
		if err := <-core.werr; err != nil {
			t.Fatal(err)
		}
		core.next <- struct{}{}
	}
	if got := readEvent(t, br); !strings.HasPrefix(got, `data: {"error":{"code":500,"status":"INTERNAL","message":"backend went away"`) {
		t.Fatalf("error event: %q", got)
	}
	<-core.werr
	core.next <- struct{}{}
	if err := <-core.werr; err == nil {
		t.Fatal("the core could still write after the error event ended the stream")
	}
	if rest, _ := io.ReadAll(br); len(rest) != 0 {
		t.Fatalf("after the error event: %q", rest)
	}
}

// TestStreamFirstEventError: a stream whose first event is an error (an
// unknown task to subscribe to) is answered as a plain REST error, so the
// caller sees the HTTP status.
func TestStreamFirstEventError(t *testing.T) {
	core := &streamCore{
		events: []string{"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32001,\"message\":\"Task not found\"}}\n\n"},
		next:   make(chan struct{}, 1), werr: make(chan error, 2),
	}
	core.next <- struct{}{}
	w := httptest.NewRecorder()
	NewHandler(core, Options{}).ServeHTTP(w, httptest.NewRequest("GET", "/tasks/nope:subscribe", nil))
	if w.Code != http.StatusNotFound || w.Header().Get("Content-Type") != "application/json" || !strings.Contains(w.Body.String(), `"reason":"TASK_NOT_FOUND"`) {
		t.Fatalf("HTTP %d %v %s", w.Code, w.Header(), w.Body)
	}
}

// TestV03StreamErrors: on the 0.3 routes an error that ends a stream is an
// "error" event whose data is the {code,message,data} body, what
// @a2a-js/sdk 0.3's RestTransport turns into its A2A error; a first-event
// error is a plain 0.3 error answer with its HTTP status.
func TestV03StreamErrors(t *testing.T) {
	core := &streamCore{
		events: []string{
			"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"task\":{\"id\":\"t1\",\"contextId\":\"c1\",\"status\":{\"state\":\"TASK_STATE_WORKING\"}}}}\n\n",
			"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32001,\"message\":\"Task not found\",\"data\":[{\"@type\":\"type.googleapis.com/google.rpc.ErrorInfo\",\"reason\":\"TASK_NOT_FOUND\",\"domain\":\"a2a-protocol.org\",\"metadata\":{\"taskId\":\"t1\"}}]}}\n\n",
		},
		next: make(chan struct{}, 2), werr: make(chan error, 4),
	}
	core.next <- struct{}{}
	core.next <- struct{}{}
	w := httptest.NewRecorder()
	NewHandler(core, Options{}).ServeHTTP(w, httptest.NewRequest("GET", "/v1/tasks/t1:subscribe", nil))
	want := "event: error\ndata: {\"code\":-32001,\"message\":\"Task not found\",\"data\":{\"taskId\":\"t1\"}}\n\n"
	if w.Code != http.StatusOK || !strings.HasSuffix(w.Body.String(), want) || strings.Count(w.Body.String(), "data:") != 2 {
		t.Fatalf("HTTP %d: %q, want it to end with %q", w.Code, w.Body, want)
	}

	first := &streamCore{
		events: []string{"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32001,\"message\":\"Task not found\"}}\n\n"},
		next:   make(chan struct{}, 1), werr: make(chan error, 2),
	}
	first.next <- struct{}{}
	w = httptest.NewRecorder()
	NewHandler(first, Options{}).ServeHTTP(w, httptest.NewRequest("GET", "/v1/tasks/nope:subscribe", nil))
	if w.Code != http.StatusNotFound || w.Header().Get("Content-Type") != "application/json" || w.Body.String() != `{"code":-32001,"message":"Task not found"}` {
		t.Fatalf("HTTP %d %v %s", w.Code, w.Header(), w.Body)
	}
}

// TestStreamCorePanics: a core that panics mid-stream (as net/http's
// ErrAbortHandler does) still lets the relay goroutine end.
func TestStreamCorePanics(t *testing.T) {
	core := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"task\":{}}}\n\n")
		panic(http.ErrAbortHandler)
	})
	w := httptest.NewRecorder()
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the panic was swallowed")
			}
		}()
		NewHandler(core, Options{}).ServeHTTP(w, httptest.NewRequest("GET", "/tasks/t:subscribe", nil))
	}()
	if !strings.Contains(w.Body.String(), `data: {"task":{}}`) {
		t.Fatalf("the event before the panic: %q", w.Body.String())
	}
}

// TestStreamFlushWaitsForTheCallersWrite: the core's flush returns once
// the relay has written what the core wrote to the caller, with the
// caller's write error: a caller cut by its write deadline is seen at the
// flush, not only at a next write that may never come.
func TestStreamFlushWaitsForTheCallersWrite(t *testing.T) {
	flushed := make(chan error, 1)
	core := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		// A deadline already past: the relay's write to the caller fails.
		if err := rc.SetWriteDeadline(time.Now()); err != nil {
			t.Error(err)
		}
		if _, err := io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"task\":{\"id\":\"t1\"}}}\n\n"); err != nil {
			t.Error(err)
		}
		flushed <- rc.Flush()
	})
	srv := httptest.NewServer(NewHandler(core, Options{}))
	defer srv.Close()
	client := &http.Client{Timeout: 10 * time.Second}
	if res, err := client.Post(srv.URL+"/message:stream", "application/json", strings.NewReader(`{"message":{}}`)); err == nil {
		res.Body.Close()
	}
	if err := <-flushed; !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the flush returned %v, want the caller's write deadline passing", err)
	}
}
