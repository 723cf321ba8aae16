package auth

import (
	"errors"
	"strings"
)

// maxTokenBytes bounds the token before any decoding. Real access tokens
// are a few KiB; common proxies refuse header lines above 8 KiB.
const maxTokenBytes = 16 << 10

var (
	errNotBearer      = errors.New("authorization scheme is not Bearer")
	errEmptyToken     = errors.New("bearer token is empty")
	errTokenTooLong   = errors.New("bearer token is too long")
	errTokenBadSyntax = errors.New("bearer token has characters outside the RFC 6750 b64token syntax")
)

// bearerToken extracts the token from an Authorization header value of the
// form "Bearer <token>" (RFC 6750 §2.1; the scheme is case-insensitive per
// RFC 9110 §11.1).
func bearerToken(header string) (string, *Error) {
	header = strings.TrimSpace(header)
	if header == "" {
		return "", newError(ReasonMissingToken, nil)
	}
	scheme, rest, _ := strings.Cut(header, " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", newError(ReasonMalformed, errNotBearer)
	}
	token := strings.TrimLeft(rest, " ")
	switch {
	case token == "":
		return "", newError(ReasonMalformed, errEmptyToken)
	case len(token) > maxTokenBytes:
		return "", newError(ReasonMalformed, errTokenTooLong)
	case !isB64Token(token):
		return "", newError(ReasonMalformed, errTokenBadSyntax)
	}
	return token, nil
}

// isB64Token reports whether s matches RFC 6750's
// b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=".
func isB64Token(s string) bool {
	body := strings.TrimRight(s, "=")
	if body == "" {
		return false
	}
	for i := 0; i < len(body); i++ {
		if !b64TokenByte[body[i]] {
			return false
		}
	}
	return true
}

// b64TokenByte tells the bytes of a b64token before its padding: one load
// per byte of a token checked on every call.
var b64TokenByte = func() (t [256]bool) {
	for c := range 256 {
		t[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~+/", byte(c)) >= 0
	}
	return t
}()
