package normalize

import (
	"testing"

	"github.com/a2agate/gateway/dialect"
)

// An a2a-go v2 server answers a push config delete with no result member:
// it reaches a 0.x caller as null and a 1.0 caller as the Empty message.
func TestDeleteReplyWithoutResult(t *testing.T) {
	reply, err := ParseReply([]byte(`{"jsonrpc":"2.0","id":1}`))
	if err != nil || reply.Error != nil {
		t.Fatalf("ParseReply = %+v, %v", reply, err)
	}
	for to, want := range map[dialect.ID]string{dialect.V03: "null", dialect.V10: "{}"} {
		got, err := Result(dialect.DeletePushConfig, dialect.V10, to, reply.Result)
		if err != nil || string(got) != want {
			t.Errorf("to %s: %s, %v; want %s", to, got, err, want)
		}
	}
}
