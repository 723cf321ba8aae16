package telemetry

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

func TestStreamEventsBounded(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	_, span := tp.Tracer("test").Start(context.Background(), "a2a SendStreamingMessage")
	var events StreamEvents
	events.Start(span)
	for range MaxStreamEvents + 8 {
		events.Add("status-update", nil)
	}
	events.End()
	span.End()
	got := rec.Ended()[0]
	if n := len(got.Events()); n != MaxStreamEvents {
		t.Errorf("%d span events, want %d", n, MaxStreamEvents)
	}
	var count int64 = -1
	for _, kv := range got.Attributes() {
		if kv.Key == AttrStreamEvents {
			count = kv.Value.AsInt64()
		}
	}
	if count != MaxStreamEvents+8 {
		t.Errorf("a2a.stream.events = %d, want %d", count, MaxStreamEvents+8)
	}
}

func TestLogHandlerAddsTraceIDs(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(LogHandler(slog.NewJSONHandler(&buf, nil))).With("agent", "echo")
	ctx := Extract(context.Background(), callerHeaders())
	tr := setup(t, Config{Enabled: true, OTLP: OTLPConfig{Endpoint: newReceiver(t, accept).URL}})
	sctx, span := tr.StartServer(ctx, "a2a SendMessage")
	defer span.End()

	line := func(ctx context.Context) map[string]any {
		buf.Reset()
		log.InfoContext(ctx, "call")
		var m map[string]any
		if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		if m["agent"] != "echo" {
			t.Errorf("the WithAttrs attribute is lost: %v", m)
		}
		return m
	}
	if m := line(sctx); m["trace_id"] != callerTraceID || m["span_id"] != span.SpanContext().SpanID().String() {
		t.Errorf("with a span: %v, want trace_id %s and the server span's span_id", m, callerTraceID)
	}
	if m := line(ctx); m["trace_id"] != callerTraceID || m["span_id"] != callerSpanID {
		t.Errorf("with the caller's context only (export off): %v", m)
	}
	if m := line(context.Background()); m["trace_id"] != nil || m["span_id"] != nil {
		t.Errorf("without a trace: %v, want no trace_id or span_id", m)
	}
	if !trace.SpanContextFromContext(sctx).IsValid() {
		t.Fatal("no span context")
	}
}
