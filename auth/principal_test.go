package auth

import "testing"

func TestPrincipalString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		p    Principal
		want string
	}{
		{Principal{"https://issuer.test", "alice"}, "https://issuer.test|alice"},
		{Principal{"a|b", "c"}, `a\|b|c`},
		{Principal{"a", "b|c"}, `a|b\|c`},
		{Principal{`a\`, "b"}, `a\\|b`},
		{Principal{"a", `\|b`}, `a|\\\|b`},
		{Principal{}, "|"},
	}
	for _, tt := range tests {
		if got := tt.p.String(); got != tt.want {
			t.Errorf("%#v.String() = %q, want %q", tt.p, got, tt.want)
		}
	}
}

// Distinct principals never share a key, however the separator and escape
// characters are spread between the two parts.
func TestPrincipalStringIsInjective(t *testing.T) {
	t.Parallel()
	parts := []string{"", "a", "|", `\`, `\|`, `|\`, "a|", "|a", `a\`, `\a`, `\\`, "||", `a\|b`}
	seen := map[string]Principal{}
	for _, iss := range parts {
		for _, sub := range parts {
			p := Principal{Issuer: iss, Subject: sub}
			key := p.String()
			if other, dup := seen[key]; dup {
				t.Fatalf("%#v and %#v both give %q", p, other, key)
			}
			seen[key] = p
		}
	}
}
