package auth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/a2agate/gateway/internal/testclock"
	"github.com/a2agate/gateway/internal/testfiles"
)

const (
	testIssuer   = "https://issuer.test"
	testAudience = "https://agent.test"
)

// testKey is a signing key generated for the tests and the kid it is
// published under.
type testKey struct {
	kid     string
	method  jwt.SigningMethod
	private crypto.Signer
}

func (k testKey) public() crypto.PublicKey { return k.private.Public() }

// RSA generation is slow under -race, so each key is made once per run.
var (
	rsaPrimary = sync.OnceValue(func() *rsa.PrivateKey { return mustRSA() })
	rsaOther   = sync.OnceValue(func() *rsa.PrivateKey { return mustRSA() })
	rsaRotated = sync.OnceValue(func() *rsa.PrivateKey { return mustRSA() })
)

func mustRSA() *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	return k
}

func newECKey(t testing.TB, curve elliptic.Curve) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(curve, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// es256Issuer is an ES256 key of the test issuer and the config of a
// verifier that trusts it (its public key in a PEM file).
func es256Issuer(t testing.TB) (testKey, Config) {
	key := testKey{method: jwt.SigningMethodES256, private: newECKey(t, elliptic.P256())}
	return key, Config{Issuer: testIssuer, Algorithms: []string{"ES256"},
		PublicKeyFiles: []string{testfiles.Write(t, "ec.pem", pemPublicKey(t, key.public()))}}
}

func newEdKey(t *testing.T) ed25519.PrivateKey {
	t.Helper()
	_, k, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// sign returns a compact JWS of claims made with k, naming k.kid when set.
func sign(t testing.TB, k testKey, claims jwt.MapClaims) string {
	t.Helper()
	return signWithHeader(t, k.method, k.private, map[string]any{"kid": k.kid}, claims)
}

// signWithHeader signs claims with key, adding the given header members; a
// member whose value is "" is left out.
func signWithHeader(t testing.TB, method jwt.SigningMethod, key any, header map[string]any, claims jwt.MapClaims) string {
	t.Helper()
	token := jwt.NewWithClaims(method, claims)
	for name, value := range header {
		if value != "" {
			token.Header[name] = value
		}
	}
	s, err := token.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// unsignedToken builds a JWS by hand, for headers the library refuses to sign.
func unsignedToken(t testing.TB, header, claims map[string]any, signature string) string {
	t.Helper()
	h, err := json.Marshal(header)
	if err != nil {
		t.Fatal(err)
	}
	c, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.RawURLEncoding
	return enc.EncodeToString(h) + "." + enc.EncodeToString(c) + "." + signature
}

// validClaims returns claims every default test verifier accepts at now.
func validClaims(now time.Time) jwt.MapClaims {
	return jwt.MapClaims{
		"iss": testIssuer,
		"aud": testAudience,
		"sub": "alice",
		"iat": now.Unix(),
		"exp": now.Add(5 * time.Minute).Unix(),
	}
}

// with returns a copy of c with the given members set; a nil value deletes.
func with(c jwt.MapClaims, kv ...any) jwt.MapClaims {
	out := jwt.MapClaims{}
	for k, v := range c {
		out[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		name := kv[i].(string)
		if kv[i+1] == nil {
			delete(out, name)
		} else {
			out[name] = kv[i+1]
		}
	}
	return out
}

// jwkOf encodes a public key as a JWK (RFC 7517, RFC 7518 §6, RFC 8037).
func jwkOf(t *testing.T, kid string, pub crypto.PublicKey) map[string]any {
	t.Helper()
	enc := base64.RawURLEncoding
	switch k := pub.(type) {
	case *rsa.PublicKey:
		return map[string]any{"kty": "RSA", "kid": kid, "use": "sig",
			"n": enc.EncodeToString(k.N.Bytes()), "e": enc.EncodeToString(big.NewInt(int64(k.E)).Bytes())}
	case *ecdsa.PublicKey:
		size := (k.Curve.Params().BitSize + 7) / 8
		raw, err := k.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		return map[string]any{"kty": "EC", "kid": kid, "crv": k.Curve.Params().Name,
			"x": enc.EncodeToString(raw[1 : 1+size]), "y": enc.EncodeToString(raw[1+size:])}
	case ed25519.PublicKey:
		return map[string]any{"kty": "OKP", "kid": kid, "crv": "Ed25519", "x": enc.EncodeToString(k)}
	}
	t.Fatalf("jwkOf: unsupported key %T", pub)
	return nil
}

// jwksBody encodes keys as a JWK Set document.
func jwksBody(t *testing.T, keys ...map[string]any) []byte {
	t.Helper()
	if keys == nil {
		keys = []map[string]any{}
	}
	b, err := json.Marshal(map[string]any{"keys": keys})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// jwksHandler serves a replaceable key set and counts requests.
type jwksHandler struct {
	mu      sync.Mutex
	body    []byte
	status  int
	fetches atomic.Int64
}

func (h *jwksHandler) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	h.fetches.Add(1)
	h.mu.Lock()
	body, status := h.body, h.status
	h.mu.Unlock()
	if status == 0 {
		status = http.StatusOK
	}
	w.Header().Set("Content-Type", "application/jwk-set+json")
	w.WriteHeader(status)
	w.Write(body)
}

func (h *jwksHandler) set(body []byte, status int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.body, h.status = body, status
}

// newJWKSServer serves the public halves of keys on a loopback port.
func newJWKSServer(t *testing.T, keys ...testKey) (*httptest.Server, *jwksHandler) {
	t.Helper()
	h := &jwksHandler{}
	h.set(jwksBody(t, jwksOf(t, keys...)...), http.StatusOK)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, h
}

func jwksOf(t *testing.T, keys ...testKey) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, k := range keys {
		out = append(out, jwkOf(t, k.kid, k.public()))
	}
	return out
}

// fakeClock is a settable clock for the parser and the refetch limiter.
type fakeClock = testclock.Clock

func newFakeClock() *fakeClock {
	return testclock.New(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
}

// mustVerifier builds a verifier with the fake clock, closed at cleanup.
func mustVerifier(t *testing.T, cfg Config, clock *fakeClock, client *http.Client) *Verifier {
	t.Helper()
	v, err := newVerifier(context.Background(), cfg, testAudience, client, clock.Now)
	if err != nil {
		t.Fatalf("newVerifier: %v", err)
	}
	t.Cleanup(v.Close)
	return v
}

// pemPublicKey encodes pub as a PKIX "PUBLIC KEY" block.
func pemPublicKey(t testing.TB, pub crypto.PublicKey) []byte {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

// wantReason fails unless err is an *Error with the given reason whose text
// does not contain the token or any of its segments.
func wantReason(t *testing.T, err error, want Reason, token string) {
	t.Helper()
	var authErr *Error
	if !errors.As(err, &authErr) {
		t.Fatalf("error = %v (%T), want *Error with reason %s", err, err, want)
	}
	if authErr.Reason != want {
		t.Fatalf("reason = %s, want %s (error: %v)", authErr.Reason, want, err)
	}
	for _, part := range strings.Split(token, ".") {
		if len(part) >= 8 && strings.Contains(err.Error(), part) {
			t.Fatalf("error text %q contains part of the token", err)
		}
	}
}

// wantVerify verifies token with v and checks the outcome, success when
// want is "" and else an *Error of reason want (see wantReason); what names
// the case. It returns Verify's error.
func wantVerify(t *testing.T, v *Verifier, token string, want Reason, what string) error {
	t.Helper()
	_, err := v.Verify(context.Background(), "Bearer "+token)
	if want == "" {
		if err != nil {
			t.Errorf("%s: Verify = %v, want success", what, err)
		}
		return err
	}
	wantReason(t, err, want, token)
	return err
}
