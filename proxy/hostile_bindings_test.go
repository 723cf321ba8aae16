package proxy

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"github.com/tidwall/gjson"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/a2agate/gateway/dialect"
)

// aliceBehind is a gateway with auth in front of b, whose sends back
// counts, and the same gateway as alice, with her token.
func aliceBehind(t *testing.T, b backendKind) (back *sendCounter, tg, alice *testGateway, tok string) {
	back = newSendCounter(b.handler(t, nil))
	tg = newGateway(t, back, b.version, withAuth(t))
	tok = token(t, "alice")
	return back, tg, tg.as(tok), tok
}

// restSend posts a REST send as tok's holder, with header's name and
// value pairs, and returns the status and the answer.
func restSend(t *testing.T, g *testGateway, body, tok string, header ...string) (int, gjson.Result) {
	t.Helper()
	res, b := g.request(t, http.MethodPost, "/message:send", body, append([]string{"Content-Type", "application/json", "Authorization", bearerOf(tok)}, header...)...)
	return res.StatusCode, gjson.ParseBytes(b)
}

func pbText(id, text string) *a2apb.SendMessageRequest {
	return &a2apb.SendMessageRequest{Message: &a2apb.Message{MessageId: id, Role: a2apb.Role_ROLE_USER,
		Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: text}}}}}
}

// TestRetryAcrossBindings: one Idempotency-Key sent over REST, then gRPC
// (as metadata), then JSON-RPC, each with a fresh message id, is one send:
// the backend sees it once and every binding gets the same task. The key
// with another message is refused in each binding's own error form,
// naming the key, and the backend does not see it.
func TestRetryAcrossBindings(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backendKind) {
		back, tg, alice, tok := aliceBehind(t, b)
		g := newGRPCGateway(t, alice)
		const key = "order-42"
		ctx := metadata.AppendToOutgoingContext(context.Background(), "idempotency-key", key)

		status, first := restSend(t, tg, `{"message":{"messageId":"r1","role":"ROLE_USER","parts":[{"text":"hello"}]}}`, tok, HeaderIdempotencyKey, key)
		id := first.Get("task.id").Str
		if status != http.StatusOK || id == "" {
			t.Fatalf("REST send: HTTP %d %s", status, first.Raw)
		}
		res, err := g.raw.SendMessage(ctx, pbText("g1", "hello"))
		if err != nil || res.GetTask().GetId() != id {
			t.Fatalf("the gRPC retry got %v, %v; want task %s", res, err, id)
		}
		c := callers[1]
		r := sendResult(t, alice, c, c.send("j1", c.text("hello"), ""), HeaderIdempotencyKey, key)
		if got := c.task(t, mustResult(t, r)).Get("id").Str; got != id {
			t.Fatalf("the JSON-RPC retry got %s, want task %s", r.Raw, id)
		}
		wantSends(t, &retryCase{backend: back}, 1)

		status, reuse := restSend(t, tg, `{"message":{"messageId":"r2","role":"ROLE_USER","parts":[{"text":"goodbye"}]}}`, tok, HeaderIdempotencyKey, key)
		if e := reuse.Get("error"); status != http.StatusBadRequest || e.Get("status").Str != "INVALID_ARGUMENT" ||
			e.Get("details.0.reason").Str != "INVALID_PARAMS" || !strings.Contains(e.Get("message").Str, "Idempotency-Key") {
			t.Fatalf("REST key reuse: HTTP %d %s", status, reuse.Raw)
		}
		_, err = g.raw.SendMessage(ctx, pbText("g2", "goodbye"))
		if st := wantStatus(t, err, codes.InvalidArgument, "INVALID_PARAMS"); !strings.Contains(st.Message(), "Idempotency-Key") {
			t.Fatalf("gRPC key reuse: %v", err)
		}
		stream, err := g.raw.SendStreamingMessage(ctx, pbText("g3", "goodbye"))
		if err == nil {
			_, err = stream.Recv()
		}
		wantStatus(t, err, codes.InvalidArgument, "INVALID_PARAMS")
		wantSends(t, &retryCase{backend: back}, 1)
	})
}

// TestBackendNamingAnotherCallersTask: a backend that answers alice's
// send with the task it made for bob (a hostile or buggy agent reusing
// ids) does not hand bob's task to alice, in any binding or dialect,
// unary or streaming: she gets the answer for a task that does not exist
// in her own form, and bob keeps his task.
func TestBackendNamingAnotherCallersTask(t *testing.T) {
	task := `{"id":"t-bob","contextId":"c-bob","status":{"state":"TASK_STATE_COMPLETED"},"artifacts":[{"artifactId":"a","parts":[{"text":"bob's secret"}]}]}`
	back := scripted(func(w http.ResponseWriter, r *http.Request, id string) {
		if strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
			w.Header().Set("Content-Type", "text/event-stream")
			sseWrite(w, `data: {"jsonrpc":"2.0","id":`+id+`,"result":{"task":`+task+`}}`+"\n\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"result":{"task":`+task+`}}`)
	})
	tg := newGateway(t, back, dialect.Version10, withAuth(t))
	bob, aliceTok := tg.as(token(t, "bob")), token(t, "alice")
	alice := tg.as(aliceTok)
	c10 := callers[1]
	if got := c10.task(t, mustResult(t, sendResult(t, bob, c10, c10.send("b1", c10.text("hi"), "")))).Get("id").Str; got != "t-bob" {
		t.Fatalf("bob's send made %q", got)
	}
	leaks := func(what, raw string) {
		t.Helper()
		if strings.Contains(raw, "secret") || strings.Contains(raw, "t-bob") {
			t.Errorf("%s: alice learned bob's task: %s", what, raw)
		}
	}
	for i, c := range callers {
		id := "a" + c.d.String()
		r := sendResult(t, alice, c, c.send(id, c.text("hi"), ""))
		wantError(t, r, c.d, -32001)
		leaks(c.d.String()+" send", r.Raw)
		s := alice.stream(string(rune('1'+i)), c.method(dialect.SendStreamingMessage), c.send(id+"s", c.text("hi"), ""))
		r = streamError(t, s)
		wantError(t, r, c.d, -32001)
		leaks(c.d.String()+" stream", r.Raw)
	}
	status, r := restSend(t, tg, `{"message":{"messageId":"ar","role":"ROLE_USER","parts":[{"text":"hi"}]}}`, aliceTok)
	if status != http.StatusNotFound || r.Get("error.details.0.reason").Str != "TASK_NOT_FOUND" {
		t.Errorf("REST send: HTTP %d %s", status, r.Raw)
	}
	leaks("REST send", r.Raw)
	g := newGRPCGateway(t, alice)
	_, err := g.raw.SendMessage(context.Background(), pbText("ag", "hi"))
	wantStatus(t, err, codes.NotFound, "TASK_NOT_FOUND")
	stream, err := g.raw.SendStreamingMessage(context.Background(), pbText("ags", "hi"))
	if err == nil {
		var ev *a2apb.StreamResponse
		for ev, err = stream.Recv(); err == nil; ev, err = stream.Recv() {
			leaks("gRPC stream event", ev.String())
		}
	}
	wantStatus(t, err, codes.NotFound, "TASK_NOT_FOUND")
	// Nor does alice's retry of her send, whose first answer was refused.
	wantError(t, sendResult(t, alice, c10, c10.send("a"+c10.d.String(), c10.text("hi"), "")), c10.d, -32001)
	// Bob's task is still his alone.
	if t2, err := tg.agent.tasks.Get(context.Background(), "test", "t-bob"); err != nil || !strings.HasSuffix(t2.Owner, "|bob") {
		t.Fatalf("bob's task in the index: %+v, %v", t2, err)
	}
}

// TestGRPCMessageOverLimitOnceJSON: a gRPC message within the agent's
// limit on the wire whose JSON form is not (raw bytes travel base64, a
// third larger) is refused as gRPC refuses a message too large,
// ResourceExhausted, saying why its size is over and what to do; the
// backend does not see it.
func TestGRPCMessageOverLimitOnceJSON(t *testing.T) {
	back := newSendCounter(backends[1].handler(t, nil))
	tg := newGateway(t, back, dialect.Version10, func(a *AgentConfig) { a.MaxBodyBytes = 1 << 20 })
	g := newGRPCGateway(t, tg)
	req := &a2apb.SendMessageRequest{Message: &a2apb.Message{MessageId: "m", Role: a2apb.Role_ROLE_USER,
		Parts: []*a2apb.Part{{Content: &a2apb.Part_Raw{Raw: make([]byte, 900<<10)}}}}}
	_, err := g.raw.SendMessage(context.Background(), req)
	if st := wantStatus(t, err, codes.ResourceExhausted, "INVALID_REQUEST"); !strings.Contains(st.Message(), "base64") {
		t.Fatalf("the refusal does not say why: %v", err)
	}
	stream, err := g.raw.SendStreamingMessage(context.Background(), req)
	if err == nil {
		_, err = stream.Recv()
	}
	wantStatus(t, err, codes.ResourceExhausted, "INVALID_REQUEST")
	wantSends(t, &retryCase{backend: back}, 0)
}

// TestRESTBodyThatNeverArrives: a REST caller that declares a body and
// sends only part of it, or sends a chunked body with no end, gets a 400
// Status saying the body did not arrive within server.read_timeout, as a
// JSON-RPC caller does, instead of holding the call open forever; the
// backend never sees it.
func TestRESTBodyThatNeverArrives(t *testing.T) {
	back := newSendCounter(backends[1].handler(t, nil))
	g := newGatewayOpts(t, back, dialect.Version10, Options{ReadTimeout: 100 * time.Millisecond})
	addr := strings.TrimSuffix(strings.TrimPrefix(g.url, "http://"), "/")
	part := `{"message":{"messageId":"m1",`
	for name, head := range map[string]string{
		"declared length": "Content-Length: 500\r\n",
		"chunked":         "Transfer-Encoding: chunked\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			// Bounded, so that a call held open fails by name.
			_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
			body := part
			if head != "Content-Length: 500\r\n" {
				body = strconv.FormatInt(int64(len(part)), 16) + "\r\n" + part + "\r\n"
			}
			_, _ = io.WriteString(conn, "POST /message:send HTTP/1.1\r\nHost: gateway.test\r\nContent-Type: application/json\r\n"+head+"\r\n"+body)
			res, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatalf("no answer: %v", err)
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			e := gjson.GetBytes(b, "error")
			if res.StatusCode != http.StatusBadRequest || e.Get("status").Str != "INVALID_ARGUMENT" ||
				e.Get("details.0.reason").Str != "INVALID_REQUEST" || !strings.Contains(e.Get("message").Str, "server.read_timeout") {
				t.Fatalf("HTTP %d %s", res.StatusCode, b)
			}
		})
	}
	wantSends(t, &retryCase{backend: back}, 0)
}

// TestGRPCManyStreamsCancelled: many gRPC streaming sends open at once,
// each held by the backend, all cancelled by their caller mid-stream: every
// backend stream ends with its caller, each caller gets Canceled, and no
// goroutine outlives them.
func TestGRPCManyStreamsCancelled(t *testing.T) {
	for _, tr := range grpcTransports {
		t.Run(tr.name, func(t *testing.T) {
			checkNoLeak(t)
			const n = 24
			back := stalling{make(chan struct{}, n), make(chan struct{}, n)}
			g := tr.serve(t, newGateway(t, back, dialect.Version10))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			streams := make([]a2apb.A2AService_SendStreamingMessageClient, n)
			for i := range streams {
				var err error
				if streams[i], err = g.raw.SendStreamingMessage(ctx, pbText("m"+strconv.Itoa(i), "hi")); err != nil {
					t.Fatal(err)
				}
			}
			for range n {
				await(t, back.arrived, "every stream to reach the backend")
			}
			cancel()
			for range n {
				await(t, back.canceled, "every backend stream to end with its caller")
			}
			for i, s := range streams {
				if _, err := s.Recv(); status.Code(err) != codes.Canceled {
					t.Fatalf("stream %d: want Canceled, got %v", i, err)
				}
			}
		})
	}
}

// TestRESTHostilePaths: paths and queries TestRESTErrors does not send:
// each gets a google.rpc.Status with the right HTTP status and reason, and
// a task id however spelled is only ever a task id.
func TestRESTHostilePaths(t *testing.T) {
	g := newGateway(t, backends[1].handler(t, nil), dialect.Version10, withAuth(t))
	alice := token(t, "alice")
	cases := []struct {
		name, method, path string
		status             int
		reason, says       string
	}{
		{"dot segments are not a route", "GET", "/tasks/..", 404, "METHOD_NOT_FOUND", "not in canonical form"},
		{"an encoded dot id is an id", "GET", "/tasks/%2E%2E", 404, "TASK_NOT_FOUND", "Task not found"},
		{"a very long id", "GET", "/tasks/" + strings.Repeat("x", 64<<10), 404, "TASK_NOT_FOUND", "Task not found"},
		{"an encoded NUL in an id", "GET", "/tasks/x%00y", 404, "TASK_NOT_FOUND", "Task not found"},
		{"an id not UTF-8", "GET", "/tasks/%FF", 400, "INVALID_PARAMS", "not valid UTF-8"},
		{"an encoded colon is not a verb", "POST", "/tasks/x%3Acancel", 405, "METHOD_NOT_FOUND", "accepts GET"},
		{"a repeated query parameter", "GET", "/tasks/x?historyLength=1&historyLength=2", 400, "INVALID_PARAMS", "more than once"},
		{"two spellings of one parameter", "GET", "/tasks/x?historyLength=1&history_length=2", 400, "INVALID_PARAMS", "more than once"},
		{"a negative historyLength", "GET", "/tasks/x?historyLength=-1", 400, "INVALID_PARAMS", "must not be negative"},
		{"a historyLength past 32 bits", "GET", "/tasks/x?historyLength=99999999999", 400, "INVALID_PARAMS", "32-bit integer"},
		{"a pageSize of 0", "GET", "/tasks?pageSize=0", 400, "INVALID_PARAMS", "from 1 to 100"},
		{"a pageSize too large", "GET", "/tasks?pageSize=100000", 400, "INVALID_PARAMS", "from 1 to 100"},
		{"a forged pageToken", "GET", "/tasks?pageToken=garbage", 400, "INVALID_PARAMS", "not a token this listing issued"},
		{"a query not validly encoded", "GET", "/tasks?contextId=%zz", 400, "INVALID_PARAMS", "not validly encoded"},
		{"a semicolon in the query", "GET", "/tasks?pageSize=1;pageSize=2", 400, "INVALID_PARAMS", "not validly encoded"},
		// The spec lets A2A-Version be a query parameter (§3.6.1), as
		// JSON-RPC takes it: it is the version, not an unknown filter.
		{"A2A-Version as a query parameter", "GET", "/tasks/x?A2A-Version=1.0", 404, "TASK_NOT_FOUND", "Task not found"},
		{"A2A-Version beside a filter", "GET", "/tasks?A2A-Version=1.0&pageSize=0", 400, "INVALID_PARAMS", "from 1 to 100"},
		{"A2A-Version on a route without a query", "POST", "/tasks/x:cancel?A2A-Version=1.0", 404, "TASK_NOT_FOUND", "Task not found"},
		{"an A2A-Version query the gateway does not speak", "GET", "/tasks/x?A2A-Version=9.9", 400, "VERSION_NOT_SUPPORTED", `"9.9" is not supported`},
		{"A2A-Version twice in the query", "GET", "/tasks/x?A2A-Version=1.0&A2A-Version=0.3", 400, "INVALID_PARAMS", "more than once"},
	}
	for _, tc := range cases {
		status, _, body := restDo(t, g, tc.method, tc.path, "", "", alice)
		e := body.Get("error")
		if status != tc.status || e.Get("code").Int() != int64(tc.status) || e.Get("details.0.reason").Str != tc.reason ||
			!strings.Contains(e.Get("message").Str, tc.says) {
			t.Errorf("%s: HTTP %d %.300s", tc.name, status, body.Raw)
		}
	}
}

// TestRetryOfDirectMessageAcrossBindings: a send a 0.x JSON-RPC caller
// made, answered with a message, retried with its key over REST and gRPC,
// gets the same message in each binding's form; the backend saw it once.
func TestRetryOfDirectMessageAcrossBindings(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backendKind) {
		back, tg, alice, tok := aliceBehind(t, b)
		const key = "ask-1"
		c := callers[0]
		first := mustResult(t, sendResult(t, alice, c, c.send("j1", c.text("what time is it?"), ""), HeaderIdempotencyKey, key))
		text := first.Get("parts.0.text").Str
		if first.Get("kind").Str != "message" || text == "" {
			t.Fatalf("want a message: %s", first.Raw)
		}
		status, r := restSend(t, tg, `{"message":{"messageId":"r1","role":"ROLE_USER","parts":[{"text":"what time is it?"}]}}`, tok, HeaderIdempotencyKey, key)
		if status != http.StatusOK || r.Get("message.messageId").Str != first.Get("messageId").Str || r.Get("message.parts.0.text").Str != text {
			t.Fatalf("REST retry: HTTP %d %s, want %s", status, r.Raw, first.Raw)
		}
		g := newGRPCGateway(t, alice)
		ctx := metadata.AppendToOutgoingContext(context.Background(), "idempotency-key", key)
		res, err := g.raw.SendMessage(ctx, pbText("g1", "what time is it?"))
		if err != nil || res.GetMessage().GetMessageId() != first.Get("messageId").Str || res.GetMessage().GetParts()[0].GetText() != text {
			t.Fatalf("gRPC retry: %v, %v; want %s", res, err, first.Raw)
		}
		wantSends(t, &retryCase{backend: back}, 1)
	})
}

// TestPathsOutsideEveryAgent: on a gateway with no agent at "/", a call to
// a path no agent serves gets a google.rpc.Status 404 saying so, as an
// unknown route below an agent does, never Go's plain-text 404; the 0.3
// routes' form under /v1.
func TestPathsOutsideEveryAgent(t *testing.T) {
	gw, err := NewGateway([]*Agent{idleAgent(t, "a", "/a"), idleAgent(t, "b", "/b/")})
	if err != nil {
		t.Fatal(err)
	}
	url := httptestServer(t, gw)
	for _, tc := range []struct{ method, path string }{
		{"GET", "/"}, {"POST", "/"}, {"GET", "/tasks/x"}, {"POST", "/message:send"}, {"GET", "/c/.well-known/agent-card.json"},
		{"GET", "/v1/tasks/x"},
	} {
		req, _ := http.NewRequest(tc.method, url+tc.path, strings.NewReader(`{}`))
		req.Header.Set("Content-Type", "application/json")
		res, b := roundTrip(t, req)
		body := gjson.ParseBytes(b)
		msg, reason := body.Get("error.message").Str, body.Get("error.details.0.reason").Str
		if strings.HasPrefix(tc.path, "/v1/") {
			msg, reason = body.Get("message").Str, "METHOD_NOT_FOUND"
			if body.Get("code").Int() != -32601 {
				reason = ""
			}
		}
		if res.StatusCode != http.StatusNotFound || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") ||
			reason != "METHOD_NOT_FOUND" || !strings.Contains(msg, "no agent") {
			t.Errorf("%s %s: HTTP %d %q %s", tc.method, tc.path, res.StatusCode, res.Header.Get("Content-Type"), b)
		}
	}
}

// TestListTasksFetchAnsweredWithAnotherTask: a backend that answers the
// fetch of one of alice's listed tasks with another task (an id the index
// never held) is refused as any get answered about another task is: the
// listing does not show that task, and the index does not make it hers.
func TestListTasksFetchAnsweredWithAnotherTask(t *testing.T) {
	var gets atomic.Int32
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		req := gjson.ParseBytes(b)
		result := `{"task":{"id":"t-alice","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"}}}`
		if req.Get("method").Str == "GetTask" {
			gets.Add(1)
			result = `{"id":"t-other","contextId":"c-other","status":{"state":"TASK_STATE_COMPLETED"},"artifacts":[{"artifactId":"a","parts":[{"text":"not alice's"}]}]}`
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+req.Get("id").Raw+`,"result":`+result+`}`)
	})
	tg := newGateway(t, h, dialect.Version10, withAuth(t))
	alice := tg.as(token(t, "alice"))
	c := callers[1]
	mustResult(t, sendResult(t, alice, c, c.send("a1", c.text("hi"), "")))
	r := alice.call("2", "ListTasks", `{}`)
	if gets.Load() == 0 {
		t.Fatalf("the listing fetched no task: %s", r.Raw)
	}
	if strings.Contains(r.Raw, "t-other") || strings.Contains(r.Raw, "not alice's") {
		t.Errorf("the listing shows a task the backend answered in place of alice's: %s", r.Raw)
	}
	if _, err := tg.agent.tasks.Get(context.Background(), "test", "t-other"); err == nil {
		t.Errorf("the index made the task the backend answered with alice's")
	}
	wantErrorSaying(t, r, c.d, -32603, "about another task")
}
