package agent10

import (
	"testing"

	"github.com/a2agate/gateway/internal/agentcore"
	"github.com/a2agate/gateway/internal/agenttest"
)

func TestRawBytesAreReencodedAsStandardBase64(t *testing.T) {
	t.Parallel()
	_, srv := startAgent(t, Options{})
	// URL-safe and unpadded, both of which ProtoJSON parsers accept.
	res := client.Call(t, srv, "SendMessage", obj{"message": userMessage("bytes", obj{"raw": "-_8"})}).(obj)
	if got := agenttest.Str(t, res, "task", "artifacts", 0, "parts", 1, "raw"); got != "+/8=" {
		t.Fatalf("raw = %q, want +/8=", got)
	}
	e := client.CallErr(t, srv, "SendMessage", obj{"message": userMessage("bytes", obj{"raw": "not base64!"})})
	wantCode(t, e, agentcore.CodeInvalidParams)
}
