package auth

import (
	"crypto/ecdsa"

	"github.com/golang-jwt/jwt/v5"
)

// verificationKey is one key the verifier may check signatures with.
type verificationKey struct {
	// kid is the JWK "kid"; empty for PEM keys and the HMAC secret, which
	// carry no key id and therefore serve tokens with any kid.
	kid string
	// alg restricts the key to one algorithm when its JWK says so ("alg");
	// empty means any algorithm of the family.
	alg    string
	family keyFamily
	// key is *rsa.PublicKey, *ecdsa.PublicKey, ed25519.PublicKey or, for
	// HMAC, []byte.
	key any
}

// fits reports whether k may verify a signature made with alg. The key's own
// type decides, so an RSA public key is never handed to the HMAC verifier.
func (k verificationKey) fits(alg algorithm) bool {
	if k.family != alg.family {
		return false
	}
	if k.alg != "" && k.alg != alg.name {
		return false
	}
	if alg.family == familyEC {
		pub, ok := k.key.(*ecdsa.PublicKey)
		return ok && pub.Curve.Params().Name == alg.curve.Params().Name
	}
	return true
}

// keySet is an immutable list of keys; a refresh replaces the whole set.
type keySet []verificationKey

// byKID returns the key with the given kid that fits alg.
func (s keySet) byKID(kid string, alg algorithm) (verificationKey, bool) {
	for _, k := range s {
		if k.kid == kid && k.fits(alg) {
			return k, true
		}
	}
	return verificationKey{}, false
}

// fitting appends to dst every key in s that fits alg.
func (s keySet) fitting(dst []jwt.VerificationKey, alg algorithm) []jwt.VerificationKey {
	for _, k := range s {
		if k.fits(alg) {
			dst = append(dst, k.key)
		}
	}
	return dst
}
