package proxy

import (
	"context"
	"errors"
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/trace"

	"github.com/a2agate/gateway/push"
	"github.com/a2agate/gateway/telemetry"
)

// The spans of the push relay. A delivery to a caller's webhook is caused
// by the backend's post to the relay, not by the call that set the config,
// which may have ended hours before: the relay continues the trace context
// of the backend's post (the task's trace when the agent is traced), in a
// server span "a2a push receive", and each attempt to post a delivery to a
// caller is a client span "a2a push delivery" under it, as the
// OpenTelemetry messaging conventions have a message's send spans under
// the span that created it. The attempts carry that span's traceparent,
// tracestate and baggage to the caller; with export off, the backend's,
// passed on, so that a traced agent and a traced caller stay one trace.
// The config-setting call is not linked: the task index keeps no trace
// context with the config.

const (
	pushReceiveSpan  = "a2a push receive"
	pushDeliverySpan = "a2a push delivery"

	attrPushAttempt  = attribute.Key("a2a.push.attempt")
	attrPushConfigID = attribute.Key("a2a.push.config_id")
	attrHTTPStatus   = attribute.Key("http.response.status_code")
	attrURL          = attribute.Key("url.full")
)

// pushRetried is the outcome of an attempt another one follows.
const pushRetried = "retried"

// startPushTrace continues the trace context of the backend's post and,
// with export on, starts its server span; the context of r then holds
// both, for the deliveries the post causes. span is nil when none started.
func (a *Agent) startPushTrace(r *http.Request) (_ *http.Request, span trace.Span) {
	if len(r.Header["Traceparent"]) == 0 && len(r.Header["Baggage"]) == 0 && !a.tracing.Enabled() {
		return r, nil
	}
	ctx := telemetry.Extract(r.Context(), r.Header)
	if a.tracing.Enabled() {
		ctx, span = a.tracing.StartServer(ctx, pushReceiveSpan, telemetry.AttrAgent.String(a.cfg.Name))
	}
	return r.WithContext(ctx), span
}

// endPushTrace ends the server span of a post with how it was received;
// it fails when the gateway could not take it (its store down).
func endPushTrace(span trace.Span, outcome string) {
	if span == nil {
		return
	}
	span.SetAttributes(telemetry.AttrOutcome.String(outcome))
	if outcome == receivedUnavailable {
		telemetry.Fail(span, errors.New("the task index could not be reached"))
	}
	span.End()
}

// pushTaskSpan names the post's task on its span, once it is read.
func pushTaskSpan(ctx context.Context, taskID string) {
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.SetAttributes(telemetry.AttrTaskID.String(taskID))
	}
}

// pushTraceContext is the trace context and baggage of ctx without the
// rest of the request's context, which ends with the post: what the
// deliveries the post caused continue.
func pushTraceContext(ctx context.Context) context.Context {
	sc := trace.SpanContextFromContext(ctx)
	bag := baggage.FromContext(ctx)
	if !sc.IsValid() && bag.Len() == 0 {
		return nil
	}
	out := context.Background()
	if bag.Len() > 0 {
		out = baggage.ContextWithBaggage(out, bag)
	}
	return trace.ContextWithSpanContext(out, sc) // remote when the backend's, local when the post's span
}

// startPushAttempt puts the trace context on one attempt's request: with
// export on, the attempt's span's, else the post's own.
func (p *pushRelay) startPushAttempt(d *push.Delivery, n int, h http.Header) func(push.Attempt, push.Outcome) {
	meta, _ := d.Meta.(pushMeta)
	ctx := meta.trace
	if ctx == nil {
		return nil
	}
	if !p.a.tracing.Enabled() {
		telemetry.Inject(ctx, h)
		return nil
	}
	// The post's span has ended by now; the attempt's is sampled as it was.
	ctx, span := p.a.tracing.StartClient(ctx, pushDeliverySpan,
		telemetry.AttrAgent.String(p.a.cfg.Name),
		telemetry.AttrTaskID.String(d.TaskID),
		attrPushConfigID.String(meta.configID),
		telemetry.AttrCallerDialect.String(meta.dialect),
		attrPushAttempt.Int(n),
		attrURL.String(shownURL(d.URL)),
	)
	telemetry.Inject(ctx, h)
	if !span.IsRecording() {
		return nil
	}
	return func(a push.Attempt, outcome push.Outcome) {
		if a.Status != 0 {
			span.SetAttributes(attrHTTPStatus.Int(a.Status))
		}
		shown := string(outcome)
		if outcome == "" {
			shown = pushRetried
		}
		span.SetAttributes(telemetry.AttrOutcome.String(shown))
		if a.Err != nil {
			telemetry.Fail(span, a.Err)
		}
		span.End()
	}
}
