package normalize

import (
	"strings"
	"testing"

	"github.com/a2agate/gateway/dialect"
)

// TestHistoryLengthRefusals: each refused historyLength says what is
// wrong with it.
func TestHistoryLengthRefusals(t *testing.T) {
	for _, tc := range []struct{ value, says string }{
		{`2147483648`, "out of range"},
		{`"2147483648"`, "out of range"},
		{`1e12`, "out of range"},
		{`-2147483649`, "must not be negative"},
		{`-1`, "must not be negative"},
		{`1.5`, "must be a whole number"},
		{`"ten"`, "must be a whole number"},
		{`true`, "must be a whole number"},
	} {
		for _, d := range []dialect.ID{dialect.V03, dialect.V10} {
			_, _, err := Params(dialect.GetTask, d, d, []byte(`{"id":"t","historyLength":`+tc.value+`}`))
			if err == nil || !strings.Contains(err.Error(), tc.says) || !strings.Contains(err.Error(), "historyLength") {
				t.Errorf("%s historyLength %s: %v, want it to say %q", d, tc.value, err, tc.says)
			}
		}
	}
}
