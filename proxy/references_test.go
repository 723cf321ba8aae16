package proxy

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/tidwall/gjson"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"google.golang.org/grpc/codes"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/telemetry"
)

// referencesSeen records the referenceTaskIds of every send its backend
// got.
type referencesSeen struct {
	h    http.Handler
	mu   sync.Mutex
	seen []string
}

func (s *referencesSeen) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if refs := gjson.GetBytes(body, "params.message.referenceTaskIds"); refs.Exists() {
		s.mu.Lock()
		s.seen = append(s.seen, refs.Raw)
		s.mu.Unlock()
	}
	s.h.ServeHTTP(w, r)
}

func (s *referencesSeen) all() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.seen, " ")
}

// TestMessageReferencingAnotherCallersTask: a message whose
// referenceTaskIds name another caller's task (which an agent may read as
// the message's context, and answer from) is refused before the backend
// sees it, in each dialect, with the answer a reference to a task that
// does not exist gets, so that neither tells them apart. A reference to
// the caller's own task is carried to the backend.
func TestMessageReferencingAnotherCallersTask(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backendKind) {
		back := &referencesSeen{h: b.handler(t, nil)}
		g := newGateway(t, back, b.version, withAuth(t))
		alice, bob := g.as(token(t, "alice")), g.as(token(t, "bob"))
		for _, c := range callers {
			theirs := c.task(t, mustResult(t, bob.call("1", c.method(dialect.SendMessage), c.send("b1", c.text("input please"), "")))).Get("id").Str
			mine := c.task(t, mustResult(t, alice.call("2", c.method(dialect.SendMessage), c.send("a1", c.text("input please"), "")))).Get("id").Str
			send := func(id, ref string) string {
				return strings.Replace(c.send(id, c.text("what did it say?"), ""), `"messageId"`, `"referenceTaskIds":["`+mine+`","`+ref+`"],"messageId"`, 1)
			}
			toTheirs := wantError(t, alice.call("3", c.method(dialect.SendMessage), send("a2", theirs)), c.d, -32001)
			toNone := wantError(t, alice.call("4", c.method(dialect.SendMessage), send("a3", "no-such-task-0000")), c.d, -32001)
			if toTheirs.Raw != toNone.Raw || !strings.Contains(toTheirs.Get("message").Str, "referenceTaskIds[1]") {
				t.Errorf("%s: a reference to another's task: %s\nto none: %s", c.d, toTheirs.Raw, toNone.Raw)
			}
			if seen := back.all(); strings.Contains(seen, theirs) || strings.Contains(seen, "no-such-task") {
				t.Fatalf("%s: the backend got the references: %s", c.d, seen)
			}
			if c.d == dialect.V10 {
				// The REST and gRPC bindings' sends reach the same check.
				body := `{"message":{"messageId":"r1","role":"ROLE_USER","referenceTaskIds":["` + theirs + `"],"parts":[{"text":"what did it say?"}]}}`
				if status, r := restSend(t, g, body, token(t, "alice")); status != http.StatusNotFound || r.Get("error.details.0.reason").Str != "TASK_NOT_FOUND" {
					t.Errorf("REST: HTTP %d %s", status, r.Raw)
				}
				req := pbText("g1", "what did it say?")
				req.Message.ReferenceTaskIds = []string{theirs}
				_, err := newGRPCGateway(t, alice).raw.SendMessage(context.Background(), req)
				wantStatus(t, err, codes.NotFound, "TASK_NOT_FOUND")
				if seen := back.all(); strings.Contains(seen, theirs) {
					t.Fatalf("the backend got the reference: %s", seen)
				}
			}
			own := strings.Replace(c.send("a4", c.text("what did it say?"), ""), `"messageId"`, `"referenceTaskIds":["`+mine+`"],"messageId"`, 1)
			mustResult(t, alice.call("5", c.method(dialect.SendMessage), own))
			if seen := back.all(); !strings.Contains(seen, mine) {
				t.Errorf("%s: a reference to the caller's own task did not reach the backend: %q", c.d, seen)
			}
		}
	})
}

// TestReferenceSpanKeepsItsTaskID: the index spans of a message's
// referenceTaskIds carry a copy of each id. The id is read from the
// request's body, whose buffer the next request reuses; a span, exported
// after the call, would otherwise show what a later caller sent there.
func TestReferenceSpanKeepsItsTaskID(t *testing.T) {
	sink, tr := newSpanSink(t)
	b := backends[0]
	g := newGatewayOpts(t, b.handler(t, nil), b.version, Options{Tracing: tr})
	c := callers[0]
	mine := c.task(t, mustResult(t, g.call("1", c.method(dialect.SendMessage), c.send("m1", c.text("input please"), "")))).Get("id").Str
	sink.call(t)
	send := func(id, ref string) string {
		return strings.Replace(c.send(id, c.text("what did it say?"), ""), `"messageId"`, `"referenceTaskIds":["`+ref+`"],"messageId"`, 1)
	}
	mustResult(t, g.call("2", c.method(dialect.SendMessage), send("m2", mine)))
	_, under := sink.call(t)
	var refSpan sdktrace.ReadOnlySpan
	for _, sp := range under[indexGet] {
		if spanAttrs(sp)[string(telemetry.AttrTaskID)] != "" {
			refSpan = sp
		}
	}
	if refSpan == nil {
		t.Fatalf("no %q span with a task id under the send", indexGet)
	}
	// Requests of the same size, another id at the same place.
	other := strings.Repeat("z", len(mine))
	for i := range 8 {
		wantError(t, g.call("3", c.method(dialect.SendMessage), send("m"+string(rune('3'+i)), other)), c.d, -32001)
		sink.call(t)
	}
	if got := spanAttrs(refSpan)[string(telemetry.AttrTaskID)]; got != mine {
		t.Errorf("the reference's span says task %q, want %q", got, mine)
	}
}
