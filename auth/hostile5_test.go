package auth

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/a2agate/gateway/internal/testfiles"
)

// encoding/json reads a \u escape of a lone UTF-16 surrogate as U+FFFD,
// as it does a byte that is not UTF-8: subjects an issuer escaped from
// UTF-16 strings (JSON.stringify writes a lone surrogate as "\ud800")
// that differ only there would be one principal, owning each other's
// tasks. Such a claims set is refused as the non-UTF-8 one is; a proper
// surrogate pair, and an escaped backslash before a "u", still read.
func TestLoneSurrogateEscapesAreRefused(t *testing.T) {
	t.Parallel()
	secret := []byte(strings.Repeat("s", 32))
	clock := newFakeClock()
	v := mustVerifier(t, Config{Issuer: testIssuer, Algorithms: []string{"HS256"},
		HMACSecretFile: testfiles.Write(t, "secret", secret)}, clock, nil)
	claims := func(sub string) []byte {
		c := validClaims(clock.Now())
		delete(c, "sub")
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		return append(append(b[:len(b)-1], `,"sub":"`+sub+`"`...), '}')
	}
	for _, sub := range []string{`a\ud800`, `a\uDBFF`, `a\udc00`, `a\ud800\u0041`, `a\ud800x`, `\udfff\ud800`} {
		tok := hmacToken(t, secret, claims(sub))
		p, err := v.Verify(context.Background(), "Bearer "+tok)
		if err == nil {
			t.Errorf("subject %s accepted as %q", sub, p.Subject)
			continue
		}
		wantReason(t, err, ReasonMalformedToken, tok)
	}
	for sub, want := range map[string]string{`\ud83d\ude00`: "\U0001F600", `a\\ud800`: `a\ud800`, "\ufffd": "\ufffd", `\u00e9`: "é"} {
		p, err := v.Verify(context.Background(), "Bearer "+hmacToken(t, secret, claims(sub)))
		if err != nil || p.Subject != want {
			t.Errorf("subject %s: %+v, %v; want %q", sub, p, err, want)
		}
	}
	// Elsewhere in the claims too: a member name, another claim.
	c := validClaims(clock.Now())
	b, _ := json.Marshal(c)
	tok := hmacToken(t, secret, append(b[:len(b)-1], `,"x\udc00":"\ud800"}`...))
	wantVerify(t, v, tok, ReasonMalformedToken, "lone surrogates outside the subject")
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
