package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Attribute keys of the gateway's spans. Task and context ids are span
// attributes only, never metric labels: there is one per task.
const (
	AttrMethod         = attribute.Key("a2a.method")         // as the caller sent it
	AttrBackendMethod  = attribute.Key("a2a.backend.method") // as the backend got it
	AttrCallerDialect  = attribute.Key("a2a.caller_dialect")
	AttrBackendDialect = attribute.Key("a2a.backend_dialect")
	AttrBinding        = attribute.Key("a2a.binding")
	AttrAgent          = attribute.Key("a2a.agent")
	AttrOutcome        = attribute.Key("a2a.outcome")
	AttrJSONRPCCode    = attribute.Key("rpc.jsonrpc.error_code")
	AttrTaskID         = attribute.Key("a2a.task_id")
	AttrContextID      = attribute.Key("a2a.context_id")
	AttrStreamEvents   = attribute.Key("a2a.stream.events")
)

// MaxStreamEvents bounds the span events one stream records; the count of
// all its events is an attribute.
const MaxStreamEvents = 32

// SpanName is the name of a call's span: "a2a " and the operation or
// method, e.g. "a2a SendMessage". Callers on the hot path name their spans
// with constants made from it once, since each concatenation allocates.
func SpanName(opOrMethod string) string { return "a2a " + opOrMethod }

// The span kinds as start options, made once: each trace.WithSpanKind
// allocates, and a slice passed on as it is costs no variadic array.
var (
	serverKind   = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer)}
	clientKind   = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient)}
	internalKind = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal)}
)

func (t *Tracing) tracerOrNoop() trace.Tracer {
	if t == nil {
		return noop.NewTracerProvider().Tracer(instrumentName)
	}
	return t.tracer
}

// start starts a span of kind and gives it attrs. They are set on the
// started span rather than through trace.WithAttributes, which boxes them
// in an option and copies them twice before the span copies them again;
// the gateway's sampler (parent-based, by trace id) does not read them.
// The SDK copies attrs, so a caller may pass a buffer it reuses.
func (t *Tracing) start(ctx context.Context, name string, kind []trace.SpanStartOption, attrs []attribute.KeyValue) (context.Context, trace.Span) {
	ctx, span := t.tracerOrNoop().Start(ctx, name, kind...)
	if len(attrs) > 0 {
		span.SetAttributes(attrs...)
	}
	return ctx, span
}

// StartServer starts the span of a call the gateway serves, named name
// (SpanName of the operation, e.g. "a2a SendMessage"), as a child of the
// trace context Extract put in ctx, or of a new trace.
func (t *Tracing) StartServer(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	return t.start(ctx, name, serverKind, attrs)
}

// StartClient starts the span of a call the gateway makes, named name: to
// the backend (SpanName of the translated method), or a push delivery.
func (t *Tracing) StartClient(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	return t.start(ctx, name, clientKind, attrs)
}

// StartInternal starts the span of work inside the gateway, such as a
// task-index operation.
func (t *Tracing) StartInternal(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	return t.start(ctx, name, internalKind, attrs)
}

// Fail marks span failed with err: its status is Error with err's message,
// and err is recorded as an exception event.
func Fail(span trace.Span, err error) {
	span.RecordError(err)
	span.SetStatus(codes.Error, err.Error())
}

// EventAttrs are attributes of stream events made into an event option
// once, for attributes many events share (such as a task state): each
// trace.WithAttributes allocates.
type EventAttrs []trace.EventOption

// NewEventAttrs makes attrs an event option.
func NewEventAttrs(attrs ...attribute.KeyValue) EventAttrs {
	return EventAttrs{trace.WithAttributes(attrs...)}
}

// StreamEvents records a stream's events on its span: the first
// MaxStreamEvents as span events, and the count of all of them as
// a2a.stream.events when the stream ends. One goroutine uses it. It is
// held by value (in the call), so that a stream costs no allocation for
// it; its zero value records nothing until Start.
type StreamEvents struct {
	span trace.Span
	n    int
}

// Start records events on span from now on, none counted yet.
func (s *StreamEvents) Start(span trace.Span) { *s = StreamEvents{span: span} }

// Started reports whether Start gave s a span.
func (s *StreamEvents) Started() bool { return s.span != nil }

// Add records one event, named e.g. by its kind ("status-update"), with
// attrs (nil for none).
func (s *StreamEvents) Add(name string, attrs EventAttrs) {
	s.n++
	if s.n <= MaxStreamEvents {
		s.span.AddEvent(name, attrs...)
	}
}

// End sets the event count on the span; call it before the span ends.
func (s *StreamEvents) End() { s.span.SetAttributes(AttrStreamEvents.Int(s.n)) }

// Count is the number of events Add was given, recorded or not.
func (s *StreamEvents) Count() int { return s.n }
