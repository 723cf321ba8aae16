package normalize

import (
	"strings"
	"testing"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/protojsontest"
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

// TestTimestampOutsideTheProtoRange: a backend's timestamp outside the
// years 1 to 9999 in UTC, the range of google.protobuf.Timestamp, is
// refused toward 1.0 as a 1.0 peer's is toward either dialect: it passed
// (year 0 as it came, 9999-12-31T23:30:00-01:00 as year 10000 in UTC),
// and a ProtoJSON client (the Python and Java 1.0 SDKs) refused the whole
// answer, or over gRPC the caller got an INTERNAL error, with nothing to
// say the backend's timestamp was at fault. The ends of the range pass.
func TestTimestampOutsideTheProtoRange(t *testing.T) {
	task := func(from dialect.ID, ts string) []byte {
		if from == dialect.V10 {
			return []byte(`{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING","timestamp":"` + ts + `"}}`)
		}
		return []byte(`{"kind":"task","id":"t1","contextId":"c1","status":{"state":"working","timestamp":"` + ts + `"}}`)
	}
	for _, from := range []dialect.ID{dialect.V03, dialect.V10} {
		for _, ts := range []string{"0000-06-01T00:00:00Z", "0001-01-01T00:30:00+01:00", "9999-12-31T23:30:00-01:00"} {
			if out, err := Result(dialect.GetTask, from, dialect.V10, task(from, ts)); err == nil || !strings.Contains(err.Error(), "status.timestamp") {
				t.Errorf("%s %s toward 1.0: %s, %v; want the timestamp refused", from, ts, out, err)
			}
		}
		for _, ts := range []string{"0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999999999Z"} {
			out, err := Result(dialect.GetTask, from, dialect.V10, task(from, ts))
			if err != nil {
				t.Errorf("%s %s toward 1.0: %v", from, ts, err)
				continue
			}
			protojsontest.Check(t, &a2apb.Task{}, out)
		}
	}
	if _, err := Result(dialect.GetTask, dialect.V10, dialect.V03, task(dialect.V10, "0000-06-01T00:00:00Z")); err == nil {
		t.Error("a 1.0 peer's timestamp of year 0 toward 0.x passed")
	}
}
