package proxy

import (
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/a2agate/gateway/auth"
	"github.com/a2agate/gateway/binding/rest"
	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/normalize"
)

// checkAuth checks the caller's token when the agent requires one and
// records the caller's principal on the call; it returns the refusal of a
// caller without a valid token, whose headers it sets in h, and nil
// otherwise. It looks at the headers alone, so that a caller is refused
// before anything of its request is read or judged.
//
// A request with more than one Authorization header is refused: the
// gateway would check one while the backend, given all of them with
// forward_authorization, may act on another. So the one header a request
// that passes here carries is the token just verified, and it is all that
// setHeaders forwards.
func (a *Agent) checkAuth(r *http.Request, h http.Header, c *call) *refusal {
	if a.verifier == nil {
		return nil
	}
	owner, refused := a.checkCaller(r, h)
	c.owner = owner
	return refused
}

// refuse answers a caller checkAuth refused: 401 with a WWW-Authenticate
// challenge (RFC 6750 §3) and a JSON-RPC error in its dialect; the token
// itself is never logged.
func (a *Agent) refuse(w http.ResponseWriter, c *call, refused *refusal) {
	out := a.errorResponse(c, refused.err)
	c.bytes += len(out)
	c.reason = string(refused.reason)
	writeJSON(w, refused.status, out)
}

// refusal is a caller refused by checkCaller: the HTTP status, the error
// and why.
type refusal struct {
	status int
	err    *normalize.Error
	reason auth.Reason
}

// checkCaller verifies r's token: the caller's principal, or its refusal,
// logged and counted, whose headers (WWW-Authenticate, Retry-After) it
// sets in h. The agent requires a token (a.verifier is set).
func (a *Agent) checkCaller(r *http.Request, h http.Header) (string, *refusal) {
	header, err := auth.Credential(r.Header["Authorization"])
	if err == nil {
		var p auth.Principal
		if p, err = a.verifier.Verify(r.Context(), header); err == nil {
			return p.String(), nil
		}
	}
	reason := auth.ReasonMalformedToken
	var ae *auth.Error
	if errors.As(err, &ae) {
		reason = ae.Reason
	}
	// The detail never holds the token (package auth sees to it) and tells
	// operators what the reason alone cannot, such as a JWKS that cannot be
	// refreshed while tokens naming a new kid are refused.
	a.log.Warn("authentication failed", "reason", string(reason), "error", err.Error())
	a.metrics.authFailure(a.cfg.Name, string(reason))
	f := &refusal{status: http.StatusUnauthorized, reason: reason,
		err: &normalize.Error{Kind: dialect.ErrUnauthenticated, Message: "authentication required: " + reason.Description(), Err: err}}
	if reason == auth.ReasonKeysUnavailable {
		// The gateway's fault, not the caller's: do not send it to log in again.
		f.status = http.StatusServiceUnavailable
		f.err.Kind = dialect.ErrInternal
		f.err.Message = "the gateway cannot check tokens right now: its signing keys are unavailable"
		if a.cfg.Auth != nil && a.cfg.Auth.JWKSMinRefetch > 0 {
			// No sooner will a token make the gateway fetch the keys again.
			h.Set("Retry-After", strconv.Itoa(int(math.Ceil(a.cfg.Auth.JWKSMinRefetch.Seconds()))))
		}
	} else {
		// Only with a 401: a challenge naming invalid_token on a 503 would
		// tell the client to drop a token nobody could check.
		h.Set("WWW-Authenticate", challenge(a.cfg.PublicURL, reason))
	}
	return "", f
}

// refuseREST is the REST front end's Options.Authenticate: a caller whose
// request it would refuse is refused here first if its token is not valid.
func (a *Agent) refuseREST(r *http.Request) *rest.Refusal {
	h := http.Header{}
	if _, f := a.checkCaller(r, h); f != nil {
		return &rest.Refusal{Status: f.status, Kind: f.err.Kind, Message: f.err.Message, Header: h}
	}
	return nil
}

// RefuseUnauthenticated is the gRPC front end's Options.Authenticate: it
// answers r, a gRPC call's request without its body, as ServeRPC answers
// that call's caller when it refuses its token (the check logged and
// counted), and writes nothing for a caller it takes or when the agent
// has no auth. The gRPC front end makes its calls in 1.0 with id 1.
func (a *Agent) RefuseUnauthenticated(w http.ResponseWriter, r *http.Request) {
	if a.verifier == nil {
		return
	}
	if _, f := a.checkCaller(r, w.Header()); f != nil {
		writeJSON(w, f.status, errorResponse(dialect.V10, grpcRequestID, f.err))
	}
}

// grpcRequestID is the id of the gRPC front end's JSON-RPC requests.
var grpcRequestID = []byte("1")

// challenge builds the WWW-Authenticate value. A missing token gets a bare
// challenge, as RFC 6750 §3.1 asks.
func challenge(realm string, reason auth.Reason) string {
	var b strings.Builder
	b.WriteString(`Bearer realm="`)
	b.WriteString(strings.ReplaceAll(realm, `"`, ""))
	b.WriteString(`"`)
	if reason != auth.ReasonMissingToken {
		b.WriteString(`, error="`)
		b.WriteString(reason.OAuthError())
		b.WriteString(`", error_description="`)
		b.WriteString(strings.ReplaceAll(reason.Description(), `"`, "'"))
		b.WriteString(`"`)
	}
	return b.String()
}
