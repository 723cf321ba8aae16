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
	return propagator.Extract(ctx, headerCarrier(h))
}

// Inject writes ctx's trace context and baggage into an outgoing request's
// headers: the current span's, or with export off the caller's.
func Inject(ctx context.Context, h http.Header) {
	propagator.Inject(ctx, headerCarrier(h))
}

// headerCarrier is propagation.HeaderCarrier with the propagators' own
// keys looked up canonical: the W3C names are lower case, and
// canonicalising one that net/http does not know allocates, on every call
// for each key read or written.
type headerCarrier http.Header

var canonicalKeys = map[string]string{
	"traceparent": "Traceparent",
	"tracestate":  "Tracestate",
	"baggage":     "Baggage",
}

func canonicalKey(key string) string {
	if k, ok := canonicalKeys[key]; ok {
		return k
	}
	return http.CanonicalHeaderKey(key)
}

func (c headerCarrier) Get(key string) string {
	if v := c[canonicalKey(key)]; len(v) > 0 {
		return v[0]
	}
	return ""
}

func (c headerCarrier) Set(key, value string) { c[canonicalKey(key)] = []string{value} }

func (c headerCarrier) Keys() []string { return propagation.HeaderCarrier(c).Keys() }

func (c headerCarrier) Values(key string) []string { return c[canonicalKey(key)] }
