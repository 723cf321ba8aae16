package auth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/a2agate/gateway/internal/testfiles"
)

// hmacToken signs a header and a payload given as raw bytes, for payloads
// no JSON encoder writes.
func hmacToken(t *testing.T, secret []byte, payload []byte) string {
	t.Helper()
	enc := base64.RawURLEncoding
	signing := enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." + enc.EncodeToString(payload)
	sig, err := jwt.SigningMethodHS256.Sign(signing, secret)
	if err != nil {
		t.Fatal(err)
	}
	return signing + "." + enc.EncodeToString(sig)
}

// encoding/json turns every byte that is not UTF-8 into U+FFFD: subjects
// that differ only there, such as Latin-1 names an issuer copied as they
// are, would be one principal and own each other's tasks. RFC 7519 §7.2
// asks for UTF-8; a payload that is not is refused.
func TestSubjectsThatAreNotUTF8AreRefused(t *testing.T) {
	t.Parallel()
	// The same names in UTF-8, and escaped, are two principals as before.
	newRawSubjects(t).want(t, []string{"jos\xe9", "jos\xe8", "\xff"}, map[string]string{"josé": "josé", `jos\u00e8`: "josè"})
}

// rawSubjects is an HS256 issuer's verifier and the claims of tokens whose
// sub is written as given, raw JSON string text.
type rawSubjects struct {
	v      *Verifier
	secret []byte
	now    time.Time
}

func newRawSubjects(t *testing.T) rawSubjects {
	secret := []byte(strings.Repeat("s", 32))
	clock := newFakeClock()
	v := mustVerifier(t, Config{Issuer: testIssuer, Algorithms: []string{"HS256"},
		HMACSecretFile: testfiles.Write(t, "secret", secret)}, clock, nil)
	return rawSubjects{v, secret, clock.Now()}
}

// token is a signed token of valid claims plus extra, raw JSON members.
func (s rawSubjects) token(t *testing.T, extra string) string {
	t.Helper()
	c := validClaims(s.now)
	delete(c, "sub")
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return hmacToken(t, s.secret, append(append(b[:len(b)-1], ","+extra...), '}'))
}

// want checks that a token whose sub is each of refused is malformed and
// one whose sub is each key of accepted is that principal.
func (s rawSubjects) want(t *testing.T, refused []string, accepted map[string]string) {
	t.Helper()
	for _, sub := range refused {
		tok := s.token(t, `"sub":"`+sub+`"`)
		p, err := s.v.Verify(context.Background(), "Bearer "+tok)
		if err == nil {
			t.Errorf("subject %q accepted as %q", sub, p.Subject)
			continue
		}
		wantReason(t, err, ReasonMalformedToken, tok)
	}
	for sub, want := range accepted {
		p, err := s.v.Verify(context.Background(), "Bearer "+s.token(t, `"sub":"`+sub+`"`))
		if err != nil || p.Subject != want {
			t.Errorf("subject %q: %+v, %v; want %q", sub, p, err, want)
		}
	}
}

// iat is held to what exp and nbf are: a NumericDate, and not in the
// future beyond the leeway (a token its issuer says it has not issued
// yet is not valid yet), where the parser ignored it whatever it held.
func TestIssuedAtIsChecked(t *testing.T) {
	t.Parallel()
	key, cfg := es256Issuer(t)
	clock := newFakeClock()
	v := mustVerifier(t, cfg, clock, nil)
	now := clock.Now()
	good := validClaims(now)
	tests := []struct {
		name string
		iat  any
		want Reason
	}{
		{"now", now.Unix(), ""},
		{"within leeway ahead", now.Add(DefaultLeeway - time.Second).Unix(), ""},
		{"an hour ago", now.Add(-time.Hour).Unix(), ""},
		{"beyond leeway ahead", now.Add(DefaultLeeway + time.Second).Unix(), ReasonNotYetValid},
		{"a year ahead", now.AddDate(1, 0, 0).Unix(), ReasonNotYetValid},
		{"not a number", "yesterday", ReasonMalformedToken},
		{"an object", map[string]any{"$gt": 0}, ReasonMalformedToken},
	}
	for _, tt := range tests {
		wantVerify(t, v, sign(t, key, with(good, "iat", tt.iat)), tt.want, "iat "+tt.name)
	}
	wantVerify(t, v, sign(t, key, with(good, "iat", nil)), "", "no iat")
}
