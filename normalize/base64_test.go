package normalize

import (
	"strings"
	"testing"

	"github.com/a2agate/gateway/dialect"
)

// TestPartBytesMustBeBase64: a part's bytes (1.0 raw, 0.x file.bytes) are
// base64, in every direction: standard or URL-safe, padded or not, as
// protojson reads a bytes field. Anything else is refused saying where,
// rather than passed on for the caller's decoder to fail on (a 1.0 SDK
// rejects the whole answer, and over gRPC it was an internal error naming
// protojson).
func TestPartBytesMustBeBase64(t *testing.T) {
	task := func(d dialect.ID, b string) string {
		if d == dialect.V10 {
			return `{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING"},"artifacts":[{"artifactId":"a","parts":[{"raw":"` + b + `"}]}]}`
		}
		return `{"kind":"task","id":"t1","contextId":"c1","status":{"state":"working"},"artifacts":[{"artifactId":"a","parts":[{"kind":"file","file":{"bytes":"` + b + `"}}]}]}`
	}
	valid := []string{`aGk=`, `aGk`, `AA==`, `AA`, `+/8=`, `+\/8=`, `-_8=`, `-_8`, `aGVsbG8=`, `AAEC`}
	invalid := []string{`!!!`, `not base64!`, `a`, `AAAAA`, `AA=A`, `A===`, `AA==AA==`, `+_8=`, `aGk=\u0000`}
	for _, from := range []dialect.ID{dialect.V03, dialect.V10} {
		for _, to := range []dialect.ID{dialect.V03, dialect.V10} {
			for _, b := range valid {
				if _, err := Result(dialect.GetTask, from, to, []byte(task(from, b))); err != nil {
					t.Errorf("%s to %s: %s refused: %v", from, to, b, err)
				}
			}
			for _, b := range invalid {
				_, err := Result(dialect.GetTask, from, to, []byte(task(from, b)))
				if err == nil || !strings.Contains(err.Error(), "not base64") {
					t.Errorf("%s to %s: %s: %v, want it refused as not base64", from, to, b, err)
				}
			}
		}
	}
}
