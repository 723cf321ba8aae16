package proxy

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/dialect"
)

// TestBlockingRetryOfATaskThatRunsOn: a blocking retry of a non-blocking
// send whose task never finishes waits for it no longer than a blocking
// send waits for its backend (response_timeout), and then says what to do:
// its polls of the task are no wait without end.
func TestBlockingRetryOfATaskThatRunsOn(t *testing.T) {
	g := newGateway(t, backends[1].handler(t, nil), backends[1].version, func(a *AgentConfig) {
		a.Backend.ResponseHeaderTimeout, a.Backend.ResponseTimeout = 300*time.Millisecond, 300*time.Millisecond
	})
	c := callers[1]
	first := sendResult(t, g, c, c.send("m1", c.text("wait"), c.nonBlocking()), HeaderIdempotencyKey, "k1")
	if state := c.task(t, mustResult(t, first)).Get("status.state").Str; state == "TASK_STATE_COMPLETED" {
		t.Fatalf("the first send: %s", first.Raw)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // against a hang
	defer cancel()
	res, body, err := g.postCtx(ctx, rpc(c.method(dialect.SendMessage), c.send("m2", c.text("wait"), "")), append(g.hdr(c.d), HeaderIdempotencyKey, "k1")...)
	if err != nil {
		t.Fatalf("the blocking retry was not answered: %v", err)
	}
	if e := gjson.ParseBytes(body).Get("error"); res.StatusCode != 200 || !strings.Contains(e.Get("message").Str, "before the task of the first send finished") {
		t.Fatalf("the blocking retry: HTTP %d %s", res.StatusCode, body)
	}
}
