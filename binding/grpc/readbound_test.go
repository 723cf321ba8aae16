package grpcbind

import (
	"encoding/binary"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
)

// TestBoundedRequestGrowsWithTheMessage: a request whose prefix declares a
// message of the whole limit and whose body then ends after a few bytes
// costs what arrived, not the size declared, and is handed on as it came,
// cut short (grpc-go refuses it).
func TestBoundedRequestGrowsWithTheMessage(t *testing.T) {
	const declared = DefaultMaxMessageBytes
	prefix := make([]byte, 5)
	binary.BigEndian.PutUint32(prefix[1:], declared)
	b := &boundedRequest{body: io.NopCloser(io.MultiReader(strings.NewReader(string(prefix)), strings.NewReader("abc"))),
		rc: http.NewResponseController(httptest.NewRecorder()), lr: &lateRequest{}, limit: declared}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got, err := io.ReadAll(b)
	runtime.ReadMemStats(&after)
	if string(got) != string(prefix)+"abc" || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("read %q, %v; want the prefix and abc, then an unexpected EOF", got, err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > declared/4 {
		t.Errorf("reading 8 bytes of a message declared %d bytes long allocated %d bytes", declared, grew)
	}
}
