package proxy

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/tidwall/gjson"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/a2agate/gateway/dialect"
	sseframe "github.com/a2agate/gateway/internal/sse"
)

// TestBackendRedirectIsNotFollowed: a backend answering the JSON-RPC call
// with a redirect, to another host, is refused with the status it sent;
// the other host never sees the call, in a unary call or a stream.
func TestBackendRedirectIsNotFollowed(t *testing.T) {
	var elsewhere atomic.Int64
	other := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"kind":"task","id":"t1","contextId":"c1","status":{"state":"working"}}}`)
	}))
	for _, status := range []int{http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		for _, c := range callers {
			t.Run(http.StatusText(status)+"/"+c.d.String(), func(t *testing.T) {
				g := newGateway(t, scripted(func(w http.ResponseWriter, r *http.Request, id string) {
					http.Redirect(w, r, other+"/steal", status)
				}), dialect.Version03, func(a *AgentConfig) { a.Tasks.AllowUnknown = true })
				e := wantErrorSaying(t, g.call("1", c.method(dialect.GetTask), `{"id":"t1"}`), c.d, -32603, "HTTP "+strconv.Itoa(status))
				if strings.Contains(e.Raw, other) {
					t.Fatalf("message: %s", e.Raw)
				}
				s := g.stream("2", c.method(dialect.SendStreamingMessage), c.send("m", c.text("hi"), ""))
				r := streamError(t, s)
				wantErrorSaying(t, r, c.d, -32603, "HTTP "+strconv.Itoa(status))
				if n := elsewhere.Load(); n != 0 {
					t.Fatalf("the redirect was followed %d times", n)
				}
			})
		}
	}
}

// TestStreamAnsweredWithStalledReply: a backend that answers a stream
// request with a plain JSON reply and then stalls mid-body is cut at
// response_timeout, with an error saying so.
func TestStreamAnsweredWithStalledReply(t *testing.T) {
	for _, c := range callers {
		t.Run(c.d.String(), func(t *testing.T) {
			checkNoLeak(t)
			g := newGateway(t, scripted(func(w http.ResponseWriter, r *http.Request, id string) {
				rawReply(w, func(conn net.Conn) {
					_, _ = io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\":\"2.0\",")
					_, _ = io.Copy(io.Discard, conn) // until the gateway hangs up
				})
			}), dialect.Version03, func(a *AgentConfig) {
				a.Backend.ResponseHeaderTimeout = 200 * time.Millisecond
				a.Backend.ResponseTimeout = 300 * time.Millisecond
				a.Backend.StreamIdleTimeout = time.Hour
			})
			s := g.stream("2", c.method(dialect.SendStreamingMessage), c.send("m", c.text("hi"), ""))
			r := streamError(t, s)
			if e := wantError(t, r, c.d, -32603); !strings.Contains(e.Get("message").Str, "did not finish its reply within agents[].backend.response_timeout (300ms)") {
				t.Fatalf("message: %s", e.Raw)
			}
		})
	}
}

// TestHostileStreamFraming: events framed with lone CRs are events; a raw
// NUL or a reply of HTML in an event is refused as what it is.
func TestHostileStreamFraming(t *testing.T) {
	terminal := func(id string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"result":{"kind":"status-update","taskId":"t1","contextId":"c1","status":{"state":"completed"},"final":true}}`
	}
	cases := []struct {
		name    string
		frames  func(id string) string
		message string // "" when the stream must pass
	}{
		{"lone CR line ends", func(id string) string {
			return "data: " + strings.TrimSuffix(working(id), "\n\n")[len("data: "):] + "\r\r" + "data: " + terminal(id) + "\r\r"
		}, ""},
		{"NUL in an event", func(id string) string {
			return working(id) + "data: {\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"result\":\x00}\n\n"
		}, "not a JSON-RPC response"},
		{"HTML event", func(id string) string { return working(id) + "data: <html><body>oops</body></html>\n\n" }, "not a JSON-RPC response"},
	}
	for _, tc := range cases {
		for _, c := range callers {
			t.Run(tc.name+"/"+c.d.String(), func(t *testing.T) {
				g := newGateway(t, scripted(func(w http.ResponseWriter, r *http.Request, id string) {
					w.Header().Set("Content-Type", "text/event-stream")
					sseWrite(w, tc.frames(id))
				}), dialect.Version03)
				events := g.stream("9", c.method(dialect.SendStreamingMessage), c.send("m", c.text("hi"), "")).all()
				if len(events) != 2 {
					t.Fatalf("want two events, got %d: %v", len(events), events)
				}
				mustResult(t, events[0])
				if tc.message == "" {
					mustResult(t, events[1])
					return
				}
				wantErrorSaying(t, events[1], c.d, -32006, tc.message)
			})
		}
	}
}

// TestHTMLReplyToJSONRPC: a backend answering 200 text/html is refused as
// a reply that is not JSON, in a unary call and a stream.
func TestHTMLReplyToJSONRPC(t *testing.T) {
	for _, c := range callers {
		t.Run(c.d.String(), func(t *testing.T) {
			g := newGateway(t, scripted(func(w http.ResponseWriter, r *http.Request, id string) {
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				io.WriteString(w, "<!doctype html><title>Login</title>")
			}), dialect.Version03, func(a *AgentConfig) { a.Tasks.AllowUnknown = true })
			wantErrorSaying(t, g.call("1", c.method(dialect.GetTask), `{"id":"t1"}`), c.d, -32006, "not valid JSON")
			s := g.stream("2", c.method(dialect.SendStreamingMessage), c.send("m", c.text("hi"), ""))
			r := streamError(t, s)
			wantErrorSaying(t, r, c.d, -32006, "not valid JSON")
		})
	}
}

// TestMalformedHTTPFromBackend: a reachable backend whose reply is not
// HTTP is not "unreachable": the error says what was wrong, and it is
// counted under invalid_reply. So is a reply for another request.
func TestMalformedHTTPFromBackend(t *testing.T) {
	cases := []struct {
		name, raw, says string
	}{
		{"not HTTP at all", "SSH-2.0-OpenSSH_9.6\r\n\r\n", "sent a reply that is not valid HTTP"},
		{"bad status code", "HTTP/1.1 abc OK\r\nContent-Length: 0\r\n\r\n", "sent a reply that is not valid HTTP"},
		{"negative length", "HTTP/1.1 200 OK\r\nContent-Length: -5\r\n\r\n", "sent a reply that is not valid HTTP"},
		{"conflicting lengths", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}", "sent a reply that is not valid HTTP"},
		{"another request's reply", "HTTP/1.1 200 OK\r\nContent-Length: 36\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}", "the backend answered another request"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			g := newGatewayOpts(t, scripted(func(w http.ResponseWriter, r *http.Request, id string) {
				rawReply(w, func(conn net.Conn) { _, _ = io.WriteString(conn, tc.raw) })
			}), dialect.Version03, Options{Metrics: NewMetrics(reg, nil)}, func(a *AgentConfig) { a.Tasks.AllowUnknown = true })
			e := wantError(t, g.call("1", "tasks/get", `{"id":"t1"}`), dialect.V03, -32603)
			if msg := e.Get("message").Str; !strings.Contains(msg, tc.says) || strings.Contains(msg, "unreachable") {
				t.Fatalf("message %q does not say %q", msg, tc.says)
			}
			if got := counterValue(t, reg, "a2a_gateway_backend_errors_total", map[string]string{"agent": "test", "kind": "invalid_reply"}); got != 1 {
				t.Fatalf("backend_errors_total{kind=invalid_reply} = %v, want 1", got)
			}
		})
	}
}

// TestBackendErrorMessageBounded: a backend's error message of a MiB
// reaches the caller cut to maxAgentMessage bytes, saying how much was cut,
// in every binding: whole, it made a MiB answer of every error (over gRPC
// a MiB of trailers, past what many clients take, so that the caller read
// a transport failure instead of the error).
func TestBackendErrorMessageBounded(t *testing.T) {
	msg := strings.Repeat("é", 1<<19)
	for _, e := range errorInEveryBinding(t, `{"code":-32603,"message":"`+msg+`"}`) {
		if m := e.message; len(m) > maxAgentMessage+256 || !strings.Contains(m, "bytes cut") || !utf8.ValidString(m) {
			t.Errorf("%s: a message of %d bytes: %.80s…%s", e.binding, len(m), m, m[max(0, len(m)-80):])
		}
	}
}

// TestBackendErrorDataBounded: a backend's error data of a MiB is left out
// of the caller's error, which says so, in every binding; whole, it made
// a MiB answer of every error and over gRPC a MiB of trailers.
func TestBackendErrorDataBounded(t *testing.T) {
	huge := strings.Repeat("x", 1<<20)
	for _, e := range errorInEveryBinding(t, `{"code":-32603,"message":"boom","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"X","domain":"d","metadata":{"k":"`+huge+`"}}]}`) {
		if !strings.Contains(e.message, "boom") || !strings.Contains(e.message, "bytes, left out") || e.size > 16<<10 {
			t.Errorf("%s: message %q, error of %d bytes", e.binding, e.message, e.size)
		}
		if data := e.rpc.Get("data"); data.Exists() {
			t.Errorf("%s: data kept: %.80s", e.binding, data.Raw)
		}
	}
}

// bindingError is an error as the caller of one binding received it.
type bindingError struct {
	binding, message string
	size             int          // the whole error's, as sent
	rpc              gjson.Result // the JSON-RPC error object, for JSON-RPC
}

// errorInEveryBinding asks for a task in every binding and caller dialect
// of a gateway whose 1.0 backend answers every call with the JSON-RPC error
// object errorObj, an internal error, and returns the errors the callers
// received.
func errorInEveryBinding(t *testing.T, errorObj string) []bindingError {
	t.Helper()
	return errorsInEveryBinding(t, scripted(func(w http.ResponseWriter, r *http.Request, id string) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"error":`+errorObj+`}`)
	}))
}

// errorsInEveryBinding is the error each binding's caller gets for a task
// get that back fails.
func errorsInEveryBinding(t *testing.T, back http.Handler) []bindingError {
	t.Helper()
	g := newGateway(t, back, dialect.Version10, func(a *AgentConfig) { a.Tasks.AllowUnknown = true })
	var out []bindingError
	for _, c := range callers {
		e := wantError(t, g.call("1", c.method(dialect.GetTask), `{"id":"t"}`), c.d, -32603)
		out = append(out, bindingError{"JSON-RPC " + c.d.String(), e.Get("message").Str, len(e.Raw), e})
	}
	_, _, body := restDo(t, g, "GET", "/tasks/t", "", "", "")
	out = append(out, bindingError{"REST", body.Get("error.message").Str, len(body.Raw), gjson.Result{}})
	_, err := newGRPCGateway(t, g).raw.GetTask(context.Background(), &a2apb.GetTaskRequest{Id: "t"})
	st := status.Convert(err)
	return append(out, bindingError{"gRPC", st.Message(), proto.Size(st.Proto()), gjson.Result{}})
}

// errorMembers lists the member names of the JSON object raw in order,
// repeats included, as a streaming JSON parser sees them.
func errorMembers(t *testing.T, raw string) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("error is not an object: %s", raw)
	}
	var names []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("%v: %s", err, raw)
		}
		names = append(names, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatalf("%v: %s", err, raw)
		}
	}
	return names
}

// TestBackendErrorObjectIsWhatTheGatewayRead: a backend's error object
// with a member twice (under its name or an escaped spelling of it), with
// members JSON-RPC does not define, or with a message that is not a string
// reaches the caller rebuilt from the code, message and data the gateway
// read (the first of each), never as the backend spelled it: passed on,
// the caller's parser (most keep the last of a repeated member) would see
// another code or message than the gateway's metrics, logs and retries.
func TestBackendErrorObjectIsWhatTheGatewayRead(t *testing.T) {
	cases := []struct {
		name, obj string
		message   string // what the caller's message must end with
		data      string // a value the caller's data must hold; "" for no data
	}{
		{"code twice", `{"code":-32050,"message":"no such task","code":-32603}`, "no such task", ""},
		{"escaped code twice", `{"code":-32050,"message":"no such task","co\u0064e":-32603}`, "no such task", ""},
		{"message twice", `{"code":-32050,"message":"first","message":"second"}`, "first", ""},
		{"data twice", `{"code":-32050,"message":"m","data":{"taskId":"first"},"data":{"taskId":"second"}}`, "m", "first"},
		{"extra members", `{"code":-32050,"message":"m","data":{"taskId":"t1"},"result":{"kind":"task","id":"t1"},"stack":"at x.go:1"}`, "m", "t1"},
		{"message not a string", `{"code":-32050,"message":{"text":"m"}}`, "Error", ""},
	}
	for _, v := range []dialect.Version{dialect.Version03, dialect.Version10} {
		for _, tc := range cases {
			for _, c := range callers {
				t.Run(string(v)+"/"+tc.name+"/"+c.d.String(), func(t *testing.T) {
					g := newGateway(t, scripted(func(w http.ResponseWriter, r *http.Request, id string) {
						w.Header().Set("Content-Type", "application/json")
						io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"error":`+tc.obj+`}`)
					}), v, func(a *AgentConfig) { a.Tasks.AllowUnknown = true })
					e := wantError(t, g.call("1", c.method(dialect.GetTask), `{"id":"t1"}`), c.d, -32050)
					names := errorMembers(t, e.Raw)
					want := []string{"code", "message"}
					if tc.data != "" || c.d == dialect.V10 {
						// -32050 is no dialect's code: a 1.0 caller is
						// given an ErrorInfo for it.
						want = append(want, "data")
					}
					if strings.Join(names, ",") != strings.Join(want, ",") {
						t.Fatalf("members %v, want %v: %s", names, want, e.Raw)
					}
					if msg := e.Get("message").Str; !strings.HasSuffix(msg, tc.message) {
						t.Fatalf("message %q does not end with %q", msg, tc.message)
					}
					if tc.data != "" && !strings.Contains(e.Get("data").Raw, `"`+tc.data+`"`) {
						t.Fatalf("data is not the first the backend sent: %s", e.Raw)
					}
					if strings.Contains(e.Raw, "second") || strings.Contains(e.Raw, "stack") {
						t.Fatalf("the caller got what the gateway did not read: %s", e.Raw)
					}
				})
			}
		}
	}
}

// TestBackendErrorCodeSpelling: a backend's error code is a JSON integer in
// int32 range; one spelled otherwise (a fraction, an exponent, a string) or
// out of range is an invalid answer, -32006, saying what was sent, not a
// code the gateway makes up or passes on.
func TestBackendErrorCodeSpelling(t *testing.T) {
	for _, code := range []string{`1e3`, `-3.2001e4`, `1.0`, `-32001.0`, `"5"`, `99999999999`, `2147483648`, `-2147483649`} {
		for _, c := range callers {
			t.Run(code+"/"+c.d.String(), func(t *testing.T) {
				g := newGateway(t, scripted(func(w http.ResponseWriter, r *http.Request, id string) {
					w.Header().Set("Content-Type", "application/json")
					io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":`+code+`,"message":"boom"}}`)
				}), dialect.Version03, func(a *AgentConfig) { a.Tasks.AllowUnknown = true })
				e := wantErrorSaying(t, g.call("1", c.method(dialect.GetTask), `{"id":"t1"}`), c.d, -32006, "error code "+code+" is not an integer code")
				if strings.Contains(e.Raw, "boom") {
					t.Fatalf("the backend's message passed with a code the gateway refused: %s", e.Raw)
				}
			})
		}
	}
	// The edges of int32 are codes.
	for _, code := range []string{`2147483647`, `-2147483648`} {
		g := newGateway(t, scripted(func(w http.ResponseWriter, r *http.Request, id string) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":`+code+`,"message":"boom"}}`)
		}), dialect.Version03, func(a *AgentConfig) { a.Tasks.AllowUnknown = true })
		if e := g.call("1", "tasks/get", `{"id":"t1"}`).Get("error"); e.Get("code").Raw != code || e.Get("message").Str != "boom" {
			t.Fatalf("code %s: %s", code, e.Raw)
		}
	}
}

// TestStreamEndingInsideAnEvent: a backend that closes its stream cleanly
// in the middle of an event (data lines without the blank line that
// dispatches them, or half a line) has sent a malformed stream: the caller's
// stream ends with a -32006 error event saying so, after the events that
// were whole, neither passing the part-event nor ending as if the stream
// were done. An event held for its final flag goes first, not final. A
// blocking send served from the stream is answered with the same error.
func TestStreamEndingInsideAnEvent(t *testing.T) {
	event := func(id, state string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"result":{"kind":"status-update","taskId":"t1","contextId":"c1","status":{"state":"` + state + `"}}}`
	}
	cases := []struct {
		name  string
		tail  func(id string) string
		whole int // events the caller gets before the error
	}{
		{"data lines without the blank line", func(id string) string { return "data: " + event(id, "completed") + "\n" }, 1},
		{"two data lines without the blank line", func(id string) string { return "data: {\"jsonrpc\":\"2.0\",\ndata: \"id\":" + id + "}\n" }, 1},
		{"half a line", func(id string) string { return `data: {"jsonrpc":"2.0","id":` + id + `,"res` }, 1},
		{"half a field name", func(id string) string { return "da" }, 1},
		{"after an interrupted state", func(id string) string {
			return "data: " + event(id, "input-required") + "\n\n" + `data: {"jsonrpc":`
		}, 2},
	}
	for _, tc := range cases {
		for _, c := range callers {
			t.Run(tc.name+"/"+c.d.String(), func(t *testing.T) {
				g := newGateway(t, scripted(func(w http.ResponseWriter, r *http.Request, id string) {
					w.Header().Set("Content-Type", "text/event-stream")
					sseWrite(w, working(id), tc.tail(id))
				}), dialect.Version03)
				events := g.stream("9", c.method(dialect.SendStreamingMessage), c.send("m", c.text("hi"), "")).all()
				if len(events) != tc.whole+1 {
					t.Fatalf("want %d events and the error, got %d: %v", tc.whole, len(events), events)
				}
				for _, ev := range events[:tc.whole] {
					res := mustResult(t, ev)
					if c.d == dialect.V03 && res.Get("final").Bool() {
						t.Fatalf("an event before the cut is final: %s", ev.Raw)
					}
				}
				wantErrorSaying(t, events[tc.whole], c.d, -32006, "ended its stream inside an event")
			})
		}
	}
	for _, c := range callers {
		t.Run("blocking via stream/"+c.d.String(), func(t *testing.T) {
			g := newGateway(t, scripted(func(w http.ResponseWriter, r *http.Request, id string) {
				w.Header().Set("Content-Type", "text/event-stream")
				sseWrite(w, working(id), `data: {"jsonrpc":"2.0","id":`+id+`,"res`)
			}), dialect.Version03, viaStreamOn)
			wantErrorSaying(t, sendResult(t, g, c, c.send("m", c.text("x"), "")), c.d, -32006, "ended its stream inside an event")
		})
	}
}

// TestReplyInAnEncodingNotAskedFor: a backend that compresses its answer
// in an encoding the gateway did not ask for (br or deflate on a unary
// call, where net/http asks for gzip and decodes it; anything but identity
// on a stream, which is asked for uncompressed) is refused as an invalid
// answer naming the encoding, in a unary call, a stream, the plain reply
// to a stream request, and a blocking send served from the stream. Before,
// the bytes were read as they were, and the caller was told the reply was
// not JSON, or that the stream ended inside an event.
func TestReplyInAnEncodingNotAskedFor(t *testing.T) {
	compressed := func(encoding, contentType string) func(w http.ResponseWriter, r *http.Request, id string) {
		return func(w http.ResponseWriter, r *http.Request, id string) {
			// A stream is asked for uncompressed: a compressor buffers
			// events until its block fills.
			if stream := r.Header.Get("Accept") == "text/event-stream"; stream && r.Header.Get("Accept-Encoding") != "identity" {
				t.Errorf("a stream request with Accept-Encoding %q", r.Header.Get("Accept-Encoding"))
			}
			w.Header().Set("Content-Type", contentType)
			w.Header().Set("Content-Encoding", encoding)
			_, _ = w.Write([]byte("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff\n\n\x03\x00"))
		}
	}
	for _, c := range callers {
		t.Run(c.d.String(), func(t *testing.T) {
			for _, enc := range []string{"br", "deflate"} {
				g := newGateway(t, scripted(compressed(enc, "application/json")), dialect.Version03, func(a *AgentConfig) { a.Tasks.AllowUnknown = true })
				wantErrorSaying(t, g.call("1", c.method(dialect.GetTask), `{"id":"t1"}`), c.d, -32006, "Content-Encoding "+enc)
			}
			for _, ct := range []string{"text/event-stream", "application/json"} {
				g := newGateway(t, scripted(compressed("gzip", ct)), dialect.Version03)
				r := streamError(t, g.stream("2", c.method(dialect.SendStreamingMessage), c.send("m", c.text("hi"), "")))
				wantErrorSaying(t, r, c.d, -32006, "Content-Encoding gzip")
			}
			g := newGateway(t, scripted(compressed("gzip", "text/event-stream")), dialect.Version03, viaStreamOn)
			wantErrorSaying(t, sendResult(t, g, c, c.send("m", c.text("x"), "")), c.d, -32006, "Content-Encoding gzip")
		})
	}
}

// TestGzipReplyBoundedAsDecoded: a unary reply in gzip (which net/http
// asks for and decodes) is bounded by max_reply_bytes as decoded, so a
// small body that inflates past it (a gzip bomb) is refused as too large
// once that much was read, and a gzip reply within it is served.
func TestGzipReplyBoundedAsDecoded(t *testing.T) {
	const limit = 64 << 10
	gzipped := func(reply string) []byte {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		_, _ = io.WriteString(zw, reply)
		_ = zw.Close()
		return b.Bytes()
	}
	for _, c := range callers {
		t.Run(c.d.String(), func(t *testing.T) {
			var sent atomic.Int64
			g := newGateway(t, scripted(func(w http.ResponseWriter, r *http.Request, id string) {
				if r.Header.Get("Accept-Encoding") != "gzip" {
					t.Errorf("Accept-Encoding %q", r.Header.Get("Accept-Encoding"))
				}
				meta := strings.Repeat("a", int(sent.Add(1))*limit) // the first within the limit, the second 8 times past it
				if sent.Load() == 1 {
					meta = "small"
				}
				body := gzipped(`{"jsonrpc":"2.0","id":` + id + `,"result":{"kind":"task","id":"t1","contextId":"c1","status":{"state":"working"},"metadata":{"m":"` + meta + `"}}}`)
				if len(body) > limit/4 {
					t.Errorf("the gzip body is %d bytes", len(body))
				}
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Content-Encoding", "gzip")
				_, _ = w.Write(body)
			}), dialect.Version03, func(a *AgentConfig) { a.Tasks.AllowUnknown = true; a.MaxReplyBytes = limit })
			mustResult(t, g.call("1", c.method(dialect.GetTask), `{"id":"t1"}`))
			sent.Store(7)
			wantErrorSaying(t, g.call("2", c.method(dialect.GetTask), `{"id":"t1"}`), c.d, -32006, "answered more than 65536 bytes")
		})
	}
}

// TestEventStreamWithAFailureStatus: a backend answering a stream request
// with an error status (500, 404, 302) and an event stream has not
// streamed: the caller gets the status as the error (-32603 naming it), as
// for a plain reply with that status, not the events as though the
// backend had succeeded; the SDK clients refuse such an answer from an
// agent directly. So does a blocking send served from the stream.
func TestEventStreamWithAFailureStatus(t *testing.T) {
	for _, status := range []int{http.StatusInternalServerError, http.StatusNotFound, http.StatusFound} {
		back := func(w http.ResponseWriter, r *http.Request, id string) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(status)
			sseWrite(w, working(id), `data: {"jsonrpc":"2.0","id":`+id+`,"result":{"kind":"status-update","taskId":"t1","contextId":"c1","status":{"state":"completed"},"final":true}}`+"\n\n")
		}
		for _, c := range callers {
			t.Run(strconv.Itoa(status)+"/"+c.d.String(), func(t *testing.T) {
				g := newGateway(t, scripted(back), dialect.Version03)
				events := g.stream("1", c.method(dialect.SendStreamingMessage), c.send("m", c.text("hi"), "")).all()
				if len(events) != 1 {
					t.Fatalf("want the error alone, got %d events: %v", len(events), events)
				}
				wantErrorSaying(t, events[0], c.d, -32603, "HTTP "+strconv.Itoa(status))
				g = newGateway(t, scripted(back), dialect.Version03, viaStreamOn)
				wantErrorSaying(t, sendResult(t, g, c, c.send("m", c.text("x"), "")), c.d, -32603, "HTTP "+strconv.Itoa(status))
			})
		}
	}
}

// TestTaskMetadataWithRepeatedKey: a backend's task whose metadata names a
// key twice is refused the same way in every binding, naming the key: a gRPC
// caller used to get INTERNAL "duplicate map key" (protojson refuses such a
// map) where JSON-RPC and REST callers got the map, whose value they read
// otherwise than the gateway did.
func TestTaskMetadataWithRepeatedKey(t *testing.T) {
	const want = `metadata: repeats key "owner"`
	for _, v := range []dialect.Version{dialect.Version03, dialect.Version10} {
		t.Run(string(v), func(t *testing.T) {
			task := `{"id":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"},"metadata":{"owner":"a","owner":"b"}}`
			if v == dialect.Version03 {
				task = `{"kind":"task","id":"t","contextId":"c","status":{"state":"working"},"metadata":{"owner":"a","owner":"b"}}`
			}
			g := newGateway(t, scripted(func(w http.ResponseWriter, r *http.Request, id string) {
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"result":`+task+`}`)
			}), v, func(a *AgentConfig) { a.Tasks.AllowUnknown = true })
			for _, c := range callers {
				wantErrorSaying(t, g.call("1", c.method(dialect.GetTask), `{"id":"t"}`), c.d, -32006, want)
			}
			code, _, body := restDo(t, g, "GET", "/tasks/t", "", "", "")
			if msg := body.Get("error.message").Str; code != http.StatusInternalServerError || !strings.Contains(msg, want) {
				t.Errorf("REST: %d %s", code, body.Raw)
			}
			_, err := newGRPCGateway(t, g).raw.GetTask(context.Background(), &a2apb.GetTaskRequest{Id: "t"})
			if st := status.Convert(err); !strings.Contains(st.Message(), want) {
				t.Errorf("gRPC: %v %q", st.Code(), st.Message())
			}
		})
	}
}

// TestProtocolSwitchIsNotRead: a backend answering a call with 101
// Switching Protocols and then holding the connection open is refused at
// once, saying so, in a unary call and a stream. net/http gives a 101's
// connection to the body's reader outside the request's context, so the
// read of it had outlived response_timeout and the caller for as long as
// the backend held it.
func TestProtocolSwitchIsNotRead(t *testing.T) {
	for _, c := range callers {
		t.Run(c.d.String(), func(t *testing.T) {
			release := make(chan struct{})
			g := newGateway(t, scripted(func(w http.ResponseWriter, r *http.Request, id string) {
				rawReply(w, func(conn net.Conn) {
					_, _ = io.WriteString(conn, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n")
					hungUp := make(chan struct{})
					go func() { _, _ = io.Copy(io.Discard, conn); close(hungUp) }()
					select {
					case <-hungUp:
					case <-release:
					}
				})
			}), dialect.Version03, func(a *AgentConfig) {
				a.Backend.ResponseHeaderTimeout = time.Minute
				a.Backend.ResponseTimeout = time.Minute
				a.Tasks.AllowUnknown = true
			})
			t.Cleanup(func() { close(release) }) // before the servers close, which wait for their calls
			// A bound for the test to fail by, far below response_timeout.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			res, body, err := g.postCtx(ctx, `{"jsonrpc":"2.0","id":1,"method":"`+c.method(dialect.GetTask)+`","params":{"id":"t1"}}`, g.hdr(c.d)...)
			if err != nil {
				t.Fatalf("a unary call got no answer: %v", err)
			}
			if res.StatusCode != http.StatusOK {
				t.Fatalf("HTTP %d: %s", res.StatusCode, body)
			}
			wantErrorSaying(t, gjson.ParseBytes(body), c.d, -32603, "101 Switching Protocols")
			sres, err := http.DefaultClient.Do(g.streamRequest(ctx, "2", c.method(dialect.SendStreamingMessage), c.send("m", c.text("hi"), "")))
			if err != nil {
				t.Fatalf("a stream got no answer: %v", err)
			}
			defer sres.Body.Close()
			s := &eventStream{t: t, res: sres, rd: sseframe.NewReader(sres.Body, 1<<20), id: "2", done: cancel}
			wantErrorSaying(t, streamError(t, s), c.d, -32603, "101 Switching Protocols")
		})
	}
}

// TestMalformedHTTPQuotedBounded: a backend whose reply head is not HTTP,
// a first line of 600 KiB, gets every binding's caller an error saying so
// with net/http's quote of that line cut to a few hundred bytes, saying
// how much was cut. Whole, the quote (up to the 1 MiB head limit, each
// byte not ASCII escaped to four) made a 1.8 MB error answer, and over
// gRPC a trailer of that size, which clients refuse.
func TestMalformedHTTPQuotedBounded(t *testing.T) {
	line := "SSH-" + strings.Repeat("\xffx", 300<<10)
	for _, e := range errorsInEveryBinding(t, scripted(func(w http.ResponseWriter, r *http.Request, id string) {
		rawReply(w, func(conn net.Conn) { _, _ = io.WriteString(conn, line+"\r\n\r\n") })
	})) {
		if m := e.message; len(m) > 1024 || !strings.Contains(m, "not valid HTTP") || !strings.Contains(m, "bytes cut") || !utf8.ValidString(m) {
			t.Errorf("%s: a message of %d bytes: %.120s…%s", e.binding, len(m), m, m[max(0, len(m)-80):])
		}
	}
}
