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
	errManyHeaders    = errors.New("the request has more than one Authorization header")
	errJoinedHeader   = errors.New("the Authorization header holds a comma-separated list of credentials")
	errEmptyToken     = errors.New("bearer token is empty")
	errTokenTooLong   = errors.New("bearer token is too long")
	errTokenBadSyntax = errors.New("bearer token has characters outside the RFC 6750 b64token syntax")
)

// Credential returns the one Authorization header value of a request, given
// all of them (http.Header's slice for the key). A request with several is
// refused (ReasonDuplicate): the gateway would verify one while the backend
// might act on another. An absent header yields "", which Verify refuses as
// ReasonMissingToken.
func Credential(values []string) (string, error) {
	switch len(values) {
	case 0:
		return "", nil
	case 1:
		return values[0], nil
	default:
		return "", newError(ReasonDuplicate, errManyHeaders)
	}
}

// bearerToken extracts the token from an Authorization header value of the
// form "Bearer <token>" (RFC 6750 §2.1; the scheme is case-insensitive per
// RFC 9110 §11.1).
func bearerToken(header string) (string, *Error) {
	header = strings.TrimSpace(header)
	if header == "" {
		return "", newError(ReasonMissingToken, nil)
	}
	// Authorization is not a list header (RFC 9110 §11.6.2), and no byte
	// of a b64token is a comma: a comma means two header lines were joined
	// into one, by the client or a proxy on the way.
	if strings.IndexByte(header, ',') >= 0 {
		return "", newError(ReasonDuplicate, errJoinedHeader)
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
		// Well-formed as a request, but no token the issuer mints.
		return "", newError(ReasonMalformedToken, errTokenTooLong)
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
