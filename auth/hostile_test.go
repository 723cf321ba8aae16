package auth

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"
)

// A JWKS URL given as https must not be talked down to plain http by a
// redirect: whoever sits on the network path would then serve the keys
// tokens are checked with. A redirect that stays on https is followed.
func TestJWKSRedirectToPlainHTTPIsRefused(t *testing.T) {
	t.Parallel()
	attacker := testKey{kid: "k", method: jwt.SigningMethodRS256, private: rsaOther()}
	plain, _ := newJWKSServer(t, attacker)
	tlsKeys := httptest.NewTLSServer(http.RedirectHandler(plain.URL, http.StatusFound))
	t.Cleanup(tlsKeys.Close)

	v, clock := jwksVerifier(t, tlsKeys, "RS256")
	forged := sign(t, attacker, validClaims(clock.Now()))
	err := wantVerify(t, v, forged, ReasonKeysUnavailable, "redirected to http")
	if !strings.Contains(err.Error(), "https") {
		t.Fatalf("error %q does not say why the redirect was refused", err)
	}

	issuer := testKey{kid: "k", method: jwt.SigningMethodRS256, private: rsaPrimary()}
	h := &jwksHandler{}
	h.set(jwksBody(t, jwksOf(t, issuer)...), http.StatusOK)
	mux := http.NewServeMux()
	mux.Handle("/moved", h)
	mux.Handle("/", http.RedirectHandler("/moved", http.StatusMovedPermanently))
	secure := httptest.NewTLSServer(mux)
	t.Cleanup(secure.Close)
	v, clock = jwksVerifier(t, secure, "RS256")
	if _, err := v.Verify(context.Background(), "Bearer "+sign(t, issuer, validClaims(clock.Now()))); err != nil {
		t.Fatalf("a redirect within https: %v", err)
	}
}

// oddModulusJWK is an RSA JWK whose modulus has bits bits: random, as
// only its size is under test.
func oddModulusJWK(t *testing.T, kid string, bits int) map[string]any {
	t.Helper()
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), uint(bits)))
	if err != nil {
		t.Fatal(err)
	}
	n.SetBit(n, bits-1, 1).SetBit(n, 0, 1)
	enc := base64.RawURLEncoding
	return map[string]any{"kty": "RSA", "kid": kid, "n": enc.EncodeToString(n.Bytes()), "e": enc.EncodeToString(big.NewInt(65537).Bytes())}
}

// An RSA key far larger than any issuer uses makes every signature checked
// with it costly, and a forged signature of its size still fits in a
// token: such keys are skipped, from a JWKS as from a PEM file.
func TestRSAKeysTooLargeAreRefused(t *testing.T) {
	t.Parallel()
	good := jwkOf(t, "good", rsaPrimary().Public())
	set, err := parseJWKS(jwksBody(t, oddModulusJWK(t, "huge", maxRSABits+8), oddModulusJWK(t, "largest", maxRSABits), good))
	if err != nil {
		t.Fatal(err)
	}
	rs256, _ := lookupAlgorithm("RS256")
	if _, found := set.byKID("huge", rs256); found {
		t.Errorf("a %d-bit RSA key was kept", maxRSABits+8)
	}
	for _, kid := range []string{"largest", "good"} {
		if _, found := set.byKID(kid, rs256); !found {
			t.Errorf("key %s was skipped", kid)
		}
	}

	n, _ := new(big.Int).SetString(strings.Repeat("f", (maxRSABits+8)/4), 16)
	if _, err := staticPublicKey(&rsa.PublicKey{N: n, E: 65537}); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Fatalf("staticPublicKey(%d-bit RSA key) = %v, want a refusal naming the bound", maxRSABits+8, err)
	}
}

// A token without kid is checked against every key of its family: a key
// set of thousands would make each forged kid-less token cost thousands of
// signature checks. Such a set is refused as a failed fetch.
func TestJWKSWithTooManyKeysIsRefused(t *testing.T) {
	t.Parallel()
	keys := make([]map[string]any, maxJWKSKeys+1)
	for i := range keys {
		keys[i] = jwkOf(t, "ed-"+string(rune('a'+i%26))+big.NewInt(int64(i)).String(), newEdKey(t).Public())
	}
	if _, err := parseJWKS(jwksBody(t, keys...)); err == nil || !strings.Contains(err.Error(), "keys") {
		t.Fatalf("parseJWKS(%d keys) = %v, want a refusal", len(keys), err)
	}
	if _, err := parseJWKS(jwksBody(t, keys[:maxJWKSKeys]...)); err != nil {
		t.Fatalf("parseJWKS(%d keys) = %v", maxJWKSKeys, err)
	}
}
