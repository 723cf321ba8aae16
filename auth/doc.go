// Package auth verifies the Bearer JSON Web Tokens that callers present to one
// published agent, using github.com/golang-jwt/jwt/v5.
//
// A [Verifier] is built once at startup from a [Config]. It checks the token's
// signature against keys from a JWKS endpoint, PEM public key files or an
// HMAC secret, then checks the algorithm against an explicit allow-list and
// the issuer, audience, expiry and not-before claims. On success it returns
// the caller's [Principal]; on failure an [*Error] whose [Reason] is a closed
// set suitable as a metric label and for the RFC 6750 WWW-Authenticate error.
//
// Package auth imports nothing from this module. It never writes HTTP
// responses and never logs: package proxy renders its errors in the caller's
// dialect and decides what to record. Error strings never contain the token.
package auth
