package proxy

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/a2agate/gateway/dialect"
	sseframe "github.com/a2agate/gateway/internal/sse"
	"github.com/a2agate/gateway/internal/testlog"
)

// noticedLog is a log that tells wrote after every line written to it, so
// that a test waits for a line without polling.
type noticedLog struct {
	testlog.Buffer
	wrote chan struct{}
}

func newNoticedLog() *noticedLog { return &noticedLog{wrote: make(chan struct{}, 1)} }

func (l *noticedLog) Write(p []byte) (int, error) {
	n, err := l.Buffer.Write(p)
	select {
	case l.wrote <- struct{}{}:
	default: // a notice is pending already: the reader looks at all lines
	}
	return n, err
}

// awaitCall waits, bounded, for the access log's first call line.
func (l *noticedLog) awaitCall(t *testing.T) map[string]any {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		if calls := accessLogCalls(t, &l.Buffer); len(calls) > 0 {
			return calls[0]
		}
		select {
		case <-l.wrote:
		case <-deadline:
			t.Fatalf("no access log line within 30s:\n%s", l.String())
		}
	}
}

// leavingCallerBackend is a 0.3 backend that answers a stream request
// with one working event, and then, as it does a unary one, holds the
// request until the gateway ends it: it tells arrived once the call (and
// its event) is out, and gone when the gateway ended the call.
func leavingCallerBackend(arrived, gone chan<- struct{}) http.Handler {
	return scripted(func(w http.ResponseWriter, r *http.Request, id string) {
		if r.Header.Get("Accept") == "text/event-stream" {
			w.Header().Set("Content-Type", "text/event-stream")
			sseWrite(w, working(id))
		}
		arrived <- struct{}{}
		select {
		case <-r.Context().Done():
			gone <- struct{}{}
		case <-time.After(30 * time.Second): // the test fails awaiting gone
		}
	})
}

// TestCallerGoneIsNotTheBackendsFailure: a caller that goes away (cancels
// its request, or closes its connection) while the backend works on its
// call ends the backend's call, unary or stream, and the call is logged,
// counted and traced as caller_gone, a stream with the events it got, with
// no backend error counted. Before, a unary call was backend_failure
// (unreachable, counted against the backend) and a stream ok.
func TestCallerGoneIsNotTheBackendsFailure(t *testing.T) {
	type leave struct {
		binding string
		stream  bool
		grpc    bool // the call needs g's gRPC client
		// call makes the call within ctx; for a stream, it returns once
		// the caller has the first event.
		call func(t *testing.T, g *grpcGateway, ctx context.Context)
	}
	c := callers[0]
	jsonrpc := func(t *testing.T, g *grpcGateway, ctx context.Context) {
		_, _, _ = g.postCtx(ctx, `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"t1"}}`)
	}
	jsonrpcStream := func(t *testing.T, g *grpcGateway, ctx context.Context) {
		res, err := http.DefaultClient.Do(g.streamRequest(ctx, "1", c.method(dialect.SendStreamingMessage), c.send("m", c.text("hi"), "")))
		if err != nil {
			t.Error(err)
			return
		}
		defer res.Body.Close()
		firstEvent(t, res.Body)
	}
	rest := func(path, body string) func(t *testing.T, g *grpcGateway, ctx context.Context) {
		return func(t *testing.T, g *grpcGateway, ctx context.Context) {
			method := http.MethodGet
			if body != "" {
				method = http.MethodPost
			}
			req, _ := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(g.url, "/")+path, strings.NewReader(body))
			req.Header.Set("A2A-Version", "1.0")
			if body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				return // the unary call, canceled before its answer
			}
			defer res.Body.Close()
			if res.StatusCode != http.StatusOK {
				b, _ := io.ReadAll(res.Body)
				t.Errorf("HTTP %d: %s", res.StatusCode, b)
				return
			}
			firstEvent(t, res.Body)
		}
	}
	grpcUnary := func(t *testing.T, g *grpcGateway, ctx context.Context) {
		_, _ = g.raw.GetTask(ctx, &a2apb.GetTaskRequest{Id: "t1"})
	}
	grpcStream := func(t *testing.T, g *grpcGateway, ctx context.Context) {
		stream, err := g.raw.SendStreamingMessage(ctx, &a2apb.SendMessageRequest{
			Message: &a2apb.Message{MessageId: "m", Role: a2apb.Role_ROLE_USER, Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: "hi"}}}}})
		if err != nil {
			t.Error(err)
			return
		}
		if _, err := stream.Recv(); err != nil {
			t.Errorf("first event: %v", err)
		}
	}
	for name, tc := range map[string]leave{
		"jsonrpc/unary":   {"jsonrpc", false, false, jsonrpc},
		"jsonrpc/stream":  {"jsonrpc", true, false, jsonrpcStream},
		"http_json/unary": {"http_json", false, false, rest("/tasks/t1", "")},
		"http_json/stream": {"http_json", true, false, rest("/message:stream",
			`{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}}`)},
		"grpc/unary":  {"grpc", false, true, grpcUnary},
		"grpc/stream": {"grpc", true, true, grpcStream},
	} {
		t.Run(name, func(t *testing.T) {
			arrived, gone := make(chan struct{}, 1), make(chan struct{}, 1)
			reg, logs := prometheus.NewRegistry(), newNoticedLog()
			sink, tr := newSpanSink(t)
			g := newGatewayOpts(t, leavingCallerBackend(arrived, gone), dialect.Version03,
				Options{Metrics: NewMetrics(reg, nil), Logger: slog.New(slog.NewJSONHandler(logs, nil)), Tracing: tr},
				func(a *AgentConfig) { a.Tasks.AllowUnknown = true })
			gg := &grpcGateway{testGateway: g}
			if tc.grpc {
				gg = newGRPCGateway(t, g)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			called := make(chan struct{})
			go func() {
				defer close(called)
				tc.call(t, gg, ctx)
				if tc.stream {
					// Away with the first event in hand, the backend's
					// stream still open.
					cancel()
				}
			}()
			await(t, arrived, "the call to reach the backend")
			if !tc.stream {
				cancel()
			}
			await(t, gone, "the backend's call to end with the caller's")
			await(t, called, "the caller to return")

			line := logs.awaitCall(t)
			if line["outcome"] != outcomeCallerGone || line["binding"] != tc.binding {
				t.Errorf("access log %v: want outcome %s, binding %s", line, outcomeCallerGone, tc.binding)
			}
			if tc.stream && line["events"] != 1.0 {
				t.Errorf("access log %v: want the 1 event delivered", line)
			}
			if n := counterValue(t, reg, "a2a_gateway_requests_total", map[string]string{"outcome": outcomeCallerGone, "binding": tc.binding}); n != 1 {
				t.Errorf("%v calls counted caller_gone, want 1", n)
			}
			if n := counterValue(t, reg, "a2a_gateway_backend_errors_total", nil); n != 0 {
				t.Errorf("%v backend errors counted for a caller that went away", n)
			}
			server, under := sink.call(t)
			wantSpan(t, server, trace.SpanKindServer, server.Name(), map[string]string{"a2a.outcome": outcomeCallerGone}, codes.Unset)
			for name, spans := range under {
				for _, sp := range spans {
					if sp.Status().Code == codes.Error {
						t.Errorf("span %s failed: %s", name, sp.Status().Description)
					}
				}
			}
			if len(under) == 0 {
				t.Error("no backend span under the server span")
			}
		})
	}
}

// TestCallerGoneBusyStream: a caller that leaves a stream whose backend
// keeps sending is caller_gone too, whether the gateway learns it from a
// failed write to the caller or from its read of the backend ending.
func TestCallerGoneBusyStream(t *testing.T) {
	gone := make(chan struct{}, 1)
	reg, logs := prometheus.NewRegistry(), newNoticedLog()
	g := newGatewayOpts(t, scripted(func(w http.ResponseWriter, r *http.Request, id string) {
		w.Header().Set("Content-Type", "text/event-stream")
		for range 100000 { // bounded: the test fails awaiting gone
			if r.Context().Err() != nil {
				gone <- struct{}{}
				return
			}
			sseWrite(w, working(id))
		}
	}), dialect.Version03, Options{Metrics: NewMetrics(reg, nil), Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := callers[0]
	res, err := http.DefaultClient.Do(g.streamRequest(ctx, "1", c.method(dialect.SendStreamingMessage), c.send("m", c.text("hi"), "")))
	if err != nil {
		t.Fatal(err)
	}
	firstEvent(t, res.Body)
	cancel()
	res.Body.Close()
	await(t, gone, "the backend's stream to end with the caller's")
	if line := logs.awaitCall(t); line["outcome"] != outcomeCallerGone {
		t.Errorf("access log %v: want outcome %s", line, outcomeCallerGone)
	}
	if n := counterValue(t, reg, "a2a_gateway_backend_errors_total", nil); n != 0 {
		t.Errorf("%v backend errors counted for a caller that went away", n)
	}
}

// TestCallerGoneOnlyWhenCanceled: a call's context that the gateway's
// shutdown or a deadline ended is no caller going away.
func TestCallerGoneOnlyWhenCanceled(t *testing.T) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	shutDown, end := context.WithCancelCause(context.Background())
	end(ErrShuttingDown)
	expired, stop := context.WithDeadline(context.Background(), time.Unix(1, 0))
	defer stop()
	underShutdown, stopUnder := context.WithCancel(shutDown)
	defer stopUnder()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		want bool
	}{
		{"running", context.Background(), false},
		{"canceled", canceled, true},
		{"shut down", shutDown, false},
		{"under a shutdown", underShutdown, false},
		{"past its deadline", expired, false},
	} {
		if got := callerGone(tc.ctx); got != tc.want {
			t.Errorf("%s: callerGone %v, want %v", tc.name, got, tc.want)
		}
	}
}

// firstEvent reads an event stream up to its first data event.
func firstEvent(t *testing.T, body io.Reader) {
	t.Helper()
	rd := sseframe.NewReader(body, 1<<20)
	for {
		ev, err := rd.Next()
		if err != nil {
			t.Errorf("before the first event: %v", err)
			return
		}
		if ev.Data != nil {
			return
		}
	}
}
