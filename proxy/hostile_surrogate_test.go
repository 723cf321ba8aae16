package proxy

import (
	"context"
	"testing"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
)

// TestGRPCReadsTaskWithLoneSurrogate: a task whose message metadata holds
// a lone UTF-16 surrogate escape (valid JSON, which the backends keep as
// sent) is read over gRPC with U+FFFD in its place, behind either backend.
// Before, every gRPC read of it failed INTERNAL: protojson refuses the
// escape.
func TestGRPCReadsTaskWithLoneSurrogate(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backendKind) {
		tg := newGateway(t, b.handler(t, nil), b.version)
		r := tg.call("1", "SendMessage", `{"message":{"messageId":"s1","role":"ROLE_USER","parts":[{"text":"hi"}],"metadata":{"k":"v\ud800"}}}`)
		id := mustResult(t, r).Get("task.id").Str
		g := newGRPCGateway(t, tg)
		task, err := g.raw.GetTask(context.Background(), &a2apb.GetTaskRequest{Id: id})
		if err != nil {
			t.Fatal(err)
		}
		var got string
		for _, m := range task.GetHistory() {
			if m.GetMessageId() == "s1" {
				got = m.GetMetadata().GetFields()["k"].GetStringValue()
			}
		}
		if got != "v\ufffd" {
			t.Fatalf("metadata k = %q, want %q: %v", got, "v\ufffd", task)
		}
	})
}
