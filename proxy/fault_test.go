package proxy

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/testnet"
)

// scripted is a backend that misbehaves on purpose. It answers every
// request with fn, after reading the JSON-RPC request id.
func scripted(fn func(w http.ResponseWriter, r *http.Request, id string)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.NotFound(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		fn(w, r, gjson.GetBytes(body, "id").Raw)
	})
}

func sseWrite(w http.ResponseWriter, frames ...string) {
	for _, f := range frames {
		_, _ = io.WriteString(w, f)
		http.NewResponseController(w).Flush()
	}
}

func hijackAndClose(w http.ResponseWriter, partial string) {
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	_, _ = buf.WriteString(partial)
	_ = buf.Flush()
	_ = conn.(*net.TCPConn).SetLinger(0)
	_ = conn.Close()
}

// rawReply takes the connection over and lets write answer on it byte by
// byte, as a backend that does not speak HTTP properly would.
func rawReply(w http.ResponseWriter, write func(conn net.Conn)) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	write(conn)
}

func working(id string) string {
	return `data: {"jsonrpc":"2.0","id":` + id + `,"result":{"kind":"status-update","taskId":"t1","contextId":"c1","status":{"state":"working"},"final":false}}` + "\n\n"
}

// checkNoLeak fails when goroutines started during a test outlive it.
func checkNoLeak(t *testing.T) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		http.DefaultClient.CloseIdleConnections()
		deadline := time.Now().Add(5 * time.Second)
		for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
			runtime.Gosched()
			time.Sleep(10 * time.Millisecond) // polling a count, not synchronising
		}
		if n := runtime.NumGoroutine(); n > before {
			buf := make([]byte, 1<<16)
			t.Errorf("goroutines leaked: %d before, %d after\n%s", before, n, buf[:runtime.Stack(buf, true)])
		}
	})
}

// misbehaviour is a way a backend fails, and the error a caller must
// get for it.
type misbehaviour struct {
	name    string
	backend func(w http.ResponseWriter, r *http.Request, id string)
	code    int
	message string
}

// forEachFault runs check for each fault and caller, against a gateway
// (configured by configure) in front of a 0.3 backend that misbehaves so,
// and checks that nothing is left running.
func forEachFault(t *testing.T, faults []misbehaviour, configure func(*AgentConfig), check func(t *testing.T, c caller, g *testGateway, f misbehaviour)) {
	for _, f := range faults {
		for _, c := range callers {
			t.Run(f.name+"/"+c.d.String(), func(t *testing.T) {
				checkNoLeak(t)
				check(t, c, newGateway(t, scripted(f.backend), dialect.Version03, configure), f)
			})
		}
	}
}

func TestUnaryBackendFaults(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	faults := []misbehaviour{
		{"invalid JSON", func(w http.ResponseWriter, r *http.Request, id string) { io.WriteString(w, "<html>oops") }, -32006, "not valid JSON"},
		{"wrong shape", func(w http.ResponseWriter, r *http.Request, id string) {
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"result":{"foo":1}}`)
		}, -32006, "not valid A2A"},
		{"not JSON-RPC", func(w http.ResponseWriter, r *http.Request, id string) { io.WriteString(w, `{"hello":"world"}`) }, -32006, "JSON-RPC"},
		{"HTTP 500 empty", func(w http.ResponseWriter, r *http.Request, id string) { w.WriteHeader(500) }, -32603, "HTTP 500"},
		{"HTTP 502 text", func(w http.ResponseWriter, r *http.Request, id string) { http.Error(w, "bad gateway", 502) }, -32603, "HTTP 502"},
		{"HTTP 503 JSON-RPC error", func(w http.ResponseWriter, r *http.Request, id string) {
			w.WriteHeader(503)
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":-32603,"message":"overloaded, try later"}}`)
		}, -32603, "overloaded, try later"},
		{"reset mid-body", func(w http.ResponseWriter, r *http.Request, id string) {
			hijackAndClose(w, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{\"jsonrpc\":\"2.0\",")
		}, -32603, `backend "test"`},
	}
	// Each timeout is tested alone, the other out of its way: a loaded
	// machine may take longer than either to pass a prompt answer on.
	slowHead := []misbehaviour{
		{"slow headers", func(w http.ResponseWriter, r *http.Request, id string) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}, -32603, "did not answer within agents[].backend.response_header_timeout (200ms)"},
	}
	slowBody := []misbehaviour{
		{"stall mid-body", func(w http.ResponseWriter, r *http.Request, id string) {
			rawReply(w, func(conn net.Conn) {
				_, _ = io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\":\"2.0\",")
				_, _ = io.Copy(io.Discard, conn) // until the gateway hangs up
			})
		}, -32603, "did not finish its reply within agents[].backend.response_timeout (1s)"},
		{"dribble", func(w http.ResponseWriter, r *http.Request, id string) {
			rawReply(w, func(conn net.Conn) {
				_, _ = io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n")
				tick := time.NewTicker(20 * time.Millisecond) // the backend's pace, not synchronisation
				defer tick.Stop()
				for range tick.C {
					if _, err := io.WriteString(conn, " "); err != nil {
						return // the gateway hung up
					}
				}
			})
		}, -32603, "did not finish its reply within agents[].backend.response_timeout (1s)"},
	}
	// A size limit, not a clock, must stop this backend: on a loaded machine its
	// first MiB of headers can take longer than the other cases' 200 ms.
	oversized := []misbehaviour{
		{"20 MB of headers", func(w http.ResponseWriter, r *http.Request, id string) {
			rawReply(w, func(conn net.Conn) {
				block := strings.Repeat("X-Filler: "+strings.Repeat("a", 1000)+"\r\n", 64)
				_, _ = io.WriteString(conn, "HTTP/1.1 200 OK\r\n")
				for range 20 << 20 / len(block) {
					if _, err := io.WriteString(conn, block); err != nil {
						return // the gateway hung up
					}
				}
				_, _ = io.WriteString(conn, "Content-Length: 2\r\n\r\n{}")
			})
		}, -32603, "server response headers exceeded 1048576 bytes"},
	}
	check := func(t *testing.T, c caller, g *testGateway, f misbehaviour) {
		e := wantErrorSaying(t, g.call("1", c.method(dialect.GetTask), `{"id":"t1"}`), c.d, f.code, f.message)
		if strings.Contains(e.Raw, g.backend.URL) || strings.Contains(e.Raw, "127.0.0.1") {
			t.Fatalf("error leaks the backend's address: %s", e.Raw)
		}
	}
	withTimeouts := func(header, reply time.Duration) func(*AgentConfig) {
		return func(a *AgentConfig) {
			a.Backend.ResponseHeaderTimeout = header
			a.Backend.ResponseTimeout = reply
			a.Tasks.AllowUnknown = true // the task is the scripted backend's
		}
	}
	forEachFault(t, faults, withTimeouts(time.Minute, time.Minute), check)
	forEachFault(t, slowHead, withTimeouts(200*time.Millisecond, time.Minute), check)
	// The head comes at once, but the wait for it cannot outlast the reply's:
	// the reply's bound has to leave a slow machine time to pass the head on.
	forEachFault(t, slowBody, withTimeouts(time.Second, time.Second), check)
	forEachFault(t, oversized, withTimeouts(time.Minute, time.Minute), check)
}

func TestBackendRefused(t *testing.T) {
	addr := testnet.RefusedAddr(t)
	for _, c := range callers {
		g := newGateway(t, http.NotFoundHandler(), dialect.Version10, func(a *AgentConfig) {
			a.Backend.URL = "http://" + addr + "/"
			a.Tasks.AllowUnknown = true
		})
		wantErrorSaying(t, g.call("1", c.method(dialect.GetTask), `{"id":"t1"}`), c.d, -32603, "connection refused")
		s := g.stream("2", c.method(dialect.SendStreamingMessage), c.send("m", c.text("hi"), ""))
		s.onlyError(c.d, -32603)
	}
}

func TestStreamBackendFaults(t *testing.T) {
	faults := []misbehaviour{
		{"silent mid-stream", func(w http.ResponseWriter, r *http.Request, id string) {
			w.Header().Set("Content-Type", "text/event-stream")
			sseWrite(w, working(id))
			<-r.Context().Done()
		}, -32603, "sent nothing for"},
		{"invalid JSON event", func(w http.ResponseWriter, r *http.Request, id string) {
			w.Header().Set("Content-Type", "text/event-stream")
			sseWrite(w, working(id), "data: {not json\n\n")
		}, -32006, "not a JSON-RPC response"},
		{"wrong shape event", func(w http.ResponseWriter, r *http.Request, id string) {
			w.Header().Set("Content-Type", "text/event-stream")
			sseWrite(w, working(id), `data: {"jsonrpc":"2.0","id":`+id+`,"result":{"kind":"mystery"}}`+"\n\n")
		}, -32006, "unknown kind"},
		{"closed without terminal event", func(w http.ResponseWriter, r *http.Request, id string) {
			w.Header().Set("Content-Type", "text/event-stream")
			sseWrite(w, working(id))
		}, -32603, "ended the stream before"},
		{"dropped mid-event", func(w http.ResponseWriter, r *http.Request, id string) {
			hijackAndClose(w, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n"+working(id)+`data: {"jsonrpc":`)
		}, -32603, "dropped the stream"},
		{"oversized event", func(w http.ResponseWriter, r *http.Request, id string) {
			w.Header().Set("Content-Type", "text/event-stream")
			sseWrite(w, working(id), "data: "+strings.Repeat("x", 64<<10)+"\n\n")
		}, -32006, "larger than"},
		{"backend error event", func(w http.ResponseWriter, r *http.Request, id string) {
			w.Header().Set("Content-Type", "text/event-stream")
			sseWrite(w, working(id), `data: {"jsonrpc":"2.0","id":`+id+`,"error":{"code":-32001,"message":"Task not found","data":{"taskId":"t1"}}}`+"\n\n")
		}, -32001, "Task not found"},
	}
	forEachFault(t, faults, func(a *AgentConfig) {
		a.Backend.StreamIdleTimeout = 300 * time.Millisecond
		a.MaxEventBytes = 32 << 10
	}, func(t *testing.T, c caller, g *testGateway, f misbehaviour) {
		events := g.stream("9", c.method(dialect.SendStreamingMessage), c.send("m", c.text("hi"), "")).all()
		if len(events) != 2 {
			t.Fatalf("want the working event and an error event, got %d: %v", len(events), events)
		}
		mustResult(t, events[0])
		wantErrorSaying(t, events[1], c.d, f.code, f.message)
	})
}

// TestCallerDisconnectCancelsBackend proves nothing keeps running for a
// caller that went away, in a unary call and in a stream.
func TestCallerDisconnectCancelsBackend(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "unary", true: "stream"}[stream], func(t *testing.T) {
			checkNoLeak(t)
			started, canceled := make(chan struct{}), make(chan struct{})
			g := newGateway(t, scripted(func(w http.ResponseWriter, r *http.Request, id string) {
				if stream {
					w.Header().Set("Content-Type", "text/event-stream")
					sseWrite(w, working(id))
				}
				close(started)
				<-r.Context().Done()
				close(canceled)
			}), dialect.Version03, func(a *AgentConfig) { a.Tasks.AllowUnknown = true })
			conn, err := net.Dial("tcp", strings.TrimPrefix(strings.TrimSuffix(g.url, "/"), "http://"))
			if err != nil {
				t.Fatal(err)
			}
			method := "tasks/get"
			params := `{"id":"t1"}`
			if stream {
				method, params = "message/stream", callers[0].send("m", callers[0].text("hi"), "")
			}
			body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":` + params + `}`
			io.WriteString(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+body)
			<-started
			if stream {
				// The working event reaches the caller before it hangs up.
				if _, err := bufio.NewReader(conn).ReadString('}'); err != nil {
					t.Fatal(err)
				}
			}
			conn.Close()
			select {
			case <-canceled:
			case <-time.After(10 * time.Second):
				t.Fatal("the backend call was not canceled when the caller went away")
			}
		})
	}
}

// TestBodylessCallerIsCut: a caller that declares a body and sends none is
// answered, within server.read_timeout, with an error that names the
// limit, and its connection is closed: nothing waits on it any more.
func TestBodylessCallerIsCut(t *testing.T) {
	checkNoLeak(t)
	g := newGatewayOpts(t, http.NotFoundHandler(), dialect.Version03, Options{ReadTimeout: 100 * time.Millisecond})
	conn, err := net.Dial("tcp", strings.TrimPrefix(strings.TrimSuffix(g.url, "/"), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// A guard against a hang, far past the configured limit.
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, "POST / HTTP/1.1\r\nHost: gateway.test\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"+`{"jsonrpc":"2.0",`); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	e := wantError(t, gjson.ParseBytes(b), dialect.V03, -32600)
	if want := "the request body did not arrive within server.read_timeout (100ms)"; e.Get("message").Str != want {
		t.Fatalf("message %q, want %q", e.Get("message").Str, want)
	}
	// The gateway hangs up rather than wait for the rest.
	if n, err := br.Read(make([]byte, 1)); err == nil {
		t.Fatalf("the connection stayed open (read %d bytes)", n)
	}
}

// TestReadTimeoutSparesStreams: the body's read deadline ends with the
// body: a stream answered for longer than read_timeout is not cut.
func TestReadTimeoutSparesStreams(t *testing.T) {
	const readTimeout = 50 * time.Millisecond
	g := newGatewayOpts(t, scripted(func(w http.ResponseWriter, r *http.Request, id string) {
		sseHeaders(w.Header())
		sseWrite(w, working(id))
		// Well past the read timeout before the end: a deadline left on
		// the connection would have canceled the call by then.
		<-time.After(4 * readTimeout)
		sseWrite(w, `data: {"jsonrpc":"2.0","id":`+id+`,"result":{"kind":"status-update","taskId":"t1","contextId":"c1","status":{"state":"completed"},"final":true}}`+"\n\n")
	}), dialect.Version03, Options{ReadTimeout: readTimeout})
	events := g.stream("1", "message/stream", callers[0].send("m", callers[0].text("hi"), "")).all()
	if len(events) != 2 || stateOf(dialect.V03, events[1].Get("result")) != "completed" {
		t.Fatalf("the stream was cut: %v", events)
	}
}

// signalHandler is a log handler that reports the records it was given.
type signalHandler struct{ records chan slog.Record }

func (h signalHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h signalHandler) Handle(_ context.Context, r slog.Record) error {
	h.records <- r.Clone()
	return nil
}
func (h signalHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h signalHandler) WithGroup(string) slog.Handler      { return h }

// TestStreamCallerThatDoesNotRead: a stream caller that takes no event
// within server.stream_write_timeout is cut, logged and counted as a caller
// error, and the backend's stream is let go.
func TestStreamCallerThatDoesNotRead(t *testing.T) {
	for _, tc := range []struct{ name, path, body string }{
		{"jsonrpc", "/", rpc("message/stream", `{"message":`+msg03+`}`)},
		{"rest", "/message:stream", `{"message":` + msg10 + `}`},
		{"rest 0.3", "/v1/message:stream", `{"message":{"messageId":"m1","role":"ROLE_USER","content":[{"text":"hi"}]}}`},
	} {
		t.Run(tc.name, func(t *testing.T) { testCallerThatDoesNotRead(t, tc.path, tc.body) })
	}
}

// testCallerThatDoesNotRead posts body to path and reads nothing of the
// stream it answers: the stream must be cut at the write timeout, logged,
// counted as the caller's error, and the backend's stream let go.
func testCallerThatDoesNotRead(t *testing.T, path, body string) {
	backendDone := make(chan struct{})
	big := strings.Repeat("a", 256<<10)
	backend := floodingBackend(backendDone, `{"kind":"status-update","taskId":"t1","contextId":"c1","status":{"state":"working","message":{"kind":"message","messageId":"m","role":"agent","parts":[{"kind":"text","text":"`+big+`"}]}},"final":false}`)
	records := make(chan slog.Record, 1024)
	g := newGatewayOpts(t, backend, dialect.Version03, Options{
		Logger:             slog.New(signalHandler{records}),
		StreamWriteTimeout: 100 * time.Millisecond,
	})
	conn, err := net.Dial("tcp", strings.TrimPrefix(strings.TrimSuffix(g.url, "/"), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "POST "+path+" HTTP/1.1\r\nHost: gateway.test\r\nContent-Type: application/json\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+body); err != nil {
		t.Fatal(err)
	}
	// The caller reads nothing from here on.
	awaitCallerCut(t, records, backendDone)
}

// floodingBackend answers a stream call with events whose result is
// result, as fast as the gateway takes them, until the gateway lets the
// stream go; then it closes done.
func floodingBackend(done chan struct{}, result string) http.Handler {
	return scripted(func(w http.ResponseWriter, r *http.Request, id string) {
		defer close(done)
		sseHeaders(w.Header())
		ev := `data: {"jsonrpc":"2.0","id":` + id + `,"result":` + result + "}\n\n"
		for r.Context().Err() == nil {
			if _, err := io.WriteString(w, ev); err != nil {
				return
			}
			if http.NewResponseController(w).Flush() != nil {
				return
			}
		}
	})
}

// awaitCallerCut waits for the log of a call whose caller did not read: it
// must say the caller was cut at the stream write timeout and count the
// call as the caller's error, and the backend's stream (backendDone) must
// be let go.
func awaitCallerCut(t *testing.T, records <-chan slog.Record, backendDone <-chan struct{}) {
	t.Helper()
	guard := time.After(20 * time.Second) // against a hang, far past the limit
	var cut bool
	for {
		select {
		case r := <-records:
			if strings.Contains(r.Message, "server.stream_write_timeout") {
				cut = true
			}
			if r.Message == "call" {
				var outcome string
				r.Attrs(func(a slog.Attr) bool {
					if a.Key == "outcome" {
						outcome = a.Value.String()
					}
					return true
				})
				if !cut || outcome != outcomeCallerError {
					t.Fatalf("the call ended with outcome %q, cut logged: %v", outcome, cut)
				}
				select {
				case <-backendDone:
				case <-guard:
					t.Fatal("the backend's stream was not let go")
				}
				return
			}
		case <-guard:
			t.Fatal("the stream was not cut")
		}
	}
}
