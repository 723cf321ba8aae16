package auth

import (
	"errors"
	"fmt"
	"slices"

	"github.com/golang-jwt/jwt/v5"
)

// claimReasons maps jwt claim-validation errors to reasons. The library joins
// every failed check into one error; the first entry that matches decides,
// so a token from the wrong issuer is reported as such even if it has also
// expired.
var claimReasons = []struct {
	sentinel error
	reason   Reason
}{
	{jwt.ErrInvalidType, ReasonMalformedToken},
	{jwt.ErrTokenInvalidIssuer, ReasonBadIssuer},
	{jwt.ErrTokenInvalidAudience, ReasonBadAudience},
	{jwt.ErrTokenRequiredClaimMissing, ReasonMissingClaim},
	{jwt.ErrTokenExpired, ReasonExpired},
	{jwt.ErrTokenNotValidYet, ReasonNotYetValid},
	{jwt.ErrTokenUsedBeforeIssued, ReasonNotYetValid},
}

// classify turns a jwt parse error into an *Error. Library errors are passed
// on as detail only where their text is fixed by the library; parse errors
// can quote bytes of the token, so for those only the sentinel is kept.
func (v *Verifier) classify(err error, token *jwt.Token) *Error {
	var authErr *Error
	if errors.As(err, &authErr) {
		return authErr // from our Keyfunc
	}
	if errors.Is(err, jwt.ErrTokenMalformed) || token == nil {
		return newError(ReasonMalformedToken, jwt.ErrTokenMalformed)
	}
	// The library reports an algorithm outside the allow-list as an invalid
	// signature and an unregistered one as unverifiable, so look at the
	// header ourselves.
	if alg, _ := token.Header["alg"].(string); !slices.Contains(v.algorithms, alg) {
		return newError(ReasonBadAlgorithm, algorithmError(alg))
	}
	if errors.Is(err, jwt.ErrTokenSignatureInvalid) {
		return newError(ReasonBadSignature, err)
	}
	for _, c := range claimReasons {
		if errors.Is(err, c.sentinel) {
			return newError(c.reason, err)
		}
	}
	return newError(ReasonMalformedToken, jwt.ErrTokenUnverifiable)
}

// algorithmError names the refused algorithm only when it is one we know, so
// that attacker-chosen header text never reaches logs.
func algorithmError(alg string) error {
	if _, known := lookupAlgorithm(alg); known || alg == "none" {
		return fmt.Errorf("algorithm %s is not in the allow-list", alg)
	}
	return errors.New("algorithm is missing or unsupported")
}
