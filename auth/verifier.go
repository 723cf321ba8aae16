package auth

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/golang-jwt/jwt/v5"

	"github.com/a2agate/gateway/internal/jsonscan"
)

// Verifier checks Bearer tokens for one agent. It is safe for concurrent use.
// Call Close when done to stop the background JWKS refresh.
type Verifier struct {
	parser         *jwt.Parser
	algorithms     []string
	principalClaim string
	// static holds the PEM keys and the HMAC secret, which never change.
	static keySet
	// jwks is nil when no jwks_url is configured.
	jwks *jwksCache
	// accepted remembers tokens already verified; see token_cache.go.
	accepted tokenCache
	now      func() time.Time
	leeway   time.Duration
}

// New builds a Verifier from cfg, applying defaults and validating it first.
// defaultAudience, normally the agent's public URL, is the accepted audience
// when cfg.Audiences is empty. client fetches the JWKS; nil means
// http.DefaultClient. ctx bounds the first JWKS fetch only.
//
// New fails on invalid configuration and on unreadable keys or secrets. It
// does not fail when the first JWKS fetch does: tokens that need a JWKS key
// are then refused with ReasonKeysUnavailable until a fetch succeeds, so
// that a gateway can start while the issuer is briefly down. Once a set was
// loaded it is kept through failed refreshes, and a token whose key is not
// in it is ReasonUnknownKey.
func New(ctx context.Context, cfg Config, defaultAudience string, client *http.Client) (*Verifier, error) {
	return newVerifier(ctx, cfg, defaultAudience, client, nil)
}

// newVerifier is New with an injectable clock for tests; a nil now means the
// real clock.
func newVerifier(ctx context.Context, cfg Config, defaultAudience string, client *http.Client, now func() time.Time) (*Verifier, error) {
	cfg.SetDefaults()
	if len(cfg.Audiences) == 0 {
		if strings.TrimSpace(defaultAudience) == "" {
			return nil, errors.New("auth.audiences is empty and there is no public URL to default to")
		}
		cfg.Audiences = []string{defaultAudience}
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	static, err := loadStaticKeys(cfg)
	if err != nil {
		return nil, err
	}

	opts := []jwt.ParserOption{
		jwt.WithValidMethods(slices.Clone(cfg.Algorithms)),
		jwt.WithIssuer(cfg.Issuer),
		// Since jwt v5.3.0 WithAudience accepts a token whose "aud" holds
		// any one of these; WithAllAudiences would demand all of them.
		jwt.WithAudience(slices.Clone(cfg.Audiences)...),
		jwt.WithExpirationRequired(),
		// iat is optional, but when present it is held to what exp and nbf
		// are: a NumericDate, and not in the future beyond the leeway.
		jwt.WithIssuedAt(),
		jwt.WithLeeway(cfg.leeway()),
		// Strict base64 refuses non-canonical encodings, so one signature
		// has exactly one accepted spelling.
		jwt.WithStrictDecoding(),
	}
	if now != nil {
		opts = append(opts, jwt.WithTimeFunc(now))
	} else {
		now = time.Now
	}

	v := &Verifier{
		parser:         jwt.NewParser(opts...),
		algorithms:     slices.Clone(cfg.Algorithms),
		principalClaim: cfg.PrincipalClaim,
		static:         static,
		now:            now,
		leeway:         cfg.leeway(),
	}
	if cfg.JWKSURL != "" {
		if client == nil {
			client = http.DefaultClient
		}
		v.jwks = newJWKSCache(cfg.JWKSURL, client, cfg.JWKSMinRefetch, now)
		v.jwks.refetch(ctx, true)
		v.jwks.startRefresh(cfg.JWKSRefresh)
	}
	return v, nil
}

// loadStaticKeys reads the HMAC secret and PEM files, reporting every
// problem at once. Without a JWKS to supply keys later, every allowed
// asymmetric algorithm must have a fitting PEM key.
func loadStaticKeys(cfg Config) (keySet, error) {
	var (
		set  keySet
		errs []error
	)
	secret, err := loadHMACSecret(cfg)
	switch {
	case err != nil:
		errs = append(errs, err)
	case secret != nil:
		if err := checkHMACSecretLength(secret, cfg.Algorithms); err != nil {
			errs = append(errs, err)
		}
		set = append(set, verificationKey{family: familyHMAC, key: secret})
	}
	for i, path := range cfg.PublicKeyFiles {
		keys, err := loadPEMKeys(path)
		if err != nil {
			errs = append(errs, fmt.Errorf("auth.public_key_files[%d]: %w", i, err))
			continue
		}
		set = append(set, keys...)
	}
	if len(errs) == 0 && cfg.JWKSURL == "" {
		for _, name := range cfg.Algorithms {
			alg, _ := lookupAlgorithm(name)
			if alg.family != familyHMAC && len(set.fitting(nil, alg)) == 0 {
				errs = append(errs, fmt.Errorf("auth: no key in public_key_files can verify %s", name))
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return set, nil
}

// Verify checks the Authorization header value and returns the caller. On
// failure the error is an *Error; its text never contains the token.
func (v *Verifier) Verify(ctx context.Context, authorizationHeader string) (Principal, error) {
	raw, authErr := bearerToken(authorizationHeader)
	if authErr != nil {
		return Principal{}, authErr
	}
	now := v.now()
	if p, ok := v.accepted.get(raw, now); ok {
		return p, nil
	}
	claims := jwt.MapClaims{}
	token, err := v.parser.ParseWithClaims(raw, claims, func(t *jwt.Token) (any, error) {
		return v.key(ctx, t)
	})
	if err != nil {
		return Principal{}, v.classify(err, token)
	}
	if !payloadIsUTF8(raw) {
		return Principal{}, newError(ReasonMalformedToken, errPayloadNotUTF8)
	}
	if err := numericDatesInRange(claims); err != nil {
		return Principal{}, newError(ReasonMalformedToken, err)
	}
	// WithIssuer has already required iss to equal the configured issuer.
	issuer, _ := claims.GetIssuer()
	subject, _ := claims[v.principalClaim].(string)
	if subject == "" {
		return Principal{}, newError(ReasonMissingClaim,
			fmt.Errorf("%w: %s claim is missing, empty or not a string", jwt.ErrTokenRequiredClaimMissing, v.principalClaim))
	}
	p := Principal{Issuer: issuer, Subject: subject}
	// The parser required exp; it checked both bounds against its own clock.
	accepted := acceptedToken{principal: p, trustedUntil: now.Add(maxCacheAge)}
	if exp, err := claims.GetExpirationTime(); err == nil && exp != nil {
		accepted.validUntil = exp.Add(v.leeway)
		if nbf, err := claims.GetNotBefore(); err == nil && nbf != nil {
			accepted.validFrom = nbf.Add(-v.leeway)
		}
		v.accepted.put(raw, accepted)
	}
	return p, nil
}

// errPayloadNotUTF8 refuses a claims set that is not UTF-8 (RFC 7519
// §7.2). encoding/json reads each invalid byte as U+FFFD, so two subjects
// that differ only in such bytes (Latin-1 names an issuer copied as they
// are) would become one principal, owning each other's tasks. It reads a
// \u escape of a lone UTF-16 surrogate ("\ud800", as JSON.stringify
// writes one) as U+FFFD too, so such an escape is refused alike: it
// stands for no Unicode character (RFC 8259 §8.2).
var errPayloadNotUTF8 = errors.New("the claims are not UTF-8")

// payloadIsUTF8 reports whether the claims segment of a token the parser
// accepted, so well-formed, decodes to UTF-8 and escapes no lone surrogate.
func payloadIsUTF8(raw string) bool {
	_, rest, _ := strings.Cut(raw, ".")
	payload, _, _ := strings.Cut(rest, ".")
	claims, err := base64.RawURLEncoding.DecodeString(payload)
	return err == nil && utf8.Valid(claims) && jsonscan.NextLoneSurrogate(claims, 0) < 0
}

// maxNumericDate is the largest exp, nbf or iat magnitude accepted, the
// last second of year 9999: beyond int64 seconds the jwt library converts
// a date with int64(f), which on amd64 is the smallest int64, so an nbf or
// iat its issuer put in the far future read as the far past and passed.
const maxNumericDate = 253402300799

var errDateOutOfRange = errors.New("an exp, nbf or iat claim is beyond year 9999")

// numericDatesInRange refuses a time claim past maxNumericDate either way.
// The parser has checked that each present one is a number.
func numericDatesInRange(claims jwt.MapClaims) error {
	for _, name := range [...]string{"exp", "nbf", "iat"} {
		if f, ok := claims[name].(float64); ok && math.Abs(f) > maxNumericDate {
			return errDateOutOfRange
		}
	}
	return nil
}

var (
	errCritical   = errors.New("token header lists critical extensions, none of which are supported")
	errKIDType    = errors.New("kid header is not a string")
	errNoKeyFound = errors.New("no configured key fits the token's kid and algorithm")
)

// key is the jwt.Keyfunc. The parser has already checked alg against the
// allow-list. The key is chosen by kid and must be of the type alg needs: an
// HS256 token naming an RSA key's kid finds no HMAC key under that kid, so
// the RSA key is never used as an HMAC secret.
func (v *Verifier) key(ctx context.Context, t *jwt.Token) (any, error) {
	alg, ok := lookupAlgorithm(t.Method.Alg())
	if !ok || !slices.Contains(v.algorithms, alg.name) {
		return nil, newError(ReasonBadAlgorithm, algorithmError(t.Method.Alg()))
	}
	// RFC 7515 §4.1.11: a recipient must refuse extensions it does not
	// understand, and this verifier understands none.
	if _, ok := t.Header["crit"]; ok {
		return nil, newError(ReasonMalformedToken, errCritical)
	}
	kidValue, hasKID := t.Header["kid"]
	kid, ok := kidValue.(string)
	if hasKID && !ok {
		return nil, newError(ReasonMalformedToken, errKIDType)
	}

	// JWKS keys are asymmetric only (symmetric "oct" keys are never taken
	// from the network), so HMAC tokens never trigger a fetch.
	useJWKS := v.jwks != nil && alg.family != familyHMAC
	if hasKID && useJWKS {
		if k, ok := v.jwks.current().byKID(kid, alg); ok {
			return k.key, nil
		}
		// The issuer may have rotated in a new key since the last fetch.
		v.jwks.refetch(ctx, false)
		if k, ok := v.jwks.current().byKID(kid, alg); ok {
			return k.key, nil
		}
	}

	// PEM keys and the HMAC secret carry no kid, so they serve any token of
	// their algorithm family.
	keys := v.static.fitting(nil, alg)
	if !hasKID && useJWKS {
		keys = v.jwks.current().fitting(keys, alg)
		if len(keys) == 0 {
			v.jwks.refetch(ctx, false)
			keys = v.jwks.current().fitting(keys, alg)
		}
	}
	switch len(keys) {
	case 0:
		if useJWKS {
			if err := v.jwks.lastError(); err != nil {
				// Only a gateway that never had a key set cannot tell a
				// forged kid from a rotated one. With a set held, a kid
				// outside it is the token's fault: answering 503 would let
				// any forged token pass for an outage.
				if !v.jwks.loaded() {
					return nil, newError(ReasonKeysUnavailable, err)
				}
				return nil, newError(ReasonUnknownKey, fmt.Errorf("%w; refreshing the key set failed: %w", errNoKeyFound, err))
			}
		}
		return nil, newError(ReasonUnknownKey, errNoKeyFound)
	case 1:
		return keys[0], nil
	default:
		return jwt.VerificationKeySet{Keys: keys}, nil
	}
}

// Close stops the background JWKS refresh and waits for any fetch in
// progress. Verify keeps working with the keys already fetched. Close may be
// called more than once.
func (v *Verifier) Close() {
	if v.jwks != nil {
		v.jwks.close()
	}
}
