package proxy

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/testlog"
	"github.com/a2agate/gateway/telemetry"
)

// The caller's trace context in the tracing tests.
const (
	callerTraceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	callerSpanID  = "00f067aa0ba902b7"
	callerParent  = "00-" + callerTraceID + "-" + callerSpanID + "-01"
	callerState   = "vendor=abc"
	callerBaggage = "tenant=acme"
)

func traceHeaders() []string {
	return []string{"traceparent", callerParent, "tracestate", callerState, "baggage", callerBaggage}
}

// spanSink keeps the spans a gateway ends and tells of each server span.
type spanSink struct {
	*tracetest.SpanRecorder
	served chan sdktrace.ReadOnlySpan
}

func (s *spanSink) OnEnd(span sdktrace.ReadOnlySpan) {
	s.SpanRecorder.OnEnd(span)
	if span.SpanKind() == trace.SpanKindServer {
		s.served <- span
	}
}

// exportOff is tracing set up with export off: trace context is passed on
// as the caller sent it, and no span is recorded.
func exportOff(t *testing.T) *telemetry.Tracing {
	t.Helper()
	tr, err := telemetry.Setup(context.Background(), telemetry.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func newSpanSink(t *testing.T) (*spanSink, *telemetry.Tracing) {
	sink := &spanSink{SpanRecorder: tracetest.NewSpanRecorder(), served: make(chan sdktrace.ReadOnlySpan, 64)}
	tr := telemetry.WithProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sink)))
	t.Cleanup(func() { _ = tr.Shutdown(context.Background()) })
	return sink, tr
}

// call waits for the server span of the next call served and returns the
// spans of its trace: the server span and, by name, the spans under it.
func (s *spanSink) call(t *testing.T) (sdktrace.ReadOnlySpan, map[string][]sdktrace.ReadOnlySpan) {
	t.Helper()
	var server sdktrace.ReadOnlySpan
	select {
	case server = <-s.served:
	case <-time.After(10 * time.Second):
		t.Fatal("no server span ended within 10s")
	}
	under := map[string][]sdktrace.ReadOnlySpan{}
	for _, sp := range s.Ended() {
		if sp.Parent().SpanID() == server.SpanContext().SpanID() {
			under[sp.Name()] = append(under[sp.Name()], sp)
		}
	}
	return server, under
}

func spanAttrs(sp sdktrace.ReadOnlySpan) map[string]string {
	m := map[string]string{}
	for _, kv := range sp.Attributes() {
		m[string(kv.Key)] = kv.Value.Emit()
	}
	return m
}

// headerTap wraps a backend and keeps the trace headers of every request.
type headerTap struct {
	next http.Handler
	mu   sync.Mutex
	got  []http.Header
}

func (h *headerTap) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.got = append(h.got, http.Header{
		"Traceparent": r.Header.Values("traceparent"), "Tracestate": r.Header.Values("tracestate"), "Baggage": r.Header.Values("baggage"),
	})
	h.mu.Unlock()
	h.next.ServeHTTP(w, r)
}

func (h *headerTap) last(t *testing.T) http.Header {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.got) == 0 {
		t.Fatal("the backend got no request")
	}
	return h.got[len(h.got)-1]
}

// wantSpan checks a span's kind, name, attributes and status.
func wantSpan(t *testing.T, sp sdktrace.ReadOnlySpan, kind trace.SpanKind, name string, attrs map[string]string, status codes.Code) {
	t.Helper()
	if sp.SpanKind() != kind || sp.Name() != name {
		t.Errorf("span %q (%v), want %q (%v)", sp.Name(), sp.SpanKind(), name, kind)
	}
	got := spanAttrs(sp)
	for k, v := range attrs {
		if got[k] != v && !(v == "*" && got[k] != "") {
			t.Errorf("%s: %s = %q, want %q (all: %v)", sp.Name(), k, got[k], v, got)
		}
	}
	if sp.Status().Code != status {
		t.Errorf("%s: status %v %q, want %v", sp.Name(), sp.Status().Code, sp.Status().Description, status)
	}
}

func only(t *testing.T, under map[string][]sdktrace.ReadOnlySpan, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	if len(under[name]) != 1 {
		names := []string{}
		for n := range under {
			names = append(names, n)
		}
		t.Fatalf("%d spans %q under the server span, want 1 (have %v)", len(under[name]), name, names)
	}
	return under[name][0]
}

// forEachTracedPair runs f for every caller dialect against every backend,
// through a gateway tracing into a sink, with the backend's requests tapped.
func forEachTracedPair(t *testing.T, f func(t *testing.T, c caller, b backendKind, g *testGateway, sink *spanSink, tap *headerTap)) {
	forEachCallerOf(t, backends, func(t *testing.T, c caller, b backendKind) {
		sink, tr := newSpanSink(t)
		tap := &headerTap{next: b.handler(t, nil)}
		f(t, c, b, newGatewayOpts(t, tap, b.version, Options{Tracing: tr}), sink, tap)
	})
}

// A unary call is one trace under the caller's: the server span named by
// operation, the backend call and the index operations under it, the
// attributes set, and the backend a child of the gateway's client span.
func TestTraceUnaryCall(t *testing.T) {
	forEachTracedPair(t, func(t *testing.T, c caller, b backendKind, g *testGateway, sink *spanSink, tap *headerTap) {
		method := c.method(dialect.SendMessage)
		body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":` + c.send("m1", c.text("hello"), "") + `}`
		status, _, out := g.post(body, append(g.hdr(c.d), traceHeaders()...)...)
		if status != http.StatusOK || !strings.Contains(string(out), `"result"`) {
			t.Fatalf("HTTP %d: %s", status, out)
		}
		server, under := sink.call(t)
		backendDialect := b.version.ID()
		backendMethod, _ := dialect.MethodName(backendDialect, dialect.SendMessage)
		if server.SpanContext().TraceID().String() != callerTraceID || server.Parent().SpanID().String() != callerSpanID || !server.Parent().IsRemote() {
			t.Errorf("server span in trace %s under %s, want the caller's %s under %s", server.SpanContext().TraceID(), server.Parent().SpanID(), callerTraceID, callerSpanID)
		}
		wantSpan(t, server, trace.SpanKindServer, "a2a SendMessage", map[string]string{
			"a2a.method": method, "a2a.backend.method": backendMethod, "a2a.caller_dialect": c.d.String(),
			"a2a.backend_dialect": backendDialect.String(), "a2a.binding": "jsonrpc", "a2a.agent": "test", "a2a.outcome": "ok",
			"a2a.task_id": "*", "a2a.context_id": "*",
		}, codes.Unset)
		client := only(t, under, "a2a "+backendMethod)
		wantSpan(t, client, trace.SpanKindClient, "a2a "+backendMethod, map[string]string{
			"a2a.backend.method": backendMethod, "a2a.backend_dialect": backendDialect.String(), "a2a.backend": "test",
		}, codes.Unset)
		for _, op := range []string{"Admit", "Put"} {
			wantSpan(t, only(t, under, "task-index "+op), trace.SpanKindInternal, "task-index "+op, nil, codes.Unset)
		}
		if got := spanAttrs(only(t, under, "task-index Put"))["a2a.task_id"]; got != spanAttrs(server)["a2a.task_id"] {
			t.Errorf("Put's task %q, the call's %q", got, spanAttrs(server)["a2a.task_id"])
		}
		h := tap.last(t)
		want := "00-" + callerTraceID + "-" + client.SpanContext().SpanID().String() + "-01"
		if h.Get("Traceparent") != want || h.Get("Tracestate") != callerState || h.Get("Baggage") != callerBaggage {
			t.Errorf("the backend got %v, want traceparent %s (the client span) and the caller's tracestate and baggage", h, want)
		}

		// A get names the task: the index is read, and the id is on the span.
		id := spanAttrs(server)["a2a.task_id"]
		mustResult(t, g.call("2", c.method(dialect.GetTask), `{"id":"`+id+`"}`))
		server, under = sink.call(t)
		wantSpan(t, server, trace.SpanKindServer, "a2a GetTask", map[string]string{"a2a.task_id": id, "a2a.outcome": "ok"}, codes.Unset)
		only(t, under, "task-index Get")
		if server.Parent().IsValid() {
			t.Errorf("a call without trace context has parent %v, want a new trace", server.Parent())
		}
	})
}

// A stream's events are span events on the server span, counted.
func TestTraceStream(t *testing.T) {
	forEachTracedPair(t, func(t *testing.T, c caller, b backendKind, g *testGateway, sink *spanSink, tap *headerTap) {
		events := g.stream("1", c.method(dialect.SendStreamingMessage), c.send("m1", c.text("run the report"), "")).all()
		server, under := sink.call(t)
		backendMethod, _ := dialect.MethodName(b.version.ID(), dialect.SendStreamingMessage)
		wantSpan(t, server, trace.SpanKindServer, "a2a SendStreamingMessage", map[string]string{
			"a2a.method": c.method(dialect.SendStreamingMessage), "a2a.backend.method": backendMethod, "a2a.outcome": "ok", "a2a.task_id": "*",
		}, codes.Unset)
		recorded := server.Events()
		if len(recorded) == 0 || len(recorded) != len(events) {
			t.Errorf("%d span events for %d stream events", len(recorded), len(events))
		}
		if got := spanAttrs(server)["a2a.stream.events"]; got != itoa(len(recorded)) {
			t.Errorf("a2a.stream.events = %q, want %d", got, len(recorded))
		}
		for _, ev := range recorded {
			switch ev.Name {
			case "task", "message", "status_update", "artifact_update":
			default:
				t.Errorf("span event %q is not an event kind", ev.Name)
			}
		}
		wantSpan(t, only(t, under, "a2a "+backendMethod), trace.SpanKindClient, "a2a "+backendMethod, nil, codes.Unset)
		if len(under["task-index Put"]) == 0 {
			t.Error("no task-index Put under the stream's span")
		}
	})
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// A backend that fails fails both spans, with the reason; the caller's
// mistakes fail neither.
func TestTraceFailedBackendCall(t *testing.T) {
	for _, c := range callers {
		t.Run(c.d.String(), func(t *testing.T) {
			t.Parallel()
			sink, tr := newSpanSink(t)
			broken := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				http.Error(w, "upstream down", http.StatusBadGateway)
			})
			g := newGatewayOpts(t, broken, dialect.Version10, Options{Tracing: tr})
			r := g.call("1", c.method(dialect.SendMessage), c.send("m1", c.text("hello"), ""))
			wantError(t, r, c.d, dialect.ErrInternal.Error().Code)
			server, under := sink.call(t)
			wantSpan(t, server, trace.SpanKindServer, "a2a SendMessage", map[string]string{
				"a2a.outcome": "backend_failure", "rpc.jsonrpc.error_code": itoa(dialect.ErrInternal.Error().Code),
			}, codes.Error)
			if d := server.Status().Description; !strings.Contains(d, "HTTP 502") {
				t.Errorf("server span status %q does not say why", d)
			}
			client := only(t, under, "a2a SendMessage")
			wantSpan(t, client, trace.SpanKindClient, "a2a SendMessage", nil, codes.Error)
			if len(client.Events()) == 0 || client.Events()[0].Name != "exception" {
				t.Errorf("client span events %v, want the error recorded", client.Events())
			}

			// An agent's JSON-RPC error fails the client span with its code.
			refusing := scripted(func(w http.ResponseWriter, _ *http.Request, id string) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32602,"message":"no such skill here"}}`))
			})
			ga := newGatewayOpts(t, refusing, dialect.Version10, Options{Tracing: tr})
			wantError(t, ga.call("1", c.method(dialect.SendMessage), c.send("m1", c.text("hello"), "")), c.d, -32602)
			server, under = sink.call(t)
			wantSpan(t, server, trace.SpanKindServer, "a2a SendMessage", map[string]string{"a2a.outcome": "agent_error", "rpc.jsonrpc.error_code": "-32602"}, codes.Error)
			client = only(t, under, "a2a SendMessage")
			wantSpan(t, client, trace.SpanKindClient, "a2a SendMessage", map[string]string{"rpc.jsonrpc.error_code": "-32602"}, codes.Error)
			if d := client.Status().Description; !strings.Contains(d, "no such skill here") {
				t.Errorf("client span status %q does not carry the agent's message", d)
			}

			r = g.call("2", c.method(dialect.GetTask), `{"id":"no-such-task"}`)
			wantError(t, r, c.d, dialect.ErrTaskNotFound.Error().Code)
			server, _ = sink.call(t)
			wantSpan(t, server, trace.SpanKindServer, "a2a GetTask", map[string]string{"a2a.outcome": "caller_error", "a2a.task_id": "no-such-task"}, codes.Unset)
		})
	}
}

// A front end of another binding that serves calls through ServeRPC names
// its binding in the context.
func TestTraceBindingFromContext(t *testing.T) {
	sink, tr := newSpanSink(t)
	g := newGatewayOpts(t, backends[1].handler(t, nil), dialect.Version10, Options{Tracing: tr})
	c := caller{dialect.V10}
	body := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":` + c.send("m1", c.text("hello"), "") + `}`
	req := httptest.NewRequestWithContext(dialect.WithBinding(context.Background(), dialect.HTTPJSON), http.MethodPost, "/", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	rec := httptest.NewRecorder()
	g.agent.ServeRPC(rec, req)
	server, _ := sink.call(t)
	wantSpan(t, server, trace.SpanKindServer, "a2a SendMessage", map[string]string{"a2a.binding": "http_json", "a2a.outcome": "ok"}, codes.Unset)
}

// With export off the backend gets the caller's trace headers exactly as
// sent, and nothing when the caller sent none; with export on, a child of
// the gateway's span in the caller's trace, or a new trace.
func TestTraceContextReachesBackend(t *testing.T) {
	disabled := exportOff(t)
	_, enabled := newSpanSink(t)
	for name, tr := range map[string]*telemetry.Tracing{"nil": nil, "export off": disabled, "export on": enabled} {
		t.Run(name, func(t *testing.T) {
			tap := &headerTap{next: backends[0].handler(t, nil)}
			g := newGatewayOpts(t, tap, dialect.Version025, Options{Tracing: tr})
			c := caller{dialect.V10}
			g.call("1", "SendMessage", c.send("m1", c.text("hello"), ""))
			h := tap.last(t)
			if tr.Enabled() {
				parent := h.Get("Traceparent")
				if len(parent) != len(callerParent) || strings.Contains(parent, callerTraceID) {
					t.Errorf("without caller context the backend got traceparent %q, want a new trace", parent)
				}
			} else if len(h.Values("Traceparent")) != 0 {
				t.Errorf("without caller context the backend got %v", h)
			}

			// Spelled as a caller may: the exact bytes must pass when not traced.
			parent := strings.ToUpper(callerParent[:3]) + callerParent[3:]
			status, _, out := g.post(`{"jsonrpc":"2.0","id":2,"method":"SendMessage","params":`+c.send("m2", c.text("hello"), "")+`}`,
				"A2A-Version", "1.0", "traceparent", parent, "tracestate", callerState, "baggage", callerBaggage)
			if status != http.StatusOK {
				t.Fatalf("HTTP %d: %s", status, out)
			}
			h = tap.last(t)
			if h.Get("Tracestate") != callerState || h.Get("Baggage") != callerBaggage {
				t.Errorf("tracestate/baggage to the backend: %v", h)
			}
			got := h.Values("Traceparent")
			if !tr.Enabled() {
				if len(got) != 1 || got[0] != parent {
					t.Errorf("export off: the backend got traceparent %q, want exactly the caller's %q", got, parent)
				}
				return
			}
			if len(got) != 1 || !strings.HasPrefix(got[0], "00-"+callerTraceID+"-") || strings.Contains(got[0], callerSpanID) {
				t.Errorf("export on: the backend got traceparent %q, want the caller's trace under a gateway span", got)
			}
		})
	}
}

// With export off the gateway injects no span, nor searches the call's
// context for one: a span the server embedding the gateway put there (its
// own tracing's, not the caller's trace context) does not reach the
// backend in place of what the caller sent, here nothing. Before, it was
// injected as the backend request's parent.
func TestExportOffInjectsNoSpanOfTheContext(t *testing.T) {
	for name, tr := range map[string]*telemetry.Tracing{"nil": nil, "export off": exportOff(t)} {
		t.Run(name, func(t *testing.T) {
			tap := &headerTap{next: backends[0].handler(t, nil)}
			g := newGatewayOpts(t, tap, dialect.Version025, Options{Tracing: tr})
			c := caller{dialect.V10}
			tid, _ := trace.TraceIDFromHex(callerTraceID)
			sid, _ := trace.SpanIDFromHex(callerSpanID)
			embedder := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
				TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled}))
			req := httptest.NewRequestWithContext(embedder, http.MethodPost, "/", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":`+c.send("m1", c.text("hello"), "")+`}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("A2A-Version", "1.0")
			rec := httptest.NewRecorder()
			g.agent.ServeRPC(rec, req)
			if rec.Code != http.StatusOK {
				t.Fatalf("HTTP %d: %s", rec.Code, rec.Body)
			}
			if got := tap.last(t).Values("Traceparent"); len(got) != 0 {
				t.Errorf("the backend got traceparent %q, want none: the caller sent none", got)
			}
		})
	}
}

// A call whose caller's trace is not sampled starts no span that records:
// the spans under the call are not started at all, and the backend still
// gets the caller's trace, unsampled, so a traced agent stays in it.
func TestUnsampledCallRecordsNoSpan(t *testing.T) {
	sink, tr := newSpanSink(t) // parent-based: the caller's flags decide
	tap := &headerTap{next: backends[0].handler(t, nil)}
	g := newGatewayOpts(t, tap, dialect.Version025, Options{Tracing: tr})
	c := caller{dialect.V10}
	unsampled := "00-" + callerTraceID + "-" + callerSpanID + "-00"
	status, _, out := g.post(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":`+c.send("m1", c.text("hello"), "")+`}`,
		"A2A-Version", "1.0", "traceparent", unsampled, "tracestate", callerState)
	if status != http.StatusOK {
		t.Fatalf("HTTP %d: %s", status, out)
	}
	// A span that records is handed to the processors as it starts, so
	// the call's would be here once its reply was read.
	if started := sink.Started(); len(started) != 0 {
		t.Errorf("an unsampled call started %d recording spans, the first %q", len(started), started[0].Name())
	}
	h := tap.last(t)
	got := h.Get("Traceparent")
	if !strings.HasPrefix(got, "00-"+callerTraceID+"-") || !strings.HasSuffix(got, "-00") || h.Get("Tracestate") != callerState {
		t.Errorf("the backend got traceparent %q tracestate %q, want the caller's trace, unsampled, and its tracestate", got, h.Get("Tracestate"))
	}
}

// Each access-log line carries trace_id and span_id when the call has a
// trace, and neither when it has not.
func TestAccessLogTraceIDs(t *testing.T) {
	disabled := exportOff(t)
	sink, enabled := newSpanSink(t)
	for _, tt := range []struct {
		name    string
		tr      *telemetry.Tracing
		traced  bool // the caller sends trace context
		wantIDs bool
	}{
		{"nil, no caller trace", nil, false, false},
		{"export off, no caller trace", disabled, false, false},
		{"export off, caller trace", disabled, true, true},
		{"export on, caller trace", enabled, true, true},
		{"export on, no caller trace", enabled, false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var logs testlog.Buffer
			log := slog.New(telemetry.LogHandler(slog.NewJSONHandler(&logs, nil)))
			g := newGatewayOpts(t, backends[1].handler(t, nil), dialect.Version10, Options{Tracing: tt.tr, Logger: log})
			c := caller{dialect.V10}
			// Served directly: the access log is written by the time
			// ServeRPC returns.
			req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":`+c.send("m1", c.text("hello"), "")+`}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("A2A-Version", "1.0")
			if tt.traced {
				h := traceHeaders()
				for i := 0; i < len(h); i += 2 {
					req.Header.Set(h[i], h[i+1])
				}
			}
			g.agent.ServeRPC(httptest.NewRecorder(), req)
			var server sdktrace.ReadOnlySpan
			if tt.tr.Enabled() {
				server, _ = sink.call(t)
			}
			line := accessLine(t, &logs)
			if !tt.wantIDs {
				if line["trace_id"] != nil || line["span_id"] != nil {
					t.Errorf("access log %v: want no trace_id or span_id", line)
				}
				return
			}
			wantTrace, wantSpanID := callerTraceID, callerSpanID
			if server != nil {
				wantTrace, wantSpanID = server.SpanContext().TraceID().String(), server.SpanContext().SpanID().String()
			}
			if tt.traced && wantTrace != callerTraceID {
				t.Errorf("server span in trace %s, want the caller's", wantTrace)
			}
			if line["trace_id"] != wantTrace || line["span_id"] != wantSpanID {
				t.Errorf("access log %v: want trace_id %s span_id %s", line, wantTrace, wantSpanID)
			}
		})
	}
}

// accessLine is the access-log line of the one call logged.
func accessLine(t *testing.T, logs *testlog.Buffer) map[string]any {
	t.Helper()
	for _, l := range strings.Split(logs.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == "call" {
			return m
		}
	}
	t.Fatalf("no access-log line:\n%s", logs.String())
	return nil
}

// The HTTP+JSON binding's calls are traced as such.
func TestTraceRESTBinding(t *testing.T) {
	sink, tr := newSpanSink(t)
	g := newGatewayOpts(t, backends[1].handler(t, nil), dialect.Version10, Options{Tracing: tr})
	c := caller{dialect.V10}
	if res, _ := g.request(t, http.MethodPost, "/message:send", c.send("m1", c.text("hello"), ""), "Content-Type", "application/json", "A2A-Version", "1.0", "traceparent", callerParent); res.StatusCode != http.StatusOK {
		t.Fatalf("HTTP %d", res.StatusCode)
	}
	server, _ := sink.call(t)
	wantSpan(t, server, trace.SpanKindServer, "a2a SendMessage", map[string]string{"a2a.binding": "http_json", "a2a.outcome": "ok"}, codes.Unset)
	if server.SpanContext().TraceID().String() != callerTraceID {
		t.Errorf("REST call's span in trace %s, want the caller's", server.SpanContext().TraceID())
	}
}
