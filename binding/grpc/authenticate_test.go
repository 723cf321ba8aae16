package grpcbind

import (
	"context"
	"io"
	"net/http"
	"sync"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
)

// checker is an Options.Authenticate that refuses every caller while
// refuse is set, as the core refuses one, and keeps the requests it got.
type checker struct {
	mu     sync.Mutex
	refuse bool
	got    []*http.Request
	bodies []string
}

func (c *checker) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got, c.bodies = append(c.got, r), append(c.bodies, string(body))
	if !c.refuse {
		return
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="http://gateway.test/"`)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusUnauthorized)
	_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-31401,"message":"authentication required: bearer token required"}}`)
}

func (c *checker) calls() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.got)
}

// TestAuthenticateWhatTheFrontEndRefuses: Options.Authenticate is asked
// about the caller of a call the front end refuses itself, given the call's
// metadata and no body; a caller it refuses gets its answer, headers too,
// and one it passes the front end's own refusal. A call the front end
// passes on goes to the core alone, whether the core serves it or answers
// an error.
func TestAuthenticateWhatTheFrontEndRefuses(t *testing.T) {
	c := &core{answer: `{"jsonrpc":"2.0","id":1,"result":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}`}
	check := &checker{refuse: true}
	conn := served(t, c, Options{Authenticate: check})
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer not.a.jwt")
	cut := wireBytes(protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.BytesType), 200))
	good := wireBytes(protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "t"))
	const getTask, subscribe = "/lf.a2a.v1.A2AService/GetTask", "/lf.a2a.v1.A2AService/SubscribeToTask"

	for _, stream := range []bool{false, true} {
		method := map[bool]string{false: getTask, true: subscribe}[stream]
		var md metadata.MD
		err := invokeRawHeader(ctx, conn, method, stream, cut, &md)
		if st := status.Convert(err); st.Code() != codes.Unauthenticated || st.Message() != "authentication required: bearer token required" {
			t.Fatalf("%s malformed, caller refused: %v, want the refusal", method, err)
		}
		if got := md.Get("www-authenticate"); len(got) != 1 || got[0] != `Bearer realm="http://gateway.test/"` {
			t.Errorf("%s: www-authenticate %q, want the refusal's challenge", method, got)
		}
		check.mu.Lock()
		r, body := check.got[len(check.got)-1], check.bodies[len(check.bodies)-1]
		check.mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer not.a.jwt" || body != "" || r.URL.Path != "/" {
			t.Errorf("%s: the check got %s %v with body %q, want the call's metadata and no body", method, r.URL.Path, r.Header, body)
		}
		if c.req != nil {
			t.Fatalf("%s: the malformed call reached the core", method)
		}
	}

	// A method neither service has is no operation: answered as such.
	before := check.calls()
	if st := status.Convert(invokeRawHeader(ctx, conn, "/lf.a2a.v1.A2AService/NoSuchMethod", false, good, nil)); st.Code() != codes.Unimplemented {
		t.Fatalf("an unknown method: %v, want Unimplemented", st.Err())
	}
	if check.calls() != before {
		t.Fatal("the check was asked about a method neither service has")
	}

	check.mu.Lock()
	check.refuse = false
	check.mu.Unlock()
	before = check.calls()
	if st := status.Convert(invokeRawHeader(ctx, conn, getTask, false, cut, nil)); st.Code() != codes.InvalidArgument {
		t.Fatalf("malformed, caller passed: %v, want the front end's InvalidArgument", st.Err())
	}
	if check.calls() != before+1 {
		t.Fatalf("the check was asked %d times for a malformed call, want once", check.calls()-before)
	}

	before = check.calls()
	if err := invokeRawHeader(ctx, conn, getTask, false, good, nil); err != nil {
		t.Fatalf("well-formed: %v", err)
	}
	c.answer = `{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"task not found"}}`
	if st := status.Convert(invokeRawHeader(ctx, conn, getTask, false, good, nil)); st.Code() != codes.NotFound {
		t.Fatalf("well-formed, the core's error: %v, want NotFound", st.Err())
	}
	if check.calls() != before {
		t.Fatalf("the check was asked about %d calls the core served", check.calls()-before)
	}
}
