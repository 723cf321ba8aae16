package auth

import (
	"crypto/elliptic"
)

// keyFamily is the kind of key an algorithm verifies with. The key type is
// derived from the configured allow-list and from the key material, never
// from the token, which is what defeats algorithm-confusion attacks.
type keyFamily int

const (
	familyHMAC keyFamily = iota + 1
	familyRSA
	familyEC
	familyEd25519
)

// algorithm describes one JWS algorithm this package can verify (RFC 7518 §3,
// RFC 8037 §3.1 for EdDSA).
type algorithm struct {
	name   string
	family keyFamily
	// curve is the only curve an ECDSA algorithm may be used with
	// (RFC 7518 §3.4); nil for other families.
	curve elliptic.Curve
	// minHMACKeyBytes is the smallest HMAC secret allowed: at least the hash
	// output size (RFC 7518 §3.2).
	minHMACKeyBytes int
}

// algorithms is every algorithm that may appear in Config.Algorithms, in the
// order used by error messages.
var algorithms = []algorithm{
	{name: "HS256", family: familyHMAC, minHMACKeyBytes: 32},
	{name: "HS384", family: familyHMAC, minHMACKeyBytes: 48},
	{name: "HS512", family: familyHMAC, minHMACKeyBytes: 64},
	{name: "RS256", family: familyRSA},
	{name: "RS384", family: familyRSA},
	{name: "RS512", family: familyRSA},
	{name: "PS256", family: familyRSA},
	{name: "PS384", family: familyRSA},
	{name: "PS512", family: familyRSA},
	{name: "ES256", family: familyEC, curve: elliptic.P256()},
	{name: "ES384", family: familyEC, curve: elliptic.P384()},
	{name: "ES512", family: familyEC, curve: elliptic.P521()},
	{name: "EdDSA", family: familyEd25519},
}

// lookupAlgorithm returns the algorithm with the exact (case-sensitive, as in
// RFC 7515 §4.1.1) name.
func lookupAlgorithm(name string) (algorithm, bool) {
	for _, a := range algorithms {
		if a.name == name {
			return a, true
		}
	}
	return algorithm{}, false
}

// algorithmNames lists the supported names for error messages.
func algorithmNames() []string {
	names := make([]string, len(algorithms))
	for i, a := range algorithms {
		names[i] = a.name
	}
	return names
}
