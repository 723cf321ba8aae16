package proxy

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/store"
)

// TestRetryRecordsOfOneCallerSurviveAnothersFlood: a caller sending many
// distinct keys fills the memory index's send records; another caller's
// record stays, so its retry is still answered from the first send and
// the backend does not see its message twice.
func TestRetryRecordsOfOneCallerSurviveAnothersFlood(t *testing.T) {
	forEachRetryPair(t, func(t *testing.T, rc *retryCase) {
		tasks := store.NewMemory(store.MemoryConfig{MaxTasks: 8, MaxTasksPerOwner: 4})
		t.Cleanup(func() { _ = tasks.Close() })
		g := newGatewayOpts(t, rc.backend, rc.b.version, Options{Tasks: tasks}, withAuth(t))
		alice, mallory := g.as(token(t, "alice")), g.as(token(t, "mallory"))
		c := rc.c
		params := c.send("a1", c.text("what time is it?"), "")
		first := mustResult(t, sendResult(t, alice, c, params))
		const flood = 12 // within sendCounter.arrived's room
		for i := range flood {
			mustResult(t, sendResult(t, mallory, c, c.send(fmt.Sprintf("m%d", i), c.text("what time is it?"), "")))
		}
		again := mustResult(t, sendResult(t, alice, c, params))
		if !jsonSame(first.Raw, again.Raw) {
			t.Fatalf("alice's retry got another answer:\n%s\n%s", first.Raw, again.Raw)
		}
		wantSends(t, rc, 1+flood)
		// The flooding caller's own oldest keys went: its retry is new work.
		mustResult(t, sendResult(t, mallory, c, c.send("m0", c.text("what time is it?"), "")))
		wantSends(t, rc, 2+flood)
	})
}

// TestSameKeyTwoPrincipalsConcurrently: while alice's send with a key
// runs, bob's send with the same key and message is his own work: it
// reaches the backend rather than joining alice's flight, and each gets
// his own task.
func TestSameKeyTwoPrincipalsConcurrently(t *testing.T) {
	forEachRetryPair(t, func(t *testing.T, rc *retryCase) {
		g := newGateway(t, rc.backend, rc.b.version, withAuth(t))
		alice, bob := g.as(token(t, "alice")), g.as(token(t, "bob"))
		c := rc.c
		params := c.send("m1", c.text("wait"), "")
		answers := make(chan gjson.Result, 2)
		go func() { answers <- sendResult(t, alice, c, params, HeaderIdempotencyKey, "k") }()
		<-rc.backend.arrived
		go func() { answers <- sendResult(t, bob, c, params, HeaderIdempotencyKey, "k") }()
		// Bounded, so that a send that joined alice's fails by name.
		select {
		case <-rc.backend.arrived: // bob's send reached the backend, alongside alice's
		case b := <-answers:
			t.Fatalf("a send was answered before the backend saw bob's: %s", b.Raw)
		case <-time.After(30 * time.Second):
			t.Fatal("bob's send never reached the backend: it joined alice's")
		}
		rc.release()
		a, b := wantCompleted(t, c, <-answers), wantCompleted(t, c, <-answers)
		if a.Get("id").Str == b.Get("id").Str {
			t.Fatalf("alice and bob got one task: %s", a.Raw)
		}
		wantSends(t, rc, 2)
	})
}

// TestIdempotencyKeyGivenTwice: a send with two Idempotency-Key values
// (two headers, or two metadata values over gRPC) names two sends: it is
// refused in each binding's form, saying so, and the backend does not see
// it; the gateway does not pick one and drop the other.
func TestIdempotencyKeyGivenTwice(t *testing.T) {
	back, tg, alice, tok := aliceBehind(t, backends[1])
	c := callers[1]
	post := func(path, body string) (*http.Response, gjson.Result) {
		req, _ := http.NewRequest(http.MethodPost, strings.TrimSuffix(tg.url, "/")+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Add(HeaderIdempotencyKey, "order-1")
		req.Header.Add(HeaderIdempotencyKey, "order-2")
		res, b := roundTrip(t, req)
		return res, gjson.ParseBytes(b)
	}
	_, r := post("/", rpc(c.method(dialect.SendMessage), c.send("j1", c.text("hi"), "")))
	wantErrorSaying(t, r, c.d, -32600, "more than once")
	res, r := post("/message:send", `{"message":{"messageId":"r1","role":"ROLE_USER","parts":[{"text":"hi"}]}}`)
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(r.Get("error.message").Str, "more than once") {
		t.Errorf("REST: HTTP %d %s", res.StatusCode, r.Raw)
	}
	g := newGRPCGateway(t, alice)
	ctx := metadata.AppendToOutgoingContext(context.Background(), "idempotency-key", "order-1", "idempotency-key", "order-2")
	_, err := g.raw.SendMessage(ctx, pbText("g1", "hi"))
	if st := wantStatus(t, err, codes.InvalidArgument, "INVALID_REQUEST"); !strings.Contains(st.Message(), "more than once") {
		t.Errorf("gRPC: %v", err)
	}
	if n := back.sends.Load(); n != 0 {
		t.Fatalf("the backend saw %d sends", n)
	}
}
