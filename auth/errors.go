package auth

// Reason is why a request was refused. The set is closed, so a Reason is safe
// as a Prometheus label value; [Reasons] lists every member.
type Reason string

// The reasons a token can be refused.
const (
	ReasonMissingToken    Reason = "missing_token"    // no Authorization header
	ReasonMalformed       Reason = "malformed"        // the header is not "Bearer <b64token>"
	ReasonDuplicate       Reason = "duplicate"        // more than one Authorization header or credential
	ReasonMalformedToken  Reason = "malformed_token"  // the token is not a parsable JWS with a JWT payload
	ReasonBadSignature    Reason = "bad_signature"    // signature does not verify
	ReasonBadAlgorithm    Reason = "bad_algorithm"    // alg not in the allow-list, unknown or "none"
	ReasonExpired         Reason = "expired"          // exp is past, beyond the leeway
	ReasonNotYetValid     Reason = "not_yet_valid"    // nbf or iat is in the future, beyond the leeway
	ReasonBadIssuer       Reason = "bad_issuer"       // iss is not the configured issuer
	ReasonBadAudience     Reason = "bad_audience"     // aud holds none of the configured audiences
	ReasonUnknownKey      Reason = "unknown_key"      // no configured key fits the token's kid and alg
	ReasonMissingClaim    Reason = "missing_claim"    // exp, iss, aud or the principal claim is absent
	ReasonKeysUnavailable Reason = "keys_unavailable" // no JWKS key set could be fetched yet
)

// reasons is every Reason, in declaration order.
var reasons = []Reason{
	ReasonMissingToken, ReasonMalformed, ReasonDuplicate, ReasonMalformedToken,
	ReasonBadSignature, ReasonBadAlgorithm, ReasonExpired, ReasonNotYetValid, ReasonBadIssuer, ReasonBadAudience,
	ReasonUnknownKey, ReasonMissingClaim, ReasonKeysUnavailable,
}

// Reasons returns every Reason, for example to initialise metric label values.
func Reasons() []Reason {
	return append([]Reason(nil), reasons...)
}

// String returns the reason's label value, such as "expired".
func (r Reason) String() string { return string(r) }

// OAuthError returns the RFC 6750 §3.1 error code for a WWW-Authenticate
// challenge: "invalid_request" when the request itself is malformed (no
// credential, a header that is not "Bearer <b64token>", more than one
// credential) and "invalid_token" for a token that was read and refused,
// including one that is not a JWT at all. RFC 6750 §3.1 also says a
// challenge to a request without any credential (ReasonMissingToken) should
// carry no error code at all; leaving it out is the renderer's choice.
func (r Reason) OAuthError() string {
	switch r {
	case ReasonMissingToken, ReasonMalformed, ReasonDuplicate:
		return "invalid_request"
	default:
		return "invalid_token"
	}
}

// Description returns a short human sentence fragment for the reason, safe to
// send to the caller (for example as RFC 6750 error_description): it never
// contains token content.
func (r Reason) Description() string {
	switch r {
	case ReasonMissingToken:
		return "bearer token required"
	case ReasonMalformed:
		return "the Authorization header is not Bearer followed by a token"
	case ReasonDuplicate:
		return "the request carries more than one Authorization credential"
	case ReasonMalformedToken:
		return "malformed bearer token"
	case ReasonBadSignature:
		return "token signature is invalid"
	case ReasonBadAlgorithm:
		return "token signing algorithm is not accepted"
	case ReasonExpired:
		return "token has expired"
	case ReasonNotYetValid:
		return "token is not valid yet"
	case ReasonBadIssuer:
		return "token issuer is not accepted"
	case ReasonBadAudience:
		return "token audience is not accepted"
	case ReasonUnknownKey:
		return "token signing key is unknown"
	case ReasonMissingClaim:
		return "token is missing a required claim"
	case ReasonKeysUnavailable:
		return "signing keys are temporarily unavailable"
	default:
		return "token rejected"
	}
}

// Error is the error [Verifier.Verify] returns. Err, when set, carries detail
// for operators' logs; like Reason, it never contains the token.
type Error struct {
	Reason Reason
	Err    error
}

// Error returns the reason's description followed by the detail.
func (e *Error) Error() string {
	if e.Err == nil {
		return "auth: " + e.Reason.Description()
	}
	return "auth: " + e.Reason.Description() + ": " + e.Err.Error()
}

// Unwrap returns the detail, so that errors.Is works with the jwt sentinel
// errors such as jwt.ErrTokenExpired.
func (e *Error) Unwrap() error { return e.Err }

func newError(reason Reason, err error) *Error {
	return &Error{Reason: reason, Err: err}
}
