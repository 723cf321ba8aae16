package proxy

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/store"
)

// endedContextRefused is an index that refuses a write in an ended
// context, as the Redis index does (the memory one takes any).
type endedContextRefused struct{ store.Store }

func (s endedContextRefused) SaveSend(ctx context.Context, key store.SendKey, rec store.SendRecord) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.Store.SaveSend(ctx, key, rec)
}

func (s endedContextRefused) PutSend(ctx context.Context, t store.Task, key store.SendKey, rec store.SendRecord) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.Store.PutSend(ctx, t, key, rec)
}

// sendState is the state the index holds for the send keyed by its
// message id, of a caller without a token.
func sendState(t *testing.T, tasks store.Store, messageID string) string {
	t.Helper()
	rec, err := tasks.LoadSend(context.Background(), store.SendKey{Agent: "test", Key: messageID}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return rec.State
}

// TestOutcomeKeptPastResponseTimeout: response_timeout ends a first send's
// own context, which outlives its caller; the send's outcome is still
// written, so that its retry is answered at once rather than after the
// claim's lease.
func TestOutcomeKeptPastResponseTimeout(t *testing.T) {
	for _, c := range callers {
		t.Run(c.d.String(), func(t *testing.T) {
			tasks := endedContextRefused{store.NewMemory(store.MemoryConfig{})}
			g := newGatewayOpts(t, scripted(func(w http.ResponseWriter, r *http.Request, id string) {
				rawReply(w, func(conn net.Conn) {
					_, _ = io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\":\"2.0\",")
					_, _ = io.Copy(io.Discard, conn) // until the gateway hangs up
				})
			}), dialect.Version03, Options{Tasks: tasks}, func(a *AgentConfig) {
				a.Backend.ResponseHeaderTimeout = 300 * time.Millisecond
				a.Backend.ResponseTimeout = 300 * time.Millisecond
			})
			params := c.send("m1", c.text("hi"), "")
			wantErrorSaying(t, sendResult(t, g, c, params), c.d, -32603, "did not finish its reply within agents[].backend.response_timeout (300ms)")
			if got := sendState(t, tasks, "m1"); got != store.SendUnknown {
				t.Fatalf("the index holds the send as %q, want %q (its outcome)", got, store.SendUnknown)
			}
			wantErrorSaying(t, sendResult(t, g, c, params), c.d, -32603, "ended without an answer from the agent")
		})
	}
}

// TestOutcomeKeptPastShutdown: the gateway's shutdown ends a held first
// send, and its outcome is still written: the context of the write is
// not the send's, which the shutdown ended.
func TestOutcomeKeptPastShutdown(t *testing.T) {
	hold := make(chan struct{})
	backend := newSendCounter(backends[0].handler(t, hold))
	tasks := endedContextRefused{store.NewMemory(store.MemoryConfig{})}
	g := newGatewayOpts(t, backend, backends[0].version, Options{Tasks: tasks})
	t.Cleanup(func() { close(hold) }) // before the backend's server closes
	c := callers[0]
	ctx, shutDown := context.WithCancelCause(context.Background())
	defer shutDown(nil)
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/", strings.NewReader(rpc(c.method(dialect.SendMessage), c.send("m1", c.text("wait"), ""))))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(g.hdr(c.d)); i += 2 {
		req.Header.Set(g.hdr(c.d)[i], g.hdr(c.d)[i+1])
	}
	w := httptest.NewRecorder()
	served := make(chan struct{})
	go func() {
		defer close(served)
		g.agent.ServeRPC(w, req)
	}()
	<-backend.arrived
	shutDown(ErrShuttingDown)
	<-served
	wantErrorSaying(t, gjson.ParseBytes(w.Body.Bytes()), c.d, -32603, "did not answer before the gateway shut down")
	if got := sendState(t, tasks, "m1"); got != store.SendUnknown {
		t.Fatalf("the index holds the send as %q, want %q (its outcome)", got, store.SendUnknown)
	}
}
