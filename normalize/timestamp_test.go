package normalize

import (
	"strings"
	"testing"

	"github.com/a2agate/gateway/dialect"
)

// TestTimestampFromA10PeerIsChecked: a 1.0 peer's timestamp must be RFC
// 3339 (1.0 spec §5.6.1), and a 1.0 caller is refused one that is not; a
// 0.x caller was handed it as it was ("yesterday"), where a client that
// decodes it as a date-time (a2a-go 0.3's *time.Time) rejects the whole
// answer. Now it is refused toward 0.x too, and a valid one still passes
// unchanged. A 0.x peer's own timestamps still pass to 0.x as they are
// (0.x takes any ISO 8601 form).
func TestTimestampFromA10PeerIsChecked(t *testing.T) {
	task := func(state, ts string) []byte {
		return []byte(`{"id":"t1","contextId":"c1","status":{"state":"` + state + `","timestamp":"` + ts + `"}}`)
	}
	for _, to := range []dialect.ID{dialect.V03, dialect.V10} {
		if _, err := Result(dialect.GetTask, dialect.V10, to, task("TASK_STATE_WORKING", "yesterday")); err == nil || !strings.Contains(err.Error(), "status.timestamp") {
			t.Errorf("1.0 to %s: %v, want the timestamp refused", to, err)
		}
	}
	out, err := Result(dialect.GetTask, dialect.V10, dialect.V03, task("TASK_STATE_WORKING", "2025-01-02T03:04:05.123Z"))
	if err != nil || !strings.Contains(string(out), `"timestamp":"2025-01-02T03:04:05.123Z"`) {
		t.Errorf("a valid 1.0 timestamp toward 0.x: %s, %v", out, err)
	}
	if _, err := Result(dialect.GetTask, dialect.V03, dialect.V03, []byte(`{"kind":"task","id":"t1","contextId":"c1","status":{"state":"working","timestamp":"20250102T030405Z"}}`)); err != nil {
		t.Errorf("a 0.x peer's ISO 8601 basic form toward 0.x: %v", err)
	}
}
