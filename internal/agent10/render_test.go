package agent10

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/a2agate/gateway/internal/agentcore"
	"github.com/a2agate/gateway/internal/agenttest"
)

func TestFormatTimestamp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   time.Time
		want string
	}{
		{time.Date(2025, 7, 31, 12, 0, 0, 123456789, time.UTC), "2025-07-31T12:00:00.123Z"},
		{time.Date(2025, 7, 31, 12, 0, 0, 0, time.UTC), "2025-07-31T12:00:00.000Z"},
		{time.Date(2025, 7, 31, 14, 0, 0, 5e6, time.FixedZone("CEST", 2*3600)), "2025-07-31T12:00:00.005Z"},
	}
	for _, tt := range tests {
		if got := formatTimestamp(tt.in); got != tt.want {
			t.Errorf("formatTimestamp(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestProtoBytes(t *testing.T) {
	t.Parallel()
	for _, in := range []string{`"+/8="`, `"+/8"`, `"-_8="`, `"-_8"`} {
		var b protoBytes
		if err := json.Unmarshal([]byte(in), &b); err != nil || string(b) != "\xfb\xff" {
			t.Errorf("decoding %s = %x, %v", in, []byte(b), err)
		}
		if out, _ := json.Marshal(b); string(out) != `"+/8="` {
			t.Errorf("encoding %s = %s, want \"+/8=\"", in, out)
		}
	}
	for _, in := range []string{`"@@"`, `5`, `"+_8"`} {
		var b protoBytes
		if err := json.Unmarshal([]byte(in), &b); err == nil {
			t.Errorf("decoding %s: no error", in)
		}
	}
}

// TestRawBytesAreReencodedAsStandardBase64 is TestProtoBytes on the wire.
func TestRawBytesAreReencodedAsStandardBase64(t *testing.T) {
	srv := parallelAgent(t)
	// URL-safe and unpadded, both of which ProtoJSON parsers accept.
	res := client.Call(t, srv, "SendMessage", obj{"message": userMessage("bytes", obj{"raw": "-_8"})}).(obj)
	if got := agenttest.Str(t, res, "task", "artifacts", 0, "parts", 1, "raw"); got != "+/8=" {
		t.Fatalf("raw = %q, want +/8=", got)
	}
	e := client.CallErr(t, srv, "SendMessage", obj{"message": userMessage("bytes", obj{"raw": "not base64!"})})
	wantCode(t, e, agentcore.CodeInvalidParams)
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }
