package auth

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"testing"
)

func TestParseJWKSKeyTypes(t *testing.T) {
	t.Parallel()
	rsaPub := &rsaPrimary().PublicKey
	p256 := newECKey(t, elliptic.P256())
	p384 := newECKey(t, elliptic.P384())
	p521 := newECKey(t, elliptic.P521())
	ed := newEdKey(t)
	set, err := parseJWKS(jwksBody(t,
		jwkOf(t, "rsa", rsaPub),
		jwkOf(t, "p256", p256.Public()),
		jwkOf(t, "p384", p384.Public()),
		jwkOf(t, "p521", p521.Public()),
		jwkOf(t, "ed", ed.Public()),
	))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		kid string
		alg string
		ok  func(any) bool
	}{
		{"rsa", "RS256", func(k any) bool { return k.(*rsa.PublicKey).Equal(rsaPub) }},
		{"rsa", "PS512", func(k any) bool { return k.(*rsa.PublicKey).Equal(rsaPub) }},
		{"p256", "ES256", func(k any) bool { return k.(*ecdsa.PublicKey).Equal(p256.Public()) }},
		{"p384", "ES384", func(k any) bool { return k.(*ecdsa.PublicKey).Equal(p384.Public()) }},
		{"p521", "ES512", func(k any) bool { return k.(*ecdsa.PublicKey).Equal(p521.Public()) }},
		{"ed", "EdDSA", func(k any) bool { return k.(ed25519.PublicKey).Equal(ed.Public()) }},
	} {
		alg, _ := lookupAlgorithm(tt.alg)
		k, found := set.byKID(tt.kid, alg)
		if !found || !tt.ok(k.key) {
			t.Errorf("byKID(%s, %s) = %+v, %v; want the generated key", tt.kid, tt.alg, k, found)
		}
	}
	for _, tt := range []struct{ kid, alg string }{
		{"p256", "ES384"}, {"p384", "ES256"}, {"rsa", "ES256"}, {"ed", "RS256"}, {"p256", "HS256"},
	} {
		alg, _ := lookupAlgorithm(tt.alg)
		if k, found := set.byKID(tt.kid, alg); found {
			t.Errorf("byKID(%s, %s) = %+v; the key type does not fit", tt.kid, tt.alg, k)
		}
	}
}

// Each of these keys must be skipped while the good key next to it is kept.
func TestParseJWKSSkipsUnusableKeys(t *testing.T) {
	t.Parallel()
	enc := base64.RawURLEncoding
	good := jwkOf(t, "good", newEdKey(t).Public())
	rsaJWK := jwkOf(t, "x", &rsaPrimary().PublicKey)
	ecJWK := jwkOf(t, "x", newECKey(t, elliptic.P256()).Public())
	set := func(k map[string]any, kv ...any) map[string]any {
		out := map[string]any{}
		for name, v := range k {
			out[name] = v
		}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i].(string)] = kv[i+1]
		}
		return out
	}
	offCurveX := make([]byte, 32)
	offCurveX[31] = 1
	tests := []struct {
		name string
		key  any
	}{
		{"encryption key", set(rsaJWK, "use", "enc")},
		{"key_ops without verify", set(rsaJWK, "key_ops", []string{"encrypt"})},
		{"symmetric oct key", map[string]any{"kty": "oct", "kid": "x", "k": enc.EncodeToString([]byte("secretsecretsecretsecretsecret12"))}},
		{"unknown kty", map[string]any{"kty": "PQC", "kid": "x"}},
		{"not an object", "just a string"},
		{"alg of another family", set(rsaJWK, "alg", "ES256")},
		{"unsupported alg", set(rsaJWK, "alg", "RSA-OAEP")},
		{"rsa without n", set(rsaJWK, "n", "")},
		{"rsa with bad base64", set(rsaJWK, "n", "!!!")},
		{"rsa exponent 1", set(rsaJWK, "e", "AQ")},
		{"rsa even exponent", set(rsaJWK, "e", "AAE")},
		{"rsa huge exponent", set(rsaJWK, "e", enc.EncodeToString([]byte{1, 0, 0, 0, 1}))},
		{"rsa 1024 bits", set(rsaJWK, "n", enc.EncodeToString(rsaPrimary().N.Bytes()[:128]))},
		{"ec unknown curve", set(ecJWK, "crv", "P-192")},
		{"ec short x", set(ecJWK, "x", enc.EncodeToString(make([]byte, 31)))},
		{"ec point off the curve", set(ecJWK, "x", enc.EncodeToString(offCurveX), "y", enc.EncodeToString(offCurveX))},
		{"okp X25519", map[string]any{"kty": "OKP", "kid": "x", "crv": "X25519", "x": enc.EncodeToString(make([]byte, 32))}},
		{"okp short", map[string]any{"kty": "OKP", "kid": "x", "crv": "Ed25519", "x": enc.EncodeToString(make([]byte, 31))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			body := jwksBodyAny(t, tt.key, good)
			keys, err := parseJWKS(body)
			if err != nil {
				t.Fatalf("parseJWKS failed the whole set: %v", err)
			}
			if len(keys) != 1 || keys[0].kid != "good" {
				t.Fatalf("parseJWKS = %+v, want only the good key", keys)
			}
		})
	}
}

// jwksBodyAny encodes a key set whose members need not be objects.
func jwksBodyAny(t *testing.T, keys ...any) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"keys": keys})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseJWKSHonoursUseAndAlg(t *testing.T) {
	t.Parallel()
	k := jwkOf(t, "k", newECKey(t, elliptic.P256()).Public())
	k["use"] = "sig"
	k["alg"] = "ES256"
	k["key_ops"] = []string{"verify"}
	set, err := parseJWKS(jwksBody(t, k))
	if err != nil {
		t.Fatal(err)
	}
	es256, _ := lookupAlgorithm("ES256")
	if _, ok := set.byKID("k", es256); !ok {
		t.Fatal("key with use=sig, alg=ES256, key_ops=[verify] not found for ES256")
	}

	r := jwkOf(t, "r", &rsaPrimary().PublicKey)
	r["alg"] = "RS512"
	set, err = parseJWKS(jwksBody(t, r))
	if err != nil {
		t.Fatal(err)
	}
	rs256, _ := lookupAlgorithm("RS256")
	rs512, _ := lookupAlgorithm("RS512")
	if _, ok := set.byKID("r", rs256); ok {
		t.Error("key restricted to RS512 was offered for RS256")
	}
	if _, ok := set.byKID("r", rs512); !ok {
		t.Error("key restricted to RS512 was not offered for RS512")
	}
}

func TestParseJWKSRejectsUselessSets(t *testing.T) {
	t.Parallel()
	for _, body := range []string{`{"keys":[]}`, `{}`, `{"keys":[{"kty":"oct","k":"AAAA"}]}`} {
		if _, err := parseJWKS([]byte(body)); !errors.Is(err, errNoUsableKeys) {
			t.Errorf("parseJWKS(%s) = %v, want errNoUsableKeys", body, err)
		}
	}
	for _, body := range []string{``, `[]`, `{"keys":{}}`, `<html>`} {
		if _, err := parseJWKS([]byte(body)); err == nil {
			t.Errorf("parseJWKS(%q) accepted a non-JWKS document", body)
		}
	}
}
