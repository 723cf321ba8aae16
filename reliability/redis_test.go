package reliability

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/testnet"
	"github.com/a2agate/gateway/internal/testredis"
)

// indexDown is what a caller is told while the task index is unreachable.
const indexDown = "task index cannot be reached"

// readyz returns the gateway's readiness status and its reasons.
func (g *gatewayProc) readyz(t *testing.T) (int, string) {
	t.Helper()
	status, body, err := g.adminGet("/readyz")
	if err != nil {
		t.Fatalf("/readyz: %v", err)
	}
	return status, strings.TrimSpace(body)
}

// indexUnready waits up to timeout for g's /readyz to answer 503, checks
// that it names the task index, and returns its reasons.
func (g *gatewayProc) indexUnready(t *testing.T, timeout time.Duration) string {
	t.Helper()
	var body string
	eventually(t, timeout, "/readyz to say 503", func() bool {
		var status int
		status, body = g.readyz(t)
		return status == http.StatusServiceUnavailable
	})
	if !strings.Contains(body, "task index unreachable") {
		t.Errorf("/readyz does not name the task index: %s", body)
	}
	return body
}

// probe is one call of each kind to each dialect pair, and a GetTask of a
// task made before; it returns what each answered.
func probe(cl *client, taskID string) map[string]error {
	out := map[string]error{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i, tg := range targets {
		text := fmt.Sprintf("probe %d %d", time.Now().UnixNano(), i)
		// A fresh message id per new message: the gateway answers a seen one as a retry.
		_, out["send "+tg.String()] = cl.sendAndCheck(ctx, tg, "p-"+text, text)
		_, out["stream "+tg.String()] = cl.streamAndCheck(ctx, tg, "s-"+text, text)
	}
	tg := targets[0]
	r, err := cl.call(ctx, tg, "g", dialect.GetTask, `{"id":"`+taskID+`"}`)
	if err == nil {
		_, err = completedTask(tg.c, r, "before the outage")
	}
	out["get "+tg.String()] = err
	return out
}

// TestRedisRestartUnderLoad cuts the gateway off its Redis task index while
// calls run, through a relay (the real Redis is shared), and brings it
// back. While it is down every task call fails closed with -32603 in the
// caller's dialect and /readyz says 503; once it is back, service resumes
// without a gateway restart and the tasks made before are still there.
func TestRedisRestartUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("a load test: skipped with -short")
	}
	f := newFault(t, "Redis task index cut and restored under load")
	relay := testnet.NewRelay(t, testredis.Addr(t))
	be := startBackends(t)
	cfg := be.config()
	cfg.store = fmt.Sprintf("store:\n  type: redis\n  redis:\n    address: %q\n    key_prefix: %q\n    ttl: 10m\n"+
		"    dial_timeout: 500ms\n    read_timeout: 500ms\n    write_timeout: 500ms\n",
		relay.Addr, fmt.Sprintf("a2agw-reliability-%d:", time.Now().UnixNano()))
	g := startGateway(t, cfg.yaml())
	if status, body := g.readyz(t); status != http.StatusOK {
		t.Fatalf("not ready with Redis up: %d %s", status, body)
	}
	cl := newClient(t, g.url, 8)
	before, err := cl.sendAndCheck(context.Background(), targets[0], "b", "before the outage")
	if err != nil {
		t.Fatal(err)
	}
	taskID := before.Get("id").Str
	l := startLoad(t, cl, loadOptions{workers: 6, prefix: "redis", warm: 40})

	relay.Cut()
	cut := time.Now()
	body := g.indexUnready(t, 10*time.Second)
	f.saw("/readyz 503 %q", reasonOf(body))
	l.await(t, "calls failing closed", func(r *loadResult) bool { return r.failed >= 10 })
	answers := map[string]int{}
	for call, err := range probe(cl, taskID) {
		var e rpcError
		if !errors.As(err, &e) || e.code != -32603 || !strings.Contains(e.message, indexDown) {
			t.Errorf("%s while Redis is down: got %v, want -32603 %q", call, err, indexDown)
			continue
		}
		answers[e.Error()]++
	}
	for a, n := range answers {
		f.saw("while down, %d probe calls (sends, streams and a get in both dialects) got %s", n, a)
	}

	relay.Restore()
	var recovered time.Time
	eventually(t, 20*time.Second, "the calls to succeed again", func() bool {
		for _, err := range probe(cl, taskID) {
			if err != nil {
				return false
			}
		}
		recovered = time.Now()
		return true
	})
	if status, body := g.readyz(t); status != http.StatusOK {
		t.Errorf("/readyz after Redis came back: %d %s", status, body)
	}
	l.progress(t, 40)
	res := l.halt()
	f.saw("service back %s after the cut, /readyz 200, the task made before is still served", recovered.Sub(cut).Round(time.Millisecond))
	f.saw("load: %s", res.summary())

	for class, n := range res.byError {
		if !strings.Contains(class, "-32603") || !strings.Contains(class, indexDown) {
			t.Errorf("%d load calls got %s, want only successes or -32603 %q", n, class, indexDown)
		}
	}
	if res.failed > 0 && (res.firstFailure.Before(cut) || res.lastFailure.After(recovered.Add(time.Second))) {
		t.Errorf("calls failed outside the outage (%s to %s): the first answered at %s, the last sent at %s:\n%s",
			cut.Format(timeFormat), recovered.Format(timeFormat), res.firstFailure.Format(timeFormat), res.lastFailure.Format(timeFormat), res.failureList())
	}
	if res.failed == 0 || res.succeeded() == 0 {
		t.Errorf("the load did not see both the outage and the service: %s", res.summary())
	}
	if !g.running() || g.log.matching(`"msg":"listening"`) != 1 {
		t.Errorf("the gateway restarted or exited\n%s", g.log.text())
	}
}
