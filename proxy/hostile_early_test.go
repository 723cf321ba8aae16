package proxy

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	pb03 "github.com/a2aproject/a2a-go/a2apb"
	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"github.com/tidwall/gjson"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/a2agate/gateway/auth"

	"github.com/a2agate/gateway/dialect"
)

// TestRESTSlowBodyCountsTowardCallerBound: a REST call whose body is
// still arriving is one of its caller's calls in flight. With
// max_calls_per_caller 1, alice's second call while her first one's body
// is unfinished is refused 429 RESOURCE_EXHAUSTED naming the setting; bob
// is not. Before, the REST front end read the body before the core
// counted the call, so a caller could hold any number of calls open
// uncounted.
func TestRESTSlowBodyCountsTowardCallerBound(t *testing.T) {
	g := newGatewayOpts(t, backends[1].handler(t, nil), dialect.Version10, Options{ReadTimeout: time.Minute}, withAuth(t),
		func(a *AgentConfig) { a.MaxCallsPerCaller = 1 })
	alice, bob := token(t, "alice"), token(t, "bob")
	conn, err := net.Dial("tcp", strings.TrimSuffix(strings.TrimPrefix(g.url, "http://"), "/"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	// net/http answers 100 Continue once the handler reads the body:
	// by then the call was admitted.
	_, _ = io.WriteString(conn, "POST /message:send HTTP/1.1\r\nHost: gateway.test\r\nContent-Type: application/json\r\n"+
		"Authorization: Bearer "+alice+"\r\nExpect: 100-continue\r\nContent-Length: 500\r\n\r\n")
	br := bufio.NewReader(conn)
	if line, err := br.ReadString('\n'); err != nil || !strings.Contains(line, "100 Continue") {
		t.Fatalf("want 100 Continue, got %q, %v", line, err)
	}
	_, _ = io.WriteString(conn, `{"message":{"messageId":"m1",`)

	for _, path := range []string{"/tasks/x", "/v1/tasks/x"} {
		status, h, body := restDo(t, g, "GET", path, "", "", alice)
		if status != http.StatusTooManyRequests || h.Get("Retry-After") != "1" ||
			!strings.Contains(body.Raw, "max_calls_per_caller") {
			t.Errorf("alice's second call %s: HTTP %d %s", path, status, body.Raw)
		}
		if path == "/tasks/x" && body.Get("error.status").Str != "RESOURCE_EXHAUSTED" {
			t.Errorf("alice's second call: %s", body.Raw)
		}
	}
	if status, _, body := restDo(t, g, "GET", "/tasks/x", "", "", bob); status != http.StatusNotFound {
		t.Errorf("bob: HTTP %d %s", status, body.Raw)
	}
	// A caller without a valid token is not counted: it is refused.
	if status, _, body := restDo(t, g, "GET", "/tasks/x", "", "", "not-a-token"); status != http.StatusUnauthorized {
		t.Errorf("no valid token: HTTP %d %s", status, body.Raw)
	}
}

// inFlight reports how many calls key has in flight on a.
func inFlight(a *Agent, key string) int {
	a.calls.mu.Lock()
	defer a.calls.mu.Unlock()
	return a.calls.n[key]
}

// TestGRPCCallWaitingForItsMessageCounts: a gRPC call whose request
// message has not arrived is one of its caller's calls in flight, beside
// HTTP/1.1 and on a grpc_listen. With max_calls_per_caller 1, alice's next
// calls, on either service, unary or streaming, get RESOURCE_EXHAUSTED
// naming the setting at once; bob is served. Before, grpc-go read the
// message before the core counted the call, so a caller could hold any
// number of calls waiting uncounted, each until server.read_timeout (on a
// grpc_listen, until this fix, still).
func TestGRPCCallWaitingForItsMessageCounts(t *testing.T) {
	for _, tr := range grpcTransports {
		t.Run(tr.name, func(t *testing.T) { testGRPCCallWaitingForItsMessageCounts(t, tr.serve) })
	}
}

func testGRPCCallWaitingForItsMessageCounts(t *testing.T, serve func(*testing.T, *testGateway) *grpcGateway) {
	tg := newGatewayOpts(t, backends[1].handler(t, nil), backends[1].version, Options{ReadTimeout: time.Minute}, withAuth(t),
		func(a *AgentConfig) { a.MaxCallsPerCaller = 1 })
	g := serve(t, tg.as(token(t, "alice")))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	held, err := g.conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, "/lf.a2a.v1.A2AService/GetTask")
	if err != nil {
		t.Fatal(err)
	}
	_ = held
	key := auth.Principal{Issuer: testIssuer, Subject: "alice"}.String()
	for inFlight(tg.agent, key) == 0 {
		if ctx.Err() != nil {
			t.Fatal("the call waiting for its message was never counted")
		}
		runtime.Gosched()
	}
	calls := map[string]func() error{
		"1.0 GetTask": func() error { _, err := g.raw.GetTask(ctx, &a2apb.GetTaskRequest{Id: "x"}); return err },
		"1.0 SendStreamingMessage": func() error {
			s, err := g.raw.SendStreamingMessage(ctx, pbText("s1", "hi"))
			if err == nil {
				_, err = s.Recv()
			}
			return err
		},
		"0.3 GetTask": func() error {
			_, err := pb03.NewA2AServiceClient(g.conn).GetTask(ctx, &pb03.GetTaskRequest{Name: "tasks/x"})
			return err
		},
		"0.3 SendMessage": func() error {
			_, err := pb03.NewA2AServiceClient(g.conn).SendMessage(ctx, &pb03.SendMessageRequest{Request: &pb03.Message{
				MessageId: "m1", Role: pb03.Role_ROLE_USER, Parts: []*pb03.Part{{Part: &pb03.Part_Text{Text: "hi"}}}}})
			return err
		},
	}
	for name, call := range calls {
		if st := status.Convert(call()); st.Code() != codes.ResourceExhausted || !strings.Contains(st.Message(), "max_calls_per_caller") {
			t.Errorf("%s: %v, want RESOURCE_EXHAUSTED naming max_calls_per_caller", name, st.Err())
		}
	}
	bob := serve(t, tg.as(token(t, "bob")))
	if _, err := bob.raw.GetTask(ctx, &a2apb.GetTaskRequest{Id: "x"}); status.Code(err) != codes.NotFound {
		t.Errorf("bob: %v, want NOT_FOUND", err)
	}
}

// TestGRPCOversizeMessageAuthenticatedFirst: beside HTTP/1.1, a gRPC
// request message over max_body_bytes from a caller without a valid token
// gets UNAUTHENTICATED, as anything else wrong with its request does; from
// alice, RESOURCE_EXHAUSTED naming the limit and the setting. Unary and
// streaming, on both services. Before, grpc-go refused the message from
// its length before any interceptor checked the caller.
func TestGRPCOversizeMessageAuthenticatedFirst(t *testing.T) {
	tg := newGateway(t, backends[1].handler(t, nil), backends[1].version, withAuth(t), func(a *AgentConfig) { a.MaxBodyBytes = 4096 })
	raw := bytes.Repeat([]byte{1}, 8000)
	big := &a2apb.SendMessageRequest{Message: &a2apb.Message{MessageId: "m1", Role: a2apb.Role_ROLE_USER, Parts: []*a2apb.Part{{Content: &a2apb.Part_Raw{Raw: raw}}}}}
	big03 := &pb03.SendMessageRequest{Request: &pb03.Message{MessageId: "m1", Role: pb03.Role_ROLE_USER,
		Parts: []*pb03.Part{{Part: &pb03.Part_File{File: &pb03.FilePart{File: &pb03.FilePart_FileWithBytes{FileWithBytes: raw}}}}}}}
	for _, who := range []struct {
		name string
		tok  string
		code codes.Code
		says string
	}{{"no token", "", codes.Unauthenticated, "authentication required"}, {"alice", token(t, "alice"), codes.ResourceExhausted, "over this agent's limit of 4096 bytes (max_body_bytes)"}} {
		g := newGRPCGateway(t, tg.as(who.tok))
		ctx := context.Background()
		calls := map[string]func() error{
			"1.0 unary": func() error { _, err := g.raw.SendMessage(ctx, big); return err },
			"1.0 stream": func() error {
				s, err := g.raw.SendStreamingMessage(ctx, big)
				if err == nil {
					_, err = s.Recv()
				}
				return err
			},
			"0.3 unary": func() error { _, err := pb03.NewA2AServiceClient(g.conn).SendMessage(ctx, big03); return err },
		}
		for name, call := range calls {
			if st := status.Convert(call()); st.Code() != who.code || !strings.Contains(st.Message(), who.says) {
				t.Errorf("%s, %s: %v, want %v saying %q", who.name, name, st.Err(), who.code, who.says)
			}
		}
	}
}

// TestTwoVersionsRefused: a request naming two A2A versions (two
// A2A-Version headers, or the header and the query parameter, that differ)
// is refused naming both, over JSON-RPC, REST and gRPC; the same version
// twice is served. Before, the first was taken and the other dropped
// unread.
func TestTwoVersionsRefused(t *testing.T) {
	g := newGateway(t, backends[1].handler(t, nil), backends[1].version)
	get := `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}`
	for _, tc := range []struct {
		name, query string
		header      []string
		says        string
	}{
		{"two headers", "", []string{"1.0", "0.3"}, `"1.0" and "0.3"`},
		{"header and query", "?A2A-Version=0.3", []string{"1.0"}, `"0.3" and "1.0" (header and query)`},
		{"the same twice", "?A2A-Version=1.0", []string{"1.0", "1.0"}, ""},
	} {
		req, err := http.NewRequest("POST", strings.TrimSuffix(g.url, "/")+"/"+tc.query, strings.NewReader(get))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header["A2A-Version"] = tc.header
		_, b := roundTrip(t, req)
		r := gjson.ParseBytes(b)
		if tc.says == "" {
			wantError(t, r, dialect.V10, -32001)
			continue
		}
		wantErrorSaying(t, r, dialect.V10, -32600, tc.says)
	}
	res, b := g.request(t, "GET", "/tasks/x?A2A-Version=0.3", "", "A2A-Version", "1.0")
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(gjson.GetBytes(b, "error.message").Str, "name one version") {
		t.Errorf("REST: HTTP %d %s", res.StatusCode, b)
	}
	gg := newGRPCGateway(t, g)
	ctx := metadata.AppendToOutgoingContext(context.Background(), "a2a-version", "1.0", "a2a-version", "0.3")
	if _, err := gg.raw.GetTask(ctx, &a2apb.GetTaskRequest{Id: "x"}); status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), "name one version") {
		t.Errorf("gRPC: %v", err)
	}
}
