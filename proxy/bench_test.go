package proxy

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/a2agate/gateway/auth"
	"github.com/a2agate/gateway/bench/canned"
	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/telemetry"
)

// BenchmarkServeHTTP measures the whole gateway handler per request, mux to
// last byte, with the backend answered in memory by the canned agent: what
// is left is the gateway's own cost, including its access log (JSON, as the
// binary writes it, to io.Discard). Each case is an operation and a
// caller-to-backend dialect pair; streams are 50 events.
//
//	go test -run '^$' -bench ServeHTTP -benchmem ./proxy
//	go test -run '^$' -bench 'ServeHTTP/send/0.3-to-1.0' -cpuprofile cpu.out ./proxy
func BenchmarkServeHTTP(b *testing.B) {
	for _, bc := range benchCases() {
		b.Run(bc.name(), func(b *testing.B) { benchServe(b, bc) })
	}
}

// benchServe serves bc's request b.N times, once checked first, and
// reports streams per event too.
func benchServe(b *testing.B, bc benchCase) {
	h := newBenchHarness(b, bc)
	h.check(b)
	h.loop(b)
	if bc.op == canned.Stream {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchStreamEvents), "ns/event")
	}
}

// benchStreamEvents is the length of the benchmarked streams.
const benchStreamEvents = 50

// benchCase is one request shape through the gateway.
type benchCase struct {
	op              canned.Op
	caller, backend canned.Dialect
	auth            bool // a Bearer token checked on every call
	// tracing records every call's spans (ratio 1) through a batch
	// processor into an exporter that discards them.
	tracing bool
	// newTracing, when set, is the tracing instead (BenchmarkTracingCost).
	newTracing func(testing.TB) *telemetry.Tracing
}

func (c benchCase) name() string {
	n := fmt.Sprintf("%s/%s-to-%s", c.op, c.caller, c.backend)
	if c.auth {
		n += "+auth"
	}
	if c.tracing {
		n += "+tracing"
	}
	return n
}

// benchCases are send, get and stream for every caller/backend pair, send
// with authentication, and send, get and stream traced, beside their
// untraced twins.
func benchCases() []benchCase {
	var out []benchCase
	for _, op := range []canned.Op{canned.Send, canned.Get, canned.Stream} {
		for _, caller := range []canned.Dialect{canned.V03, canned.V10} {
			for _, backend := range []canned.Dialect{canned.V03, canned.V10} {
				out = append(out, benchCase{op: op, caller: caller, backend: backend})
			}
		}
	}
	out = append(out,
		benchCase{op: canned.Send, caller: canned.V10, backend: canned.V10, auth: true},
		benchCase{op: canned.Send, caller: canned.V03, backend: canned.V10, auth: true})
	for _, op := range []canned.Op{canned.Send, canned.Get, canned.Stream} {
		out = append(out, benchCase{op: op, caller: canned.V03, backend: canned.V10, tracing: true})
	}
	return out
}

// benchHarness serves one prepared request through a gateway again and
// again, reusing the request and the response writer so that what is
// counted is the handler's work.
type benchHarness struct {
	bc   benchCase
	gw   http.Handler
	req  *http.Request
	body []byte
	rd   *bytes.Reader
	rc   *benchBody
	w    *benchWriter
	// msgID is the message id in body, rewritten per request so that every
	// send is a first send and not a retry; sent counts them.
	msgID []byte
	sent  uint64
}

const benchHMACEnv = "PROXY_BENCH_HMAC_SECRET"

var benchHMACSecret = strings.Repeat("k", 32)

func newBenchHarness(tb testing.TB, bc benchCase) *benchHarness {
	tb.Helper()
	version, path := dialect.Version10, "/v10/"
	if bc.backend == canned.V03 {
		version, path = dialect.Version03, "/v03/"
	}
	cfg := AgentConfig{Name: "bench", Path: "/", PublicURL: "http://gateway.bench/",
		Backend: BackendConfig{URL: "http://backend.bench" + path, Dialect: version}}
	opts := Options{
		Transport: canned.New(),
		Logger:    slog.New(slog.NewJSONHandler(io.Discard, nil)),
	}
	if bc.newTracing != nil {
		opts.Tracing = bc.newTracing(tb)
	} else if bc.tracing {
		tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithBatcher(discardSpans{}))
		opts.Tracing = telemetry.WithProvider(tp)
		tb.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	}
	header := http.Header{"Content-Type": {"application/json"}}
	if bc.caller == canned.V10 {
		header.Set(dialect.HeaderVersion, "1.0")
	}
	if bc.auth {
		tb.Setenv(benchHMACEnv, benchHMACSecret)
		cfg.Auth = &auth.Config{Issuer: "https://issuer.bench", Audiences: []string{"bench"}, Algorithms: []string{"HS256"}, HMACSecretEnv: benchHMACEnv}
		header.Set("Authorization", "Bearer "+canned.HS256Token([]byte(benchHMACSecret), canned.BenchClaims("https://issuer.bench", "bench")))
	}
	cfg.SetDefaults()
	ctx := context.Background()
	if bc.auth {
		opts.Verifier = verifierOf(tb, cfg)
	}
	a := newValidAgent(tb, cfg, opts)
	if err := a.RefreshCard(ctx); err != nil {
		tb.Fatal(err)
	}
	h := &benchHarness{bc: bc, gw: soleGateway(tb, a), w: &benchWriter{h: http.Header{}}}
	var err error
	h.req, err = http.NewRequest(http.MethodPost, "http://gateway.bench/", nil)
	if err != nil {
		tb.Fatal(err)
	}
	h.req.Header = header
	h.req.RemoteAddr = "192.0.2.10:41234"
	h.rd = bytes.NewReader(nil)
	h.rc = &benchBody{h.rd}
	r := canned.Request{Dialect: bc.caller, Op: bc.op, ID: "9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d", Stream: canned.StreamShape{Events: benchStreamEvents}}
	if bc.op == canned.Get {
		// Tasks are served only to the caller the index saw create them.
		r.TaskID = h.createTask(tb)
	}
	h.body = r.Append(nil)
	h.msgID = messageIDIn(h.body)
	return h
}

// messageIDIn returns the message id's bytes in a request body, nil when
// it has none.
func messageIDIn(body []byte) []byte {
	const field = `"messageId":"`
	i := bytes.Index(body, []byte(field))
	if i < 0 {
		return nil
	}
	v := body[i+len(field):]
	return v[:bytes.IndexByte(v, '"')]
}

// createTask sends a message through the gateway and returns the task the
// backend created for it.
func (h *benchHarness) createTask(tb testing.TB) string {
	tb.Helper()
	h.body = canned.Request{Dialect: h.bc.caller, Op: canned.Send, ID: "1"}.Append(nil)
	h.serve()
	res := gjson.GetBytes(h.w.body, "result")
	id := res.Get("id").Str + res.Get("task.id").Str
	if h.w.status != http.StatusOK || id == "" {
		tb.Fatalf("creating a task: HTTP %d: %s", h.w.status, h.w.body)
	}
	return id
}

// serve runs the request through the gateway once.
func (h *benchHarness) serve() {
	h.sent++
	for i, n := len(h.msgID)-1, h.sent; i >= 0; i, n = i-1, n/10 {
		h.msgID[i] = byte('0' + n%10)
	}
	h.w.reset()
	h.rd.Reset(h.body)
	h.req.Body = h.rc
	h.req.ContentLength = int64(len(h.body))
	h.gw.ServeHTTP(h.w, h.req)
}

// loop serves the request b.N times.
func (h *benchHarness) loop(b *testing.B) {
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		h.serve()
	}
}

// check fails unless the gateway answers the case with a success in the
// caller's dialect: a benchmark of an error path would measure nothing.
func (h *benchHarness) check(tb testing.TB) {
	tb.Helper()
	h.serve()
	out := h.w.body
	if h.w.status != http.StatusOK {
		tb.Fatalf("HTTP %d: %s", h.w.status, out)
	}
	v10 := h.bc.caller == canned.V10
	if h.bc.op == canned.Stream {
		events := bytes.Split(bytes.TrimSpace(out), []byte("\n\n"))
		if len(events) != benchStreamEvents {
			tb.Fatalf("%d events, want %d: %s", len(events), benchStreamEvents, out)
		}
		last := gjson.GetBytes(bytes.TrimPrefix(events[len(events)-1], []byte("data: ")), "result")
		if v10 != last.Get("statusUpdate").Exists() || !v10 && !last.Get("final").Bool() {
			tb.Fatalf("last event not in the caller's dialect: %s", last.Raw)
		}
		return
	}
	res := gjson.GetBytes(out, "result")
	switch {
	case !res.Exists():
		tb.Fatalf("no result: %s", out)
	case v10 && h.bc.op == canned.Send && !res.Get("task.id").Exists(),
		v10 && h.bc.op == canned.Get && (res.Get("kind").Exists() || !res.Get("id").Exists()),
		!v10 && res.Get("kind").Str != "task":
		tb.Fatalf("result not in the caller's dialect: %s", out)
	}
}

// discardSpans is an exporter that drops what it is given: the gateway's
// cost of tracing without a collector's.
type discardSpans struct{}

func (discardSpans) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discardSpans) Shutdown(context.Context) error                             { return nil }

// benchBody is a request body the harness rewinds instead of reallocating.
type benchBody struct{ *bytes.Reader }

func (benchBody) Close() error { return nil }

// benchWriter is a ResponseWriter that keeps the response for checking and
// is reused from request to request. It flushes, as the server's does.
type benchWriter struct {
	h      http.Header
	status int
	body   []byte
}

func (w *benchWriter) Header() http.Header { return w.h }

func (w *benchWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *benchWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.body = append(w.body, p...)
	return len(p), nil
}

func (w *benchWriter) Flush() {}

func (w *benchWriter) reset() {
	clear(w.h)
	w.status = 0
	w.body = w.body[:0]
}
