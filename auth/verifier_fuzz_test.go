package auth

import (
	"context"
	"crypto/elliptic"
	"slices"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"

	"github.com/a2agate/gateway/internal/testfiles"
)

// FuzzVerify: whatever the Authorization header holds, Verify returns
// without panicking, refuses with a listed Reason, and accepts only a token
// that names a caller.
func FuzzVerify(f *testing.F) {
	secret := []byte(strings.Repeat("s", 32))
	ec := testKey{method: jwt.SigningMethodES256, private: newECKey(f, elliptic.P256())}
	clock := newFakeClock()
	v, err := newVerifier(context.Background(), Config{
		Issuer:         testIssuer,
		Algorithms:     []string{"HS256", "ES256"},
		HMACSecretFile: testfiles.Write(f, "secret", secret),
		PublicKeyFiles: []string{testfiles.Write(f, "ec.pem", pemPublicKey(f, ec.public()))},
	}, testAudience, nil, clock.Now)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(v.Close)
	good := validClaims(clock.Now())
	for _, seed := range []string{
		"", "Bearer", "Basic YWRtaW46YWRtaW4=", "Bearer a.b.c", "Bearer ..", "Bearer a,b",
		"Bearer " + signWithHeader(f, jwt.SigningMethodHS256, secret, nil, good),
		"Bearer " + signWithHeader(f, jwt.SigningMethodHS256, secret, map[string]any{"kid": "../x", "crit": []string{"b64"}}, good),
		"Bearer " + sign(f, ec, good),
		"Bearer " + sign(f, ec, with(good, "exp", "soon", "sub", 7)),
		"Bearer " + unsignedToken(f, map[string]any{"alg": "none"}, good, ""),
		"Bearer " + unsignedToken(f, map[string]any{"alg": "ES256", "kid": map[string]any{}}, good, "c2ln"),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, header string) {
		p, err := v.Verify(context.Background(), header)
		if err == nil {
			if p.Subject == "" || p.Issuer != testIssuer {
				t.Fatalf("accepted %q as %+v", header, p)
			}
			return
		}
		authErr, ok := err.(*Error)
		if !ok || !slices.Contains(Reasons(), authErr.Reason) {
			t.Fatalf("Verify(%q) = %v (%T), want an *Error with a listed reason", header, err, err)
		}
		if authErr.Reason == ReasonKeysUnavailable {
			t.Fatalf("Verify(%q): keys unavailable without a JWKS", header)
		}
	})
}
