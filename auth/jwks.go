package auth

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
)

const (
	// minRSABits is the smallest RSA modulus accepted (RFC 7518 §3.3
	// requires 2048 bits for RS* and PS*).
	minRSABits = 2048
	// maxRSABits is the largest RSA modulus accepted, the largest issuers
	// use. Checking a signature costs about the square of the modulus
	// size, and a forged signature as long as a far larger modulus still
	// fits in a token, so one such key would let any caller make the
	// gateway spend a large fraction of a second per request.
	maxRSABits = 8192
	// maxJWKSKeys bounds the usable keys of a key set. A token without
	// kid is checked against every key of its family, so the size of the
	// set is the number of signature checks a forged kid-less token costs.
	maxJWKSKeys = 64
)

// jwk is the subset of RFC 7517 §4 and RFC 7518 §6 members this package uses.
type jwk struct {
	Kty    string   `json:"kty"`
	Use    string   `json:"use"`
	KeyOps []string `json:"key_ops"`
	Kid    string   `json:"kid"`
	Alg    string   `json:"alg"`
	N      string   `json:"n"`
	E      string   `json:"e"`
	Crv    string   `json:"crv"`
	X      string   `json:"x"`
	Y      string   `json:"y"`
}

// errNoUsableKeys reports a key set in which no key could be used. It is
// treated as a failed fetch, so that a glitching issuer cannot wipe out the
// keys already cached.
var errNoUsableKeys = errors.New("key set holds no usable signature key")

// errTooManyKeys reports a key set larger than any issuer publishes,
// treated as a failed fetch too.
var errTooManyKeys = fmt.Errorf("key set holds more than %d usable signature keys", maxJWKSKeys)

// parseJWKS decodes a JSON Web Key Set (RFC 7517 §5). Keys for encryption,
// of unknown type or malformed are skipped rather than failing the set: one
// odd key must not disable every other key of the issuer.
func parseJWKS(body []byte) (keySet, error) {
	var doc struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("decode key set: %w", err)
	}
	var set keySet
	for _, raw := range doc.Keys {
		var k jwk
		if json.Unmarshal(raw, &k) != nil {
			continue
		}
		if key, ok := k.verificationKey(); ok {
			if len(set) == maxJWKSKeys {
				return nil, errTooManyKeys
			}
			set = append(set, key)
		}
	}
	if len(set) == 0 {
		return nil, errNoUsableKeys
	}
	return set, nil
}

// verificationKey converts k, reporting false when k is not a usable
// signature-verification key.
func (k jwk) verificationKey() (verificationKey, bool) {
	if k.Use != "" && k.Use != "sig" {
		return verificationKey{}, false
	}
	if k.KeyOps != nil && !slices.Contains(k.KeyOps, "verify") {
		return verificationKey{}, false
	}
	var (
		family keyFamily
		pub    any
		err    error
	)
	switch k.Kty {
	case "RSA":
		family = familyRSA
		pub, err = k.rsaKey()
	case "EC":
		family = familyEC
		pub, err = k.ecKey()
	case "OKP":
		family = familyEd25519
		pub, err = k.okpKey()
	default:
		return verificationKey{}, false
	}
	if err != nil {
		return verificationKey{}, false
	}
	if k.Alg != "" {
		// A key that names an algorithm is usable only with it; a name we do
		// not support, or one of another family, makes the key useless.
		alg, ok := lookupAlgorithm(k.Alg)
		if !ok || alg.family != family {
			return verificationKey{}, false
		}
	}
	return verificationKey{kid: k.Kid, alg: k.Alg, family: family, key: pub}, true
}

func (k jwk) rsaKey() (*rsa.PublicKey, error) {
	n, e, err := decodeBase64URLPair(k.N, k.E)
	if err != nil {
		return nil, err
	}
	if len(e) == 0 || len(e) > 4 {
		return nil, errors.New("rsa exponent out of range")
	}
	exp := new(big.Int).SetBytes(e).Int64()
	// crypto/rsa refuses exponents above 2^31-1 at verification time anyway.
	if exp < 3 || exp%2 == 0 || exp > 1<<31-1 {
		return nil, errors.New("rsa exponent out of range")
	}
	pub := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(exp)}
	if err := checkRSASize(pub); err != nil {
		return nil, err
	}
	return pub, nil
}

// checkRSASize enforces minRSABits and maxRSABits.
func checkRSASize(pub *rsa.PublicKey) error {
	switch bits := pub.N.BitLen(); {
	case bits < minRSABits:
		return fmt.Errorf("RSA key is %d bits; at least %d required", bits, minRSABits)
	case bits > maxRSABits:
		return fmt.Errorf("RSA key is %d bits; at most %d accepted", bits, maxRSABits)
	}
	return nil
}

func (k jwk) ecKey() (*ecdsa.PublicKey, error) {
	var curve elliptic.Curve
	switch k.Crv {
	case "P-256":
		curve = elliptic.P256()
	case "P-384":
		curve = elliptic.P384()
	case "P-521":
		curve = elliptic.P521()
	default:
		return nil, errors.New("unsupported curve")
	}
	size := (curve.Params().BitSize + 7) / 8
	x, y, err := decodeBase64URLPair(k.X, k.Y)
	if err != nil {
		return nil, err
	}
	// RFC 7518 §6.2.1.2 requires full-length coordinates.
	if len(x) != size || len(y) != size {
		return nil, errors.New("ec coordinate has the wrong length")
	}
	point := make([]byte, 0, 1+2*size)
	point = append(point, 4) // SEC 1 uncompressed point
	point = append(point, x...)
	point = append(point, y...)
	// ParseUncompressedPublicKey rejects points off the curve, which closes
	// invalid-curve attacks.
	return ecdsa.ParseUncompressedPublicKey(curve, point)
}

func (k jwk) okpKey() (ed25519.PublicKey, error) {
	if k.Crv != "Ed25519" {
		return nil, errors.New("unsupported curve")
	}
	x, err := decodeBase64URL(k.X)
	if err != nil {
		return nil, err
	}
	if len(x) != ed25519.PublicKeySize {
		return nil, errors.New("ed25519 key has the wrong length")
	}
	return ed25519.PublicKey(x), nil
}

// decodeBase64URLPair decodes the two base64url members of a key (RSA n and
// e, EC x and y).
func decodeBase64URLPair(a, b string) ([]byte, []byte, error) {
	x, err := decodeBase64URL(a)
	if err != nil {
		return nil, nil, err
	}
	y, err := decodeBase64URL(b)
	if err != nil {
		return nil, nil, err
	}
	return x, y, nil
}

// decodeBase64URL decodes unpadded base64url (RFC 7515 §2), tolerating the
// padding some issuers add anyway.
func decodeBase64URL(s string) ([]byte, error) {
	if s == "" {
		return nil, errors.New("empty key member")
	}
	return base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
}
