package sse

import (
	"strings"
	"testing"
)

// TestReaderLetsLargeBuffersGo: once a large event has been handed out, a
// stream that goes quiet holds no more than keptBufferBytes per buffer.
func TestReaderLetsLargeBuffersGo(t *testing.T) {
	large := strings.Repeat("x", 4*keptBufferBytes)
	stream := "id: " + large + "\nretry: 1\nevent: " + large + "\n: " + large + "\ndata: " + large + "\n\n" +
		": " + large + "\n\n" +
		"data: small\n\n"
	r := NewReader(strings.NewReader(stream), 1<<20)
	for i, want := range []int{len(large), 0, len("small")} {
		ev, err := r.Next()
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if len(ev.Data) != want {
			t.Fatalf("event %d: %d data bytes, want %d", i, len(ev.Data), want)
		}
		if i == 0 && (ev.ID != large || ev.Type != large || len(ev.Comment) != len(large)) {
			t.Fatalf("event 0: id %d, type %d, comment %d bytes", len(ev.ID), len(ev.Type), len(ev.Comment))
		}
	}
	for name, b := range map[string][]byte{"data": r.data, "comment": r.comment, "line": r.line, "id": r.id, "event": r.typ, "retry": r.retry} {
		if cap(b) > keptBufferBytes {
			t.Errorf("the %s buffer keeps %d bytes after the large event, want at most %d", name, cap(b), keptBufferBytes)
		}
	}
	if r.data == nil || r.comment == nil {
		t.Error("the data and comment buffers must stay non-nil: nil means none in an Event")
	}
}
