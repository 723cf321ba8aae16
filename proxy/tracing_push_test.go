package proxy

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/telemetry"
)

// The trace context of the backend's post to the relay in the push tests.
const (
	agentTraceID = "0af7651916cd43dd8448eb211c80319c"
	agentSpanID  = "b7ad6b7169203331"
	agentParent  = "00-" + agentTraceID + "-" + agentSpanID + "-01"
)

// pushTraced sets a caller's webhook for a task through g and returns the
// relay's path and token, the header the backend's token goes in, and a
// working-state delivery body.
func pushTraced(t *testing.T, g *testGateway, rcv *receiver) (path, token, header, body string) {
	t.Helper()
	c := caller{dialect.V10}
	task := c.task(t, mustResult(t, g.call("1", "SendMessage", c.send("m1", c.text("input please"), ""))))
	id := task.Get("id").Str
	set, _ := callerPush(c, id, rcv.url)
	mustResult(t, g.call("2", "CreateTaskPushNotificationConfig", set))
	path, token = backendRelay(t, g, dialect.Version025, id)
	header, bodies := backendDeliveries(dialect.Version025, id, task.Get("contextId").Str)
	return path, token, header, bodies[0]
}

// postTraced posts a delivery to the relay with the agent's trace headers.
func postTraced(t *testing.T, g *testGateway, path, header, token, body string, trace ...string) {
	t.Helper()
	if res, b := g.request(t, http.MethodPost, path, body, append([]string{"Content-Type", "application/json", header, token}, trace...)...); res.StatusCode != http.StatusOK {
		t.Fatalf("the relay answered %d: %s", res.StatusCode, b)
	}
}

// With export on, the backend's post is a server span in the agent's
// trace, each attempt to deliver it a client span under it with the
// attempt's number, status and outcome, failed when the attempt failed;
// the caller's receiver gets the traceparent of the attempt that reached
// it, and the agent's tracestate and baggage.
func TestTracePushDeliveryAttempts(t *testing.T) {
	sink, tr := newSpanSink(t)
	g := newGatewayOpts(t, backends[0].handler(t, nil), backends[0].version, Options{Tracing: tr}, allowLoopback, func(a *AgentConfig) {
		a.Push.BackoffBase, a.Push.BackoffMax = time.Millisecond, 5*time.Millisecond
	})
	rcv := newReceiver(t, 1) // the first attempt is answered 503
	path, token, header, body := pushTraced(t, g, rcv)
	postTraced(t, g, path, header, token, body, "traceparent", agentParent, "tracestate", callerState, "baggage", callerBaggage)
	got := rcv.next(t)
	g.agent.push.waitIdle(t)

	var receive sdktrace.ReadOnlySpan
	for receive == nil {
		select {
		case sp := <-sink.served:
			if sp.Name() == pushReceiveSpan {
				receive = sp
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no push receive span ended within 10s")
		}
	}
	taskID := got.body.Get("task.id").Str
	wantSpan(t, receive, trace.SpanKindServer, pushReceiveSpan, map[string]string{
		"a2a.agent": "test", "a2a.task_id": taskID, "a2a.outcome": "accepted",
	}, codes.Unset)
	if receive.SpanContext().TraceID().String() != agentTraceID || receive.Parent().SpanID().String() != agentSpanID || !receive.Parent().IsRemote() {
		t.Errorf("push receive span in trace %s under %s, want the agent's %s under %s",
			receive.SpanContext().TraceID(), receive.Parent().SpanID(), agentTraceID, agentSpanID)
	}
	var attempts []sdktrace.ReadOnlySpan
	for _, sp := range sink.Ended() {
		if sp.Name() == pushDeliverySpan {
			attempts = append(attempts, sp)
		}
	}
	if len(attempts) != 2 {
		t.Fatalf("%d delivery attempt spans, want 2 (a 503, then the delivery)", len(attempts))
	}
	common := map[string]string{"a2a.agent": "test", "a2a.task_id": taskID, "a2a.caller_dialect": "1.0", "a2a.push.config_id": "cfg1"}
	with := func(m map[string]string) map[string]string {
		for k, v := range common {
			m[k] = v
		}
		return m
	}
	wantSpan(t, attempts[0], trace.SpanKindClient, pushDeliverySpan, with(map[string]string{
		"a2a.push.attempt": "1", "http.response.status_code": "503", "a2a.outcome": "retried",
	}), codes.Error)
	wantSpan(t, attempts[1], trace.SpanKindClient, pushDeliverySpan, with(map[string]string{
		"a2a.push.attempt": "2", "http.response.status_code": "200", "a2a.outcome": "delivered",
	}), codes.Unset)
	for _, sp := range attempts {
		if sp.Parent().SpanID() != receive.SpanContext().SpanID() || sp.SpanContext().TraceID() != receive.SpanContext().TraceID() {
			t.Errorf("attempt %v under %v, want under the push receive span %v", sp.SpanContext(), sp.Parent(), receive.SpanContext())
		}
		if u := spanAttrs(sp)["url.full"]; strings.Contains(u, "secret") || !strings.HasPrefix(u, "http://127.0.0.1:") {
			t.Errorf("url.full %q: want the webhook without its query", u)
		}
	}
	want := "00-" + agentTraceID + "-" + attempts[1].SpanContext().SpanID().String() + "-01"
	if got.header.Get("Traceparent") != want || got.header.Get("Tracestate") != callerState || got.header.Get("Baggage") != callerBaggage {
		t.Errorf("the caller's receiver got traceparent %q tracestate %q baggage %q, want %q (the attempt's span), %q, %q",
			got.header.Get("Traceparent"), got.header.Get("Tracestate"), got.header.Get("Baggage"), want, callerState, callerBaggage)
	}
}

// With export off (or no tracing at all) the caller's receiver gets the
// trace context of the backend's post exactly, on every attempt; with none
// sent, none. With export on and none sent, a new trace.
func TestTracePushContextPassedOn(t *testing.T) {
	disabled := exportOff(t)
	_, enabled := newSpanSink(t)
	for name, tr := range map[string]*telemetry.Tracing{"nil": nil, "export off": disabled, "export on": enabled} {
		t.Run(name, func(t *testing.T) {
			g := newGatewayOpts(t, backends[0].handler(t, nil), backends[0].version, Options{Tracing: tr}, allowLoopback, func(a *AgentConfig) {
				a.Push.BackoffBase, a.Push.BackoffMax = time.Millisecond, 5*time.Millisecond
			})
			rcv := newReceiver(t, 1) // the traced delivery's first attempt is answered 503
			path, token, header, body := pushTraced(t, g, rcv)

			postTraced(t, g, path, header, token, body, "traceparent", agentParent, "tracestate", callerState, "baggage", callerBaggage)
			h := rcv.next(t).header
			if h.Get("Tracestate") != callerState || h.Get("Baggage") != callerBaggage {
				t.Errorf("tracestate %q baggage %q, want the agent's", h.Get("Tracestate"), h.Get("Baggage"))
			}
			p := h.Get("Traceparent")
			if tr.Enabled() {
				if !strings.HasPrefix(p, "00-"+agentTraceID+"-") || strings.Contains(p, agentSpanID) {
					t.Errorf("export on: traceparent %q, want the agent's trace under a gateway span", p)
				}
			} else if p != agentParent {
				t.Errorf("export off: traceparent %q, want exactly the agent's %q", p, agentParent)
			}

			postTraced(t, g, path, header, token, body)
			h = rcv.next(t).header
			if tr.Enabled() {
				if p := h.Get("Traceparent"); len(p) != len(agentParent) || strings.Contains(p, agentTraceID) {
					t.Errorf("export on, no trace context from the agent: the receiver got traceparent %q, want a new trace", p)
				}
			} else if v := h.Values("Traceparent"); len(v) != 0 {
				t.Errorf("no trace context from the agent: the receiver got traceparent %q", v)
			}
		})
	}
}
