package auth

import "strings"

// Principal identifies the verified caller.
type Principal struct {
	// Issuer is the token's "iss" claim, which equals Config.Issuer.
	Issuer string
	// Subject is the value of the configured principal claim ("sub" by default).
	Subject string
}

// principalEscaper escapes the separator and the escape character itself, so
// that no two distinct principals share a String ("a|b" + "c" versus
// "a" + "b|c").
var principalEscaper = strings.NewReplacer(`\`, `\\`, `|`, `\|`)

// String returns the stable key "issuer|subject", with any backslash or "|"
// inside either part escaped by a backslash. It suits rate limiting and
// quotas, not metric labels: subjects are unbounded.
func (p Principal) String() string {
	return principalEscaper.Replace(p.Issuer) + "|" + principalEscaper.Replace(p.Subject)
}
