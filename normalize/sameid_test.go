package normalize

import "testing"

func TestSameID(t *testing.T) {
	for _, tc := range []struct {
		sent, got string
		same      bool
	}{
		{`1`, `1`, true},
		{`1`, `1.0`, true},
		{`100`, `1e2`, true},
		{`"A"`, `"\u0041"`, true},
		{``, `1`, true}, // the gateway's own call is sent as 1
		{`1`, `"1"`, false},
		{`1`, `2`, false},
		{`1`, ``, false},
		{`1`, `null`, false},
		{`123456789012345678901234567890`, `1.2345678901234568e+29`, true}, // as a float64 decoder writes it back
		{`9007199254740993`, `9007199254740999`, false},
		{`0.1`, `0.1000000000000000055`, false},
		{`"a"`, `"b"`, false},
		{`"a"`, `{"a":1}`, false},
	} {
		if got := SameID([]byte(tc.sent), []byte(tc.got)); got != tc.same {
			t.Errorf("SameID(%s, %s) = %v", tc.sent, tc.got, got)
		}
	}
}
