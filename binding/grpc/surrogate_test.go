package grpcbind

import (
	"testing"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
)

// TestLoneSurrogatesDecoded: a result holding lone UTF-16 surrogate
// escapes, which protojson refuses, decodes with each replaced by U+FFFD,
// as encoding/json reads them; pairs, escaped backslashes and other
// escapes are left as they are. Before, the call failed INTERNAL.
func TestLoneSurrogatesDecoded(t *testing.T) {
	cases := []struct{ in, want string }{
		{`"a\ud800b"`, "a\ufffdb"},
		{`"\udc00"`, "\ufffd"},
		{`"\uD83D\uDE00"`, "\U0001F600"},
		{`"\ud83d\ud83d\ude00"`, "\ufffd\U0001F600"},
		{`"\\ud800"`, `\ud800`},
		{`"\\\ud800"`, "\\\ufffd"},
		{`"x\n\u00e9\ud800"`, "x\né\ufffd"},
		{`"end\ud800"`, "end\ufffd"},
	}
	for _, c := range cases {
		var m a2apb.Message
		raw := []byte(`{"messageId":"m","parts":[{"text":` + c.in + `}]}`)
		if err := decodeResult(raw, &m); err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if got := m.GetParts()[0].GetText(); got != c.want {
			t.Errorf("%s: %q, want %q", c.in, got, c.want)
		}
	}
}
