package auth

import (
	"context"
	"crypto"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/a2agate/gateway/internal/testfiles"
)

// attackFixture is a verifier trusting an RSA, an EC P-256, an EC P-384 and
// an Ed25519 key from a JWKS, with the keys to forge tokens against it.
type attackFixture struct {
	clock               *fakeClock
	verifier            *Verifier
	rsa, ec, ec384, ed  testKey
	rsaUnpublished, ec2 testKey
	rsaPublicKeyPEM     []byte
}

func newAttackFixture(t *testing.T, algorithms ...string) *attackFixture {
	t.Helper()
	f := &attackFixture{
		clock:          newFakeClock(),
		rsa:            testKey{kid: "rsa-1", method: jwt.SigningMethodRS256, private: rsaPrimary()},
		ec:             testKey{kid: "ec-1", method: jwt.SigningMethodES256, private: newECKey(t, elliptic.P256())},
		ec384:          testKey{kid: "ec-384", method: jwt.SigningMethodES384, private: newECKey(t, elliptic.P384())},
		ed:             testKey{kid: "ed-1", method: jwt.SigningMethodEdDSA, private: newEdKey(t)},
		rsaUnpublished: testKey{kid: "rsa-1", method: jwt.SigningMethodRS256, private: rsaOther()},
		ec2:            testKey{kid: "ec-1", method: jwt.SigningMethodES256, private: newECKey(t, elliptic.P256())},
	}
	f.rsaPublicKeyPEM = pemPublicKey(t, f.rsa.public())
	srv, _ := newJWKSServer(t, f.rsa, f.ec, f.ec384, f.ed)
	if len(algorithms) == 0 {
		algorithms = []string{"RS256", "ES256", "EdDSA"}
	}
	cfg := Config{Issuer: testIssuer, Algorithms: algorithms, JWKSURL: srv.URL}
	if hasHMAC(algorithms) {
		cfg.HMACSecretFile = testfiles.Write(t, "secret", []byte(strings.Repeat("s", 32)+"\n"))
	}
	f.verifier = mustVerifier(t, cfg, f.clock, srv.Client())
	return f
}

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func hasHMAC(algorithms []string) bool {
	for _, a := range algorithms {
		if strings.HasPrefix(a, "HS") {
			return true
		}
	}
	return false
}

func TestVerifyRefusesAttacks(t *testing.T) {
	t.Parallel()
	f := newAttackFixture(t)
	now := f.clock.Now()
	good := validClaims(now)

	tampered := func() string {
		parts := strings.Split(sign(t, f.rsa, good), ".")
		forged := unsignedToken(t, map[string]any{}, with(good, "sub", "admin"), "")
		parts[1] = strings.Split(forged, ".")[1]
		return strings.Join(parts, ".")
	}

	tests := []struct {
		name   string
		header string
		want   Reason
	}{
		{"no token", "", ReasonMissingToken},
		{"blank header", "   ", ReasonMissingToken},
		{"basic scheme", "Basic YWxhZGRpbjpvcGVuc2VzYW1l", ReasonMalformed},
		{"bearer without token", "Bearer", ReasonMalformed},
		{"bearer with spaces only", "Bearer    ", ReasonMalformed},
		{"two tokens", "Bearer " + sign(t, f.rsa, good) + " extra", ReasonMalformed},
		{"control character", "Bearer abc\x00def", ReasonMalformed},
		{"oversized token", "Bearer " + strings.Repeat("a", maxTokenBytes+1), ReasonMalformedToken},
		{"garbage token", "Bearer not-a-jwt", ReasonMalformedToken},
		{"garbage segments", "Bearer aaaa.bbbb.cccc", ReasonMalformedToken},
		{"four segments", "Bearer " + sign(t, f.rsa, good) + ".x", ReasonMalformedToken},
		{"two segments", "Bearer " + strings.Join(strings.Split(sign(t, f.rsa, good), ".")[:2], "."), ReasonMalformedToken},
		{"empty segments", "Bearer ..", ReasonMalformedToken},
		{"standard base64 header", "Bearer eyJhbGciOiJSUzI1NiJ9+/.e30.c2ln", ReasonMalformedToken},
		{"padded signature", "Bearer " + sign(t, f.rsa, good) + "==", ReasonMalformedToken},
		// b64token allows "=" only at the end: the header's syntax is wrong.
		{"padding inside the token", "Bearer " + base64.URLEncoding.EncodeToString([]byte(`{"alg":"RS256"}.`)) + ".e30.c2ln", ReasonMalformed},
		{"header not JSON", "Bearer " + b64("not json") + ".e30.c2ln", ReasonMalformedToken},
		{"header a JSON array", "Bearer " + b64(`["RS256"]`) + ".e30.c2ln", ReasonMalformedToken},
		{"header a JSON string", "Bearer " + b64(`"RS256"`) + ".e30.c2ln", ReasonMalformedToken},
		{"payload not JSON", "Bearer " + b64(`{"alg":"RS256","kid":"rsa-1"}`) + "." + b64("sub=admin") + ".c2ln", ReasonMalformedToken},
		{"payload a JSON array", "Bearer " + b64(`{"alg":"RS256","kid":"rsa-1"}`) + "." + b64("[]") + ".c2ln", ReasonMalformedToken},
		{"signature not base64url", "Bearer " + strings.Join(strings.Split(sign(t, f.rsa, good), ".")[:2], ".") + ".c2ln+/", ReasonMalformedToken},
		{"largest token, three segments", "Bearer " + b64(`{"alg":"RS256","kid":"rsa-1"}`) + "." + strings.Repeat("A", maxTokenBytes-100) + ".c2ln", ReasonMalformedToken},
		{"deeply nested header", "Bearer " + b64(`{"alg":"RS256","x":`+strings.Repeat("[", 5000)+strings.Repeat("]", 5000)+`}`) + ".e30.c2ln", ReasonBadSignature},
		{"second credential joined by a comma", "Bearer " + sign(t, f.rsa, good) + ", Basic YWRtaW46YWRtaW4=", ReasonDuplicate},
		{"second credential joined first", "Basic YWRtaW46YWRtaW4=, Bearer " + sign(t, f.rsa, good), ReasonDuplicate},
		{"alg none", "Bearer " + unsignedToken(t, map[string]any{"alg": "none", "typ": "JWT", "kid": "rsa-1"}, good, ""), ReasonBadAlgorithm},
		{"alg None", "Bearer " + unsignedToken(t, map[string]any{"alg": "None", "kid": "rsa-1"}, good, ""), ReasonBadAlgorithm},
		{"alg none without kid", "Bearer " + unsignedToken(t, map[string]any{"alg": "none"}, good, ""), ReasonBadAlgorithm},
		{"alg none with a signature", "Bearer " + unsignedToken(t, map[string]any{"alg": "none"}, good, "c2ln"), ReasonBadAlgorithm},
		{"alg not a string", "Bearer " + unsignedToken(t, map[string]any{"alg": 256, "kid": "rsa-1"}, good, "c2ln"), ReasonBadAlgorithm},
		{"alg with trailing space", "Bearer " + unsignedToken(t, map[string]any{"alg": "RS256 ", "kid": "rsa-1"}, good, "c2ln"), ReasonBadAlgorithm},
		{"alg lower case", "Bearer " + unsignedToken(t, map[string]any{"alg": "rs256", "kid": "rsa-1"}, good, "c2ln"), ReasonBadAlgorithm},
		{"HS256 with a guessed secret, no kid", "Bearer " + signWithHeader(t, jwt.SigningMethodHS256, []byte("secret"), nil, good), ReasonBadAlgorithm},
		{"HS256 with the RSA modulus as secret", "Bearer " + signWithHeader(t, jwt.SigningMethodHS256, rsaPrimary().N.Bytes(), map[string]any{"kid": "rsa-1"}, good), ReasonBadAlgorithm},
		{"alg missing", "Bearer " + unsignedToken(t, map[string]any{"kid": "rsa-1"}, good, "c2ln"), ReasonBadAlgorithm},
		{"alg unknown", "Bearer " + unsignedToken(t, map[string]any{"alg": "XS256\n", "kid": "rsa-1"}, good, "c2ln"), ReasonBadAlgorithm},
		{"HS256 with the RSA public key as secret", "Bearer " + signWithHeader(t, jwt.SigningMethodHS256, f.rsaPublicKeyPEM, map[string]any{"kid": "rsa-1"}, good), ReasonBadAlgorithm},
		{"alg not in allow-list", "Bearer " + signWithHeader(t, jwt.SigningMethodRS384, f.rsa.private, map[string]any{"kid": "rsa-1"}, good), ReasonBadAlgorithm},
		{"PS256 not in allow-list", "Bearer " + signWithHeader(t, jwt.SigningMethodPS256, f.rsa.private, map[string]any{"kid": "rsa-1"}, good), ReasonBadAlgorithm},
		{"wrong issuer", "Bearer " + sign(t, f.rsa, with(good, "iss", "https://evil.test")), ReasonBadIssuer},
		{"missing issuer", "Bearer " + sign(t, f.rsa, with(good, "iss", nil)), ReasonMissingClaim},
		{"wrong audience", "Bearer " + sign(t, f.rsa, with(good, "aud", "https://other-agent.test")), ReasonBadAudience},
		{"wrong audience list", "Bearer " + sign(t, f.rsa, with(good, "aud", []string{"a", "b"})), ReasonBadAudience},
		{"missing audience", "Bearer " + sign(t, f.rsa, with(good, "aud", nil)), ReasonMissingClaim},
		{"expired", "Bearer " + sign(t, f.rsa, with(good, "exp", now.Add(-time.Hour).Unix())), ReasonExpired},
		{"not yet valid", "Bearer " + sign(t, f.rsa, with(good, "nbf", now.Add(time.Hour).Unix())), ReasonNotYetValid},
		{"missing exp", "Bearer " + sign(t, f.rsa, with(good, "exp", nil)), ReasonMissingClaim},
		{"exp not a number", "Bearer " + sign(t, f.rsa, with(good, "exp", "tomorrow")), ReasonMalformedToken},
		{"exp an object", "Bearer " + sign(t, f.rsa, with(good, "exp", map[string]any{"$gt": 0})), ReasonMalformedToken},
		{"aud a number", "Bearer " + sign(t, f.rsa, with(good, "aud", 7)), ReasonMissingClaim},
		{"subject not a string", "Bearer " + sign(t, f.rsa, with(good, "sub", []string{"alice", "admin"})), ReasonMissingClaim},
		{"missing subject", "Bearer " + sign(t, f.rsa, with(good, "sub", nil)), ReasonMissingClaim},
		{"empty subject", "Bearer " + sign(t, f.rsa, with(good, "sub", "")), ReasonMissingClaim},
		{"wrong issuer and expired", "Bearer " + sign(t, f.rsa, with(good, "iss", "https://evil.test", "exp", now.Add(-time.Hour).Unix())), ReasonBadIssuer},
		{"unknown kid", "Bearer " + sign(t, testKey{kid: "nope", method: jwt.SigningMethodRS256, private: f.rsa.private}, good), ReasonUnknownKey},
		{"no kid, signed by an unpublished key", "Bearer " + signWithHeader(t, jwt.SigningMethodRS256, rsaOther(), nil, good), ReasonBadSignature},
		{"kid not a string", "Bearer " + signWithHeader(t, jwt.SigningMethodRS256, f.rsa.private, map[string]any{"kid": 7}, good), ReasonMalformedToken},
		{"kid an object", "Bearer " + signWithHeader(t, jwt.SigningMethodRS256, f.rsa.private, map[string]any{"kid": map[string]any{"$ne": ""}}, good), ReasonMalformedToken},
		{"kid a path", "Bearer " + sign(t, testKey{kid: "../../../../etc/passwd", method: jwt.SigningMethodRS256, private: rsaOther()}, good), ReasonUnknownKey},
		{"kid a path to a known kid", "Bearer " + sign(t, testKey{kid: "x/../rsa-1", method: jwt.SigningMethodRS256, private: rsaOther()}, good), ReasonUnknownKey},
		{"kid a URL", "Bearer " + sign(t, testKey{kid: "https://evil.test/jwks.json#rsa-1", method: jwt.SigningMethodRS256, private: rsaOther()}, good), ReasonUnknownKey},
		{"kid with NUL and CRLF", "Bearer " + sign(t, testKey{kid: "rsa-1\x00\r\nX-Admin: 1", method: jwt.SigningMethodRS256, private: rsaOther()}, good), ReasonUnknownKey},
		{"kid with a SQL quote", "Bearer " + sign(t, testKey{kid: "' OR '1'='1", method: jwt.SigningMethodRS256, private: rsaOther()}, good), ReasonUnknownKey},
		{"kid of 8 KiB", "Bearer " + sign(t, testKey{kid: strings.Repeat("k", 8<<10), method: jwt.SigningMethodRS256, private: rsaOther()}, good), ReasonUnknownKey},
		{"kid empty, signed by an unpublished key", "Bearer " + signWithHeader(t, jwt.SigningMethodRS256, rsaOther(), map[string]any{"kid": ""}, good), ReasonBadSignature},
		{"ES256 naming the RSA key", "Bearer " + sign(t, testKey{kid: "rsa-1", method: jwt.SigningMethodES256, private: f.ec.private}, good), ReasonUnknownKey},
		{"RS256 naming the EC key", "Bearer " + sign(t, testKey{kid: "ec-1", method: jwt.SigningMethodRS256, private: f.rsa.private}, good), ReasonUnknownKey},
		{"ES256 naming a P-384 key", "Bearer " + sign(t, testKey{kid: "ec-384", method: jwt.SigningMethodES256, private: f.ec.private}, good), ReasonUnknownKey},
		{"tampered payload", "Bearer " + tampered(), ReasonBadSignature},
		{"signature from another RSA key", "Bearer " + sign(t, f.rsaUnpublished, good), ReasonBadSignature},
		{"signature from another EC key", "Bearer " + sign(t, f.ec2, good), ReasonBadSignature},
		{"signature from another Ed25519 key", "Bearer " + sign(t, testKey{kid: "ed-1", method: jwt.SigningMethodEdDSA, private: newEdKey(t)}, good), ReasonBadSignature},
		{"signature stripped", "Bearer " + strings.TrimRight(sign(t, f.rsa, good), "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"), ReasonBadSignature},
		{"critical header", "Bearer " + signWithHeader(t, jwt.SigningMethodRS256, f.rsa.private, map[string]any{"kid": "rsa-1", "crit": []string{"exp"}, "exp": 1}, good), ReasonMalformedToken},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := f.verifier.Verify(context.Background(), tt.header)
			if err == nil {
				t.Fatalf("Verify accepted the token as %v", p)
			}
			token, _ := strings.CutPrefix(tt.header, "Bearer ")
			wantReason(t, err, tt.want, token)
		})
	}
}

// With HS256 allowed next to RS256, the classic confusion token reaches the
// signature check, which must still use the HMAC secret, never the RSA key.
func TestVerifyRefusesHMACKeyConfusion(t *testing.T) {
	t.Parallel()
	f := newAttackFixture(t, "RS256", "HS256")
	now := f.clock.Now()
	for _, kid := range []string{"rsa-1", ""} {
		token := signWithHeader(t, jwt.SigningMethodHS256, f.rsaPublicKeyPEM, map[string]any{"kid": kid}, validClaims(now))
		wantVerify(t, f.verifier, token, ReasonBadSignature, "HS256 signed with the RSA public key, kid "+kid)
	}
	// The secret-signed token is accepted, so the refusal above is not
	// just HS256 failing everywhere.
	secret := []byte(strings.Repeat("s", 32))
	token := signWithHeader(t, jwt.SigningMethodHS256, secret, map[string]any{"kid": "rsa-1"}, validClaims(now))
	if _, err := f.verifier.Verify(context.Background(), "Bearer "+token); err != nil {
		t.Fatalf("Verify(HS256 with the configured secret) = %v", err)
	}
}

// Keys and key URLs a token brings along (RFC 7515 jku, jwk, x5u, x5c) are
// never used or fetched: only the configured keys count.
func TestVerifyIgnoresKeysNamedByTheToken(t *testing.T) {
	t.Parallel()
	f := newAttackFixture(t)
	attacker := rsaOther()
	var fetched atomic.Int64
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fetched.Add(1)
		w.Write(jwksBody(t, jwkOf(t, "attacker", attacker.Public()), jwkOf(t, "rsa-1", attacker.Public())))
	}))
	t.Cleanup(evil.Close)
	good := validClaims(f.clock.Now())
	for _, kid := range []string{"attacker", "rsa-1", ""} {
		header := map[string]any{
			"kid": kid,
			"jku": evil.URL,
			"x5u": evil.URL,
			"jwk": jwkOf(t, kid, attacker.Public()),
		}
		token := signWithHeader(t, jwt.SigningMethodRS256, attacker, header, good)
		_, err := f.verifier.Verify(context.Background(), "Bearer "+token)
		want := ReasonBadSignature
		if kid == "attacker" {
			want = ReasonUnknownKey
		}
		wantReason(t, err, want, token)
	}
	if n := fetched.Load(); n != 0 {
		t.Fatalf("the verifier fetched the token's key URL %d times", n)
	}
}

func TestVerifyAcceptsEachAlgorithm(t *testing.T) {
	t.Parallel()
	f := newAttackFixture(t, "RS256", "PS256", "ES256", "ES384", "EdDSA")
	good := validClaims(f.clock.Now())
	tests := []struct {
		name string
		key  testKey
	}{
		{"RS256", f.rsa},
		{"PS256", testKey{kid: "rsa-1", method: jwt.SigningMethodPS256, private: f.rsa.private}},
		{"ES256", f.ec},
		{"ES384", f.ec384},
		{"EdDSA", f.ed},
		{"ES256 without kid", testKey{method: jwt.SigningMethodES256, private: f.ec.private}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := f.verifier.Verify(context.Background(), "Bearer "+sign(t, tt.key, good))
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if want := (Principal{Issuer: testIssuer, Subject: "alice"}); p != want {
				t.Fatalf("Verify = %+v, want %+v", p, want)
			}
		})
	}
}

// Not parallel: it sets an environment variable.
func TestVerifyHMAC(t *testing.T) {
	secret := []byte("0123456789abcdef0123456789abcdef0123456789abcdef")
	t.Setenv("AUTH_TEST_HMAC_SECRET", string(secret))
	clock := newFakeClock()
	v := mustVerifier(t, Config{Issuer: testIssuer, Algorithms: []string{"HS256", "HS384"}, HMACSecretEnv: "AUTH_TEST_HMAC_SECRET"}, clock, nil)
	good := validClaims(clock.Now())

	for _, method := range []jwt.SigningMethod{jwt.SigningMethodHS256, jwt.SigningMethodHS384} {
		token := signWithHeader(t, method, secret, nil, good)
		if _, err := v.Verify(context.Background(), "bearer "+token); err != nil {
			t.Fatalf("Verify(%s): %v", method.Alg(), err)
		}
	}
	wrong := signWithHeader(t, jwt.SigningMethodHS256, []byte(strings.Repeat("x", 48)), nil, good)
	wantVerify(t, v, wrong, ReasonBadSignature, "wrong secret")

	hs512 := signWithHeader(t, jwt.SigningMethodHS512, secret, nil, good)
	wantVerify(t, v, hs512, ReasonBadAlgorithm, "HS512 not allowed")
}

func TestVerifyPEMKeys(t *testing.T) {
	t.Parallel()
	ec := newECKey(t, elliptic.P256())
	ed := newEdKey(t)
	cert := selfSignedCert(t, ec)
	clock := newFakeClock()
	cfg := Config{
		Issuer:     testIssuer,
		Algorithms: []string{"RS256", "ES256", "EdDSA"},
		PublicKeyFiles: []string{
			testfiles.Write(t, "rsa.pem", pemPublicKey(t, rsaPrimary().Public())),
			testfiles.Write(t, "ec-and-ed.pem", append(cert, pemPublicKey(t, ed.Public())...)),
		},
	}
	v := mustVerifier(t, cfg, clock, nil)
	good := validClaims(clock.Now())
	for _, key := range []testKey{
		{method: jwt.SigningMethodRS256, private: rsaPrimary()},
		{kid: "any-kid", method: jwt.SigningMethodES256, private: ec},
		{method: jwt.SigningMethodEdDSA, private: ed},
	} {
		if _, err := v.Verify(context.Background(), "Bearer "+sign(t, key, good)); err != nil {
			t.Fatalf("Verify(%s): %v", key.method.Alg(), err)
		}
	}
	other := sign(t, testKey{method: jwt.SigningMethodRS256, private: rsaOther()}, good)
	wantVerify(t, v, other, ReasonBadSignature, "untrusted RSA key")
}

func TestVerifyAudienceList(t *testing.T) {
	t.Parallel()
	key, cfg := es256Issuer(t)
	cfg.Audiences = []string{"https://a.test", "https://b.test"}
	clock := newFakeClock()
	v := mustVerifier(t, cfg, clock, nil)
	good := validClaims(clock.Now())
	tests := []struct {
		aud  any
		want Reason // "" means accepted
	}{
		{"https://a.test", ""},
		{"https://b.test", ""},
		{[]string{"https://x.test", "https://b.test"}, ""},
		{testAudience, ReasonBadAudience}, // the default is replaced, not extended
		{[]string{"https://x.test", "https://y.test"}, ReasonBadAudience},
		{"https://A.test", ReasonBadAudience},
	}
	for _, tt := range tests {
		wantVerify(t, v, sign(t, key, with(good, "aud", tt.aud)), tt.want, fmt.Sprintf("aud %v", tt.aud))
	}
}

func TestVerifyDefaultAudienceIsPublicURL(t *testing.T) {
	t.Parallel()
	key, cfg := es256Issuer(t)
	v, err := New(context.Background(), cfg, "https://public.test/agent", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	now := time.Now()
	if _, err := v.Verify(context.Background(), "Bearer "+sign(t, key, with(validClaims(now), "aud", "https://public.test/agent"))); err != nil {
		t.Fatalf("Verify(aud = public URL): %v", err)
	}
	token := sign(t, key, validClaims(now))
	wantVerify(t, v, token, ReasonBadAudience, "default audience")

	if _, err := New(context.Background(), cfg, "", nil); err == nil || !strings.Contains(err.Error(), "auth.audiences") {
		t.Fatalf("New without audiences or public URL = %v, want an auth.audiences error", err)
	}
}

func TestVerifyPrincipalClaim(t *testing.T) {
	t.Parallel()
	key := testKey{method: jwt.SigningMethodEdDSA, private: newEdKey(t)}
	clock := newFakeClock()
	cfg := Config{Issuer: testIssuer, Algorithms: []string{"EdDSA"}, PrincipalClaim: "client_id",
		PublicKeyFiles: []string{testfiles.Write(t, "ed.pem", pemPublicKey(t, key.public()))}}
	v := mustVerifier(t, cfg, clock, nil)
	good := validClaims(clock.Now())

	p, err := v.Verify(context.Background(), "Bearer "+sign(t, key, with(good, "client_id", "billing-bot")))
	if err != nil {
		t.Fatal(err)
	}
	if want := (Principal{Issuer: testIssuer, Subject: "billing-bot"}); p != want {
		t.Fatalf("Verify = %+v, want %+v", p, want)
	}
	for _, value := range []any{nil, 42, []string{"a"}, ""} {
		token := sign(t, key, with(good, "client_id", value))
		err := wantVerify(t, v, token, ReasonMissingClaim, fmt.Sprintf("client_id %v", value))
		if !errors.Is(err, jwt.ErrTokenRequiredClaimMissing) {
			t.Fatalf("client_id %v: errors.Is(err, jwt.ErrTokenRequiredClaimMissing) = false", value)
		}
	}
}

func TestVerifyLeeway(t *testing.T) {
	t.Parallel()
	key, cfg := es256Issuer(t)
	clock := newFakeClock()
	v := mustVerifier(t, cfg, clock, nil) // default leeway: 30s
	now := clock.Now()
	good := validClaims(now)
	tests := []struct {
		name   string
		claims jwt.MapClaims
		want   Reason
	}{
		{"expired within leeway", with(good, "exp", now.Add(-29*time.Second).Unix()), ""},
		{"expired beyond leeway", with(good, "exp", now.Add(-31*time.Second).Unix()), ReasonExpired},
		{"nbf within leeway", with(good, "nbf", now.Add(29*time.Second).Unix()), ""},
		{"nbf beyond leeway", with(good, "nbf", now.Add(31*time.Second).Unix()), ReasonNotYetValid},
	}
	for _, tt := range tests {
		err := wantVerify(t, v, sign(t, key, tt.claims), tt.want, tt.name)
		if tt.want == ReasonExpired && !errors.Is(err, jwt.ErrTokenExpired) {
			t.Errorf("%s: errors.Is(err, jwt.ErrTokenExpired) = false", tt.name)
		}
	}
}

// TestVerifyZeroLeeway: leeway: 0s is no skew at all, not the default.
func TestVerifyZeroLeeway(t *testing.T) {
	t.Parallel()
	key, cfg := es256Issuer(t)
	cfg.Leeway = new(time.Duration(0))
	clock := newFakeClock()
	v := mustVerifier(t, cfg, clock, nil)
	now := clock.Now()
	good := validClaims(now)
	wantVerify(t, v, sign(t, key, with(good, "exp", now.Add(-time.Second).Unix())), ReasonExpired, "expired a second ago")
	wantVerify(t, v, sign(t, key, with(good, "nbf", now.Add(time.Second).Unix())), ReasonNotYetValid, "valid in a second")
	wantVerify(t, v, sign(t, key, good), "", "valid now")
}

func TestVerifyErrorsNeverQuoteToken(t *testing.T) {
	t.Parallel()
	f := newAttackFixture(t)
	// A header whose JSON is broken right at attacker-chosen text: the
	// library's own error would quote it.
	header := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"RS256",SECRETSECRET}`))
	token := header + ".e30.c2ln"
	err := wantVerify(t, f.verifier, token, ReasonMalformedToken, "broken header JSON")
	if strings.Contains(err.Error(), "SECRET") || strings.Contains(err.Error(), "'S'") {
		t.Fatalf("error %q quotes token content", err)
	}
}

// selfSignedCert returns a PEM certificate for key's public half.
func selfSignedCert(t *testing.T, key crypto.Signer) []byte {
	t.Helper()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "issuer.test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
