package telemetry

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/propagation"
)

// propagator carries W3C traceparent, tracestate and baggage. It needs no
// tracer provider: with export off, Extract then Inject passes the caller's
// trace context to the backend unchanged, so a traced caller and a traced
// agent stay one trace.
var propagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// Extract returns ctx with the trace context and baggage of a caller's
// request headers.
func Extract(ctx context.Context, h http.Header) context.Context {
	return propagator.Extract(ctx, propagation.HeaderCarrier(h))
}

// Inject writes ctx's trace context and baggage into an outgoing request's
// headers: the current span's, or with export off the caller's.
func Inject(ctx context.Context, h http.Header) {
	propagator.Inject(ctx, propagation.HeaderCarrier(h))
}
