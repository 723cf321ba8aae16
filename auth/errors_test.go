package auth

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"
)

func TestReasonsAreAClosedLabelSet(t *testing.T) {
	t.Parallel()
	label := regexp.MustCompile(`^[a-z][a-z_]*$`)
	seen := map[Reason]bool{}
	descriptions := map[string]Reason{}
	for _, r := range Reasons() {
		if !label.MatchString(string(r)) {
			t.Errorf("reason %q is not a snake_case label value", r)
		}
		if seen[r] {
			t.Errorf("reason %q listed twice", r)
		}
		seen[r] = true
		d := r.Description()
		if d == "" || d == Reason("unlisted").Description() {
			t.Errorf("reason %q has no description of its own", r)
		}
		if other, dup := descriptions[d]; dup {
			t.Errorf("reasons %q and %q share the description %q", r, other, d)
		}
		descriptions[d] = r
	}
	if len(seen) != 13 {
		t.Errorf("Reasons() has %d members, want 13", len(seen))
	}
	Reasons()[0] = "mutated"
	if Reasons()[0] != ReasonMissingToken {
		t.Error("Reasons() exposes its backing array")
	}
}

func TestReasonOAuthError(t *testing.T) {
	t.Parallel()
	for _, r := range Reasons() {
		// RFC 6750 §3.1: invalid_request is a malformed request, including
		// one that repeats the credential; a token that was read and is
		// not a JWT is an invalid_token like any other refused token.
		want := "invalid_token"
		if r == ReasonMissingToken || r == ReasonMalformed || r == ReasonDuplicate {
			want = "invalid_request"
		}
		if got := r.OAuthError(); got != want {
			t.Errorf("%s.OAuthError() = %q, want %q", r, got, want)
		}
	}
}

func TestErrorWrapsDetail(t *testing.T) {
	t.Parallel()
	detail := errors.Join(jwt.ErrTokenExpired)
	err := error(&Error{Reason: ReasonExpired, Err: detail})
	if !errors.Is(err, jwt.ErrTokenExpired) {
		t.Error("errors.Is(err, jwt.ErrTokenExpired) = false")
	}
	if got, want := err.Error(), "auth: token has expired: token is expired"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	bare := &Error{Reason: ReasonMissingToken}
	if got, want := bare.Error(), "auth: bearer token required"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if strings.ToLower(bare.Error()) != bare.Error() {
		t.Errorf("Error() = %q is not lower-case", bare.Error())
	}
}

// RFC 6750 §3: error_description is %x20-21 / %x23-5B / %x5D-7E, so every
// description can go into the challenge as it is, without escaping.
func TestReasonDescriptionsFitTheChallenge(t *testing.T) {
	t.Parallel()
	for _, r := range Reasons() {
		for _, c := range []byte(r.Description()) {
			if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
				t.Errorf("%s: description %q has byte %#02x, not allowed in error_description", r, r.Description(), c)
			}
		}
	}
}
