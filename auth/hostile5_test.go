package auth

import (
	"context"
	"testing"
)

// encoding/json reads a \u escape of a lone UTF-16 surrogate as U+FFFD,
// as it does a byte that is not UTF-8: subjects an issuer escaped from
// UTF-16 strings (JSON.stringify writes a lone surrogate as "\ud800")
// that differ only there would be one principal, owning each other's
// tasks. Such a claims set is refused as the non-UTF-8 one is; a proper
// surrogate pair, and an escaped backslash before a "u", still read.
func TestLoneSurrogateEscapesAreRefused(t *testing.T) {
	t.Parallel()
	s := newRawSubjects(t)
	s.want(t, []string{`a\ud800`, `a\uDBFF`, `a\udc00`, `a\ud800\u0041`, `a\ud800x`, `\udfff\ud800`},
		map[string]string{`\ud83d\ude00`: "\U0001F600", `a\\ud800`: `a\ud800`, "\ufffd": "\ufffd", `\u00e9`: "é"})
	// Elsewhere in the claims too: a member name, another claim.
	wantVerify(t, s.v, s.token(t, `"sub":"a","x\udc00":"\ud800"`), ReasonMalformedToken, "lone surrogates outside the subject")
}

// A NumericDate past what int64 seconds hold was converted with int64(f),
// which on amd64 gives the smallest int64: an nbf or iat the issuer put
// in the far future read as the far past, so a token its issuer said is
// not valid yet (nbf 1e19) was accepted. Such a date is refused.
func TestNumericDatesOutOfRange(t *testing.T) {
	t.Parallel()
	key, cfg := es256Issuer(t)
	clock := newFakeClock()
	v := mustVerifier(t, cfg, clock, nil)
	good := validClaims(clock.Now())
	for _, tt := range []struct {
		claim string
		value any
	}{
		{"nbf", 1e19}, {"nbf", 1e300}, {"nbf", -1e19}, {"iat", 1e19}, {"iat", 1e300},
		{"exp", 1e19}, {"exp", 1e300}, {"exp", -1e300},
	} {
		tok := sign(t, key, with(good, tt.claim, tt.value))
		if p, err := v.Verify(context.Background(), "Bearer "+tok); err == nil {
			t.Errorf("%s %g accepted as %+v", tt.claim, tt.value, p)
		}
	}
	// Within range, a far-future nbf is not valid yet and an old iat fine.
	wantVerify(t, v, sign(t, key, with(good, "nbf", 4e9)), ReasonNotYetValid, "nbf in 2096")
	wantVerify(t, v, sign(t, key, with(good, "iat", 0)), "", "iat at the epoch")
}
