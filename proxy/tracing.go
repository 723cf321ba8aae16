package proxy

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/normalize"
	"github.com/a2agate/gateway/store"
	"github.com/a2agate/gateway/telemetry"
)

// The spans of a call (see telemetry for the provider and the attribute
// keys): the server span "a2a OP" for the whole call, a client span
// "a2a METHOD" for each backend request, and an internal span for each
// task-index operation. The push relay's spans (a server span per post of
// the backend, a client span per delivery attempt) are in tracing_push.go.
// Spans under the server span are started only while it records, so a call
// traced at ratio 0, or with export off, costs no span but its own.
//
// A traced call pays for its spans on the hot path, so the span names are
// constants made once, a call's attributes are written into one pooled
// buffer that the SDK copies from, and the ids read from the request are
// copied once for all the spans that carry them.

// noSpan stands for a span not started; a span value held in an interface
// once, so that handing it out allocates nothing.
var noSpan trace.Span = noop.Span{}

// startTrace starts the call's server span, continuing the caller's trace
// context, and returns r with both in its context, where the access log
// and the backend requests find them. With export off it still reads the
// caller's trace context, for the access log; the backend gets the caller's
// headers unchanged. Without tracing it returns r.
func (a *Agent) startTrace(r *http.Request, c *call) *http.Request {
	if a.tracing == nil {
		return r
	}
	if !a.tracing.Enabled() {
		if len(r.Header["Traceparent"]) == 0 {
			return r // nothing to continue; baggage alone names no trace
		}
		return r.WithContext(telemetry.Extract(r.Context(), r.Header))
	}
	// Named by operation once the request is read (endTrace).
	ctx := r.Context()
	if len(r.Header["Traceparent"]) > 0 || len(r.Header["Baggage"]) > 0 {
		ctx = telemetry.Extract(ctx, r.Header)
	}
	ctx, span := a.tracing.StartServer(ctx, serverSpanUnread)
	c.span = span
	if span.IsRecording() {
		c.attrs = attrBufs.Get().(*attrBuffer)
	}
	return r.WithContext(ctx)
}

// serverSpanUnread names a server span until its request is read.
var serverSpanUnread = telemetry.SpanName("call")

// attrBuffer is a traced call's buffer for the attributes of its spans, as
// many as the server span has. The SDK copies what it is given, so one
// buffer serves all the call's spans, one after the other.
type attrBuffer [11]attribute.KeyValue

var attrBufs = sync.Pool{New: func() any { return new(attrBuffer) }}

// attrBuf is the call's attribute buffer, emptied; nil, which append
// allocates for, when the call's own span does not record.
func (c *call) attrBuf() []attribute.KeyValue {
	if c.attrs == nil {
		return nil
	}
	return c.attrs[:0]
}

// releaseAttrs gives the call's attribute buffer back, cleared so that the
// pool keeps no call's strings alive.
func (c *call) releaseAttrs() {
	if c.attrs != nil {
		*c.attrs = attrBuffer{}
		attrBufs.Put(c.attrs)
		c.attrs = nil
	}
}

// endTrace names the server span, sets what the call did on it and ends it.
func (a *Agent) endTrace(ctx context.Context, c *call) {
	span := c.span
	if span == nil {
		return
	}
	defer span.End()
	if !span.IsRecording() {
		return
	}
	defer c.releaseAttrs()
	// By its canonical (1.0) name; a request that could not be read keeps
	// the name it started with.
	if name, ok := serverSpanNames[c.env.Op]; ok {
		span.SetName(name)
	}
	outcome := c.outcome
	if outcome == "" {
		outcome = outcomeOK
	}
	attrs := append(c.attrBuf(),
		telemetry.AttrMethod.String(c.method()),
		telemetry.AttrCallerDialect.String(c.env.Dialect.String()),
		telemetry.AttrBackendDialect.String(c.backend.dialect.String()),
		telemetry.AttrBinding.String(c.binding.String()),
		telemetry.AttrAgent.String(a.cfg.Name),
		telemetry.AttrOutcome.String(outcome),
	)
	if c.backendMethod != "" {
		attrs = append(attrs, telemetry.AttrBackendMethod.String(c.backendMethod))
	}
	if c.code != 0 {
		attrs = append(attrs, telemetry.AttrJSONRPCCode.Int(c.code))
	}
	if id := c.spanTaskID(); id != "" {
		attrs = append(attrs, telemetry.AttrTaskID.String(id))
	}
	if id := c.spanContextID(); id != "" {
		attrs = append(attrs, telemetry.AttrContextID.String(id))
	}
	if c.env.Op.Streaming() {
		attrs = append(attrs, telemetry.AttrStreamEvents.Int(c.streamEvents.Count()))
	}
	span.SetAttributes(attrs...)
	// The caller's mistakes (invalid params, no token, another caller's
	// task) are answered, not failures of the call: as for an RPC server,
	// the span fails only when the gateway, the index or the agent did.
	switch outcome {
	case outcomeBackendFailure, outcomeGatewayError, outcomeAgentError:
		telemetry.Fail(span, failure(c))
	}
}

// What the call read from the request and the replies are views into
// buffers the next call reuses, while its spans are exported later: they
// get copies, or the gateway's own strings where those say the same.

// method is the method as the caller sent it: the dialect's own spelling
// of the operation, or a copy of what the caller sent.
func (c *call) method() string {
	if m, ok := dialect.MethodName(c.env.Dialect, c.env.Op); ok && m == c.env.Method {
		return m
	}
	return strings.Clone(c.env.Method)
}

// spanTaskID is the task the call names, copied once for all its spans, or
// else the task the call made.
func (c *call) spanTaskID() string {
	switch {
	case c.info.TaskID == "":
		return c.taskID
	case c.info.TaskID == c.taskID:
		return c.taskID // the index's copy
	case c.info.TaskID != c.taskIDCopy:
		c.taskIDCopy = strings.Clone(c.info.TaskID)
	}
	return c.taskIDCopy
}

// spanContextID is the context the call names, or else the context of the
// task it made.
func (c *call) spanContextID() string {
	if c.info.ContextID == "" || c.info.ContextID == c.contextID {
		return c.contextID
	}
	return strings.Clone(c.info.ContextID)
}

// failure is the error a failed call answered, its message copied (an
// agent's is a view into its reply).
func failure(c *call) error {
	if c.failure == nil {
		return errors.New(c.outcome)
	}
	return errors.New(strings.Clone(c.failure.Error()))
}

// serverSpanNames name the server spans by operation, canonically (1.0).
var serverSpanNames = func() map[dialect.Op]string {
	names := map[dialect.Op]string{}
	for op := dialect.OpUnknown + 1; op.String() != dialect.OpUnknown.String(); op++ {
		if m, ok := dialect.MethodName(dialect.V10, op); ok {
			names[op] = telemetry.SpanName(m)
		}
	}
	return names
}()

// streamEvent records one event of the backend's stream on the server span.
func (c *call) streamEvent(info normalize.EventInfo) {
	if c.span == nil || !c.span.IsRecording() {
		return
	}
	if !c.streamEvents.Started() {
		c.streamEvents.Start(c.span)
	}
	if info.State == "" || c.streamEvents.Count() >= telemetry.MaxStreamEvents {
		c.streamEvents.Add(info.Kind.String(), nil) // past the bound: counted only
		return
	}
	attrs, ok := stateAttrs[info.State]
	if !ok {
		attrs = telemetry.NewEventAttrs(attrTaskState.String(strings.Clone(info.State)))
	}
	c.streamEvents.Add(info.Kind.String(), attrs)
}

const attrTaskState = attribute.Key("a2a.task.state")

// stateAttrs are the a2a.task.state attributes of the known states, made
// once rather than per event.
var stateAttrs = func() map[string]telemetry.EventAttrs {
	m := map[string]telemetry.EventAttrs{}
	for _, p := range dialect.TaskStates {
		m[p.V10] = telemetry.NewEventAttrs(attrTaskState.String(p.V10))
	}
	return m
}()

// recording reports whether ctx's span records, so that spans under it are
// worth starting. With export off the gateway records none, and it does
// not look for one: a lookup walks the whole chain of the call's context,
// several times per call.
func (a *Agent) recording(ctx context.Context) bool {
	return a.tracing.Enabled() && trace.SpanFromContext(ctx).IsRecording()
}

// startBackendCall starts the client span of one backend request. post
// injects it into the request's headers.
func (a *Agent) startBackendCall(ctx context.Context, c *call, method string) (context.Context, trace.Span) {
	if !a.recording(ctx) {
		return ctx, noSpan
	}
	c.backendMethod = method
	name, ok := clientSpanNames[method]
	if !ok {
		name = telemetry.SpanName(method)
	}
	attrs := append(c.attrBuf(),
		telemetry.AttrBackendMethod.String(method),
		telemetry.AttrBackendDialect.String(c.backend.dialect.String()),
		attrBackend.String(c.backend.name),
	)
	return a.tracing.StartClient(ctx, name, attrs...)
}

const attrBackend = attribute.Key("a2a.backend")

// clientSpanNames name the client spans by the backend's method, in
// either dialect.
var clientSpanNames = func() map[string]string {
	names := map[string]string{}
	for op := dialect.OpUnknown + 1; op.String() != dialect.OpUnknown.String(); op++ {
		for _, d := range []dialect.ID{dialect.V03, dialect.V10} {
			if m, ok := dialect.MethodName(d, op); ok {
				names[m] = telemetry.SpanName(m)
			}
		}
	}
	return names
}()

// endBackendCall ends a unary backend request's span: failed when the
// request failed (e) or the backend answered a JSON-RPC error (errObj).
func endBackendCall(span trace.Span, c *call, e *normalize.Error, errObj []byte) {
	if !span.IsRecording() {
		return
	}
	defer span.End()
	switch {
	case e != nil && errors.Is(e, errCallerGone):
		// Ended by its caller's leaving: no failure of the backend's.
	case e != nil:
		telemetry.Fail(span, errors.New(strings.Clone(e.Error())))
	case errObj != nil:
		d := c.backend.dialect
		ae, err := normalize.ParseAgentError(d, d, errObj)
		if err != nil {
			telemetry.Fail(span, errors.New(strings.Clone(err.Error())))
			return
		}
		span.SetAttributes(telemetry.AttrJSONRPCCode.Int(ae.Code))
		telemetry.Fail(span, fmt.Errorf("the backend answered JSON-RPC error %d: %s", ae.Code, ae.Message))
	}
}

// endBackendStream ends a streaming backend request's span, failed when the
// stream ended in the backend's failure or error.
func endBackendStream(span trace.Span, c *call) {
	if !span.IsRecording() {
		return
	}
	defer span.End()
	if c.outcome == outcomeBackendFailure || c.outcome == outcomeAgentError {
		if c.code != 0 {
			span.SetAttributes(telemetry.AttrJSONRPCCode.Int(c.code))
		}
		telemetry.Fail(span, failure(c))
	}
}

// injectTrace gives a backend request the gateway's span as its parent in
// place of the caller's. Only a span the gateway started is injected: with
// export off (b.traced false, and the request's context is not searched)
// the caller's traceparent and tracestate, copied with its other headers,
// reach the backend unchanged.
func injectTrace(req *http.Request) {
	ctx := req.Context()
	if sc := trace.SpanContextFromContext(ctx); !sc.IsValid() || sc.IsRemote() {
		return
	}
	delete(req.Header, "Traceparent")
	delete(req.Header, "Tracestate")
	telemetry.Inject(ctx, req.Header)
}

// The spans of the task-index operations, named once.
const (
	indexAdmit = "task-index Admit"
	indexGet   = "task-index Get"
	indexKnown = "task-index Known"
	indexPut   = "task-index Put"
	indexList  = "task-index List"
)

// startIndexSpan starts the span (named by one of the constants above) of
// one task-index operation under the call's span; taskID, when not "", is
// a string the span may keep (spanTaskID, or the index's copy).
func (a *Agent) startIndexSpan(ctx context.Context, c *call, name, taskID string) (context.Context, trace.Span) {
	if !a.recording(ctx) {
		return ctx, noSpan
	}
	if taskID == "" {
		return a.tracing.StartInternal(ctx, name)
	}
	attrs := append(c.attrBuf(), telemetry.AttrTaskID.String(taskID))
	return a.tracing.StartInternal(ctx, name, attrs...)
}

// endIndexSpan ends a task-index span, failed on an error other than the
// index's answer that it holds no such task.
func endIndexSpan(span trace.Span, err error) {
	if !span.IsRecording() {
		return
	}
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		telemetry.Fail(span, err)
	}
	span.End()
}
