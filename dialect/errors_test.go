package dialect

import (
	"regexp"
	"testing"
)

var upperSnake = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)

// TestErrorTableBijective: every error kind has exactly one row, and kind,
// code and reason each name one row: ErrorKind.Error and ErrorByCode are
// inverses, and ErrorByReason too.
func TestErrorTableBijective(t *testing.T) {
	kinds := map[ErrorKind]bool{}
	codes := map[int]ErrorKind{}
	reasons := map[string]ErrorKind{}
	for _, row := range ErrorCodes {
		if row.Kind >= errKindCount {
			t.Errorf("row %+v: kind out of range", row)
		}
		if kinds[row.Kind] {
			t.Errorf("kind %d has two rows", row.Kind)
		}
		kinds[row.Kind] = true
		if prev, dup := codes[row.Code]; dup {
			t.Errorf("code %d is both %s and %s", row.Code, prev, row.Kind)
		}
		codes[row.Code] = row.Kind
		if prev, dup := reasons[row.Reason]; dup {
			t.Errorf("reason %q is both kind %d and %d", row.Reason, prev, row.Kind)
		}
		reasons[row.Reason] = row.Kind
		if !upperSnake.MatchString(row.Reason) {
			t.Errorf("kind %d: reason %q is not an ErrorInfo reason (UPPER_SNAKE_CASE)", row.Kind, row.Reason)
		}
		if row.Message == "" {
			t.Errorf("%s has no default message", row.Reason)
		}
		if row.Code > -31000 || row.Code < -32768 {
			t.Errorf("%s: code %d is outside JSON-RPC's reserved range", row.Reason, row.Code)
		}
		if got := row.Kind.Error(); got != row {
			t.Errorf("ErrorKind(%d).Error() = %+v, want %+v", row.Kind, got, row)
		}
		if got, ok := ErrorByCode(row.Code); !ok || got != row {
			t.Errorf("ErrorByCode(%d) = %+v, %v; want %+v", row.Code, got, ok, row)
		}
		if got, ok := ErrorByReason(row.Reason); !ok || got != row {
			t.Errorf("ErrorByReason(%q) = %+v, %v; want %+v", row.Reason, got, ok, row)
		}
		if got := row.Kind.String(); got != row.Reason {
			t.Errorf("ErrorKind(%d).String() = %q, want %q", row.Kind, got, row.Reason)
		}
	}
	for k := range errKindCount {
		if !kinds[k] {
			t.Errorf("kind %d has no row", k)
		}
	}
}

// TestUnknownErrors: a code outside the table is not found, and a kind
// outside it reads as the internal error.
func TestUnknownErrors(t *testing.T) {
	for _, code := range []int{0, -32000, -32010, 1} {
		if row, ok := ErrorByCode(code); ok {
			t.Errorf("ErrorByCode(%d) = %+v", code, row)
		}
	}
	for _, reason := range []string{"", "internal_error", "NOT_A_REASON"} {
		if row, ok := ErrorByReason(reason); ok {
			t.Errorf("ErrorByReason(%q) = %+v", reason, row)
		}
	}
	if got := errKindCount.Error(); got.Kind != ErrInternal {
		t.Errorf("an out-of-range kind reads as %+v, want the internal error", got)
	}
}
