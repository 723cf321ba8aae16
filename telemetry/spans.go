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

func (t *Tracing) tracerOrNoop() trace.Tracer {
	if t == nil {
		return noop.NewTracerProvider().Tracer(instrumentName)
	}
	return t.tracer
}

// StartServer starts the span of a call the gateway serves, named
// "a2a OPERATION" (e.g. "a2a SendMessage"), as a child of the trace context
// Extract put in ctx, or of a new trace.
func (t *Tracing) StartServer(ctx context.Context, op string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	return t.tracerOrNoop().Start(ctx, "a2a "+op, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
}

// StartClient starts the span of a call the gateway makes: to the backend
// (method is the translated method), or a push delivery.
func (t *Tracing) StartClient(ctx context.Context, method string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	return t.tracerOrNoop().Start(ctx, "a2a "+method, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
}

// StartInternal starts the span of work inside the gateway, such as a
// task-index operation.
func (t *Tracing) StartInternal(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	return t.tracerOrNoop().Start(ctx, name, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
}

// Fail marks span failed with err: its status is Error with err's message,
// and err is recorded as an exception event.
func Fail(span trace.Span, err error) {
	span.RecordError(err)
	span.SetStatus(codes.Error, err.Error())
}

// StreamEvents records a stream's events on its span: the first
// MaxStreamEvents as span events, and the count of all of them as
// a2a.stream.events when the stream ends. One goroutine uses it.
type StreamEvents struct {
	span trace.Span
	n    int
}

// NewStreamEvents records events on span.
func NewStreamEvents(span trace.Span) *StreamEvents { return &StreamEvents{span: span} }

// Add records one event, named e.g. by its kind ("status-update").
func (s *StreamEvents) Add(name string, attrs ...attribute.KeyValue) {
	s.n++
	switch {
	case s.n > MaxStreamEvents:
	case len(attrs) == 0:
		s.span.AddEvent(name)
	default:
		s.span.AddEvent(name, trace.WithAttributes(attrs...))
	}
}

// End sets the event count on the span; call it before the span ends.
func (s *StreamEvents) End() { s.span.SetAttributes(AttrStreamEvents.Int(s.n)) }

// Count is the number of events Add was given, recorded or not.
func (s *StreamEvents) Count() int { return s.n }
