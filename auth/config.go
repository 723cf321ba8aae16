package auth

import (
	"cmp"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Defaults applied by [Config.SetDefaults].
const (
	DefaultJWKSRefresh    = 10 * time.Minute
	DefaultJWKSMinRefetch = 30 * time.Second
	DefaultPrincipalClaim = "sub"
	DefaultLeeway         = 30 * time.Second
)

// Upper bounds checked by [Config.Validate]: past them a value is a typo
// that turns a check off, not a tuning.
const (
	// MaxLeeway bounds the clock skew tolerated: a leeway of days keeps an
	// expired token valid for days, and clocks are kept within seconds.
	MaxLeeway = 5 * time.Minute
	// MaxJWKSMinRefetch bounds the refetch rate limit: a key the issuer
	// rotates in is refused until a refetch is allowed again.
	MaxJWKSMinRefetch = 10 * time.Minute
	// MaxJWKSRefresh bounds the background refresh: a key the issuer
	// withdraws stays trusted until the next one.
	MaxJWKSRefresh = 24 * time.Hour
)

// Config is the auth section of the gateway configuration for one published
// agent. Secrets are never written inline: they are read from a file or an
// environment variable named here.
type Config struct {
	// Issuer is the exact value the token's "iss" claim must have, for
	// example "https://login.example.com/realms/agents". Required.
	Issuer string `yaml:"issuer"`

	// Audiences lists the values accepted in the token's "aud" claim; a token
	// is accepted when its "aud" contains any one of them. Defaults to the
	// agent's public URL.
	Audiences []string `yaml:"audiences"`

	// Algorithms is the explicit allow-list of JWS algorithms, for example
	// [RS256, ES256]. The token's own "alg" header never widens it. Supported:
	// HS256, HS384, HS512, RS256, RS384, RS512, PS256, PS384, PS512, ES256,
	// ES384, ES512 and EdDSA (Ed25519). "none" is always refused. HS*
	// algorithms need an HMAC secret; the others need jwks_url or
	// public_key_files. Required.
	Algorithms []string `yaml:"algorithms"`

	// JWKSURL is the http(s) URL of the issuer's JSON Web Key Set, for
	// example "https://login.example.com/.well-known/jwks.json". Use https
	// unless the endpoint is reachable only over a trusted network: whoever
	// can alter this response can mint tokens.
	JWKSURL string `yaml:"jwks_url"`

	// JWKSRefresh is how often the key set is fetched again in the
	// background. Defaults to 10m.
	JWKSRefresh time.Duration `yaml:"jwks_refresh"`

	// JWKSMinRefetch is the shortest interval between two fetches triggered
	// by tokens whose "kid" is not in the cached set, so that a flood of
	// forged key ids cannot hammer the issuer. Defaults to 30s.
	JWKSMinRefetch time.Duration `yaml:"jwks_min_refetch"`

	// PublicKeyFiles are paths to PEM files holding RSA (2048 to 8192 bits),
	// ECDSA (P-256, P-384, P-521) or Ed25519 public keys, as "PUBLIC KEY",
	// "RSA PUBLIC KEY" or "CERTIFICATE" blocks. A file may hold several
	// blocks. Certificates are only a container for their key: their validity
	// period and chain are not checked.
	PublicKeyFiles []string `yaml:"public_key_files"`

	// HMACSecretFile is the path of a file holding the shared HMAC secret;
	// trailing line breaks are ignored. The secret must be at least as long
	// as the hash: 32 bytes for HS256, 48 for HS384, 64 for HS512.
	HMACSecretFile string `yaml:"hmac_secret_file"`

	// HMACSecretEnv is the name of an environment variable holding the
	// shared HMAC secret, as an alternative to HMACSecretFile.
	HMACSecretEnv string `yaml:"hmac_secret_env"`

	// PrincipalClaim is the top-level string claim that identifies the
	// caller, for example "sub", "client_id" or "email". Defaults to "sub".
	PrincipalClaim string `yaml:"principal_claim"`

	// Leeway is the clock skew tolerated when checking "exp", "nbf" and
	// "iat". Defaults to 30s; a pointer, so that 0s (no skew) can be set.
	Leeway *time.Duration `yaml:"leeway"`
}

// SetDefaults fills unset fields with their defaults. Audiences is defaulted
// by [New], which knows the agent's public URL.
func (c *Config) SetDefaults() {
	c.JWKSRefresh = cmp.Or(c.JWKSRefresh, DefaultJWKSRefresh)
	c.JWKSMinRefetch = cmp.Or(c.JWKSMinRefetch, DefaultJWKSMinRefetch)
	c.PrincipalClaim = cmp.Or(c.PrincipalClaim, DefaultPrincipalClaim)
	if c.Leeway == nil {
		c.Leeway = new(DefaultLeeway)
	}
}

// leeway is Leeway, 0 when unset.
func (c Config) leeway() time.Duration {
	if c.Leeway == nil {
		return 0
	}
	return *c.Leeway
}

// hasHMACSecret reports whether an HMAC secret source is configured.
func (c Config) hasHMACSecret() bool {
	return c.HMACSecretFile != "" || c.HMACSecretEnv != ""
}

// hasPublicKeys reports whether an asymmetric key source is configured.
func (c Config) hasPublicKeys() bool {
	return c.JWKSURL != "" || len(c.PublicKeyFiles) > 0
}

// Validate reports every problem in c at once, joined with [errors.Join]. It
// reads no files or environment variables: [New] does, so that example
// configurations can be validated where their secrets are not mounted. Call
// it after [Config.SetDefaults].
func (c Config) Validate() error {
	var errs []error
	add := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf(format, args...))
	}

	if strings.TrimSpace(c.Issuer) == "" {
		add("auth.issuer is required")
	}
	for i, aud := range c.Audiences {
		if strings.TrimSpace(aud) == "" {
			add("auth.audiences[%d] is empty", i)
		}
	}

	errs = append(errs, c.validateAlgorithms()...)

	if !c.hasHMACSecret() && !c.hasPublicKeys() {
		add("auth needs a key source: set jwks_url, public_key_files, hmac_secret_file or hmac_secret_env")
	}
	if c.HMACSecretFile != "" && c.HMACSecretEnv != "" {
		add("auth.hmac_secret_file and auth.hmac_secret_env are mutually exclusive")
	}
	if c.JWKSURL != "" {
		if err := validateJWKSURL(c.JWKSURL); err != nil {
			add("auth.jwks_url: %w", err)
		}
	}
	for i, path := range c.PublicKeyFiles {
		if strings.TrimSpace(path) == "" {
			add("auth.public_key_files[%d] is empty", i)
		}
	}

	for _, d := range []struct {
		name     string
		v, limit time.Duration
		why      string
	}{
		{"jwks_refresh", c.JWKSRefresh, MaxJWKSRefresh, "a key the issuer withdraws stays trusted until the next refresh"},
		{"jwks_min_refetch", c.JWKSMinRefetch, MaxJWKSMinRefetch, "a key the issuer rotates in is refused until a refetch is allowed"},
		{"leeway", c.leeway(), MaxLeeway, "an expired token stays valid for the leeway"},
	} {
		switch {
		case d.v < 0:
			add("auth.%s must not be negative", d.name)
		case d.v > d.limit:
			add("auth.%s (%s) must be at most %s: %s", d.name, d.v, d.limit, d.why)
		}
	}
	if strings.TrimSpace(c.PrincipalClaim) == "" {
		add("auth.principal_claim is required")
	}
	return errors.Join(errs...)
}

// validateAlgorithms checks the allow-list on its own and against the
// configured key sources: an algorithm without a key source can never verify
// anything, and a key source without an algorithm is almost always a typo.
func (c Config) validateAlgorithms() []error {
	var errs []error
	if len(c.Algorithms) == 0 {
		errs = append(errs, errors.New("auth.algorithms is required, for example [RS256]"))
	}
	var wantHMAC, wantPublic bool
	for i, name := range c.Algorithms {
		if strings.EqualFold(name, "none") {
			errs = append(errs, fmt.Errorf("auth.algorithms[%d]: %q is never allowed: unsigned tokens prove nothing", i, name))
			continue
		}
		alg, ok := lookupAlgorithm(name)
		if !ok {
			errs = append(errs, fmt.Errorf("auth.algorithms[%d]: unknown algorithm %q (supported: %s)",
				i, name, strings.Join(algorithmNames(), ", ")))
			continue
		}
		if slices.Index(c.Algorithms, name) < i {
			errs = append(errs, fmt.Errorf("auth.algorithms[%d]: %s is listed twice", i, name))
			continue
		}
		if alg.family == familyHMAC {
			wantHMAC = true
			if !c.hasHMACSecret() {
				errs = append(errs, fmt.Errorf("auth.algorithms[%d]: %s needs hmac_secret_file or hmac_secret_env", i, name))
			}
		} else {
			wantPublic = true
			if !c.hasPublicKeys() {
				errs = append(errs, fmt.Errorf("auth.algorithms[%d]: %s needs jwks_url or public_key_files", i, name))
			}
		}
	}
	if c.hasHMACSecret() && !wantHMAC {
		errs = append(errs, errors.New("auth: an HMAC secret is configured but auth.algorithms lists no HS256, HS384 or HS512"))
	}
	if c.hasPublicKeys() && !wantPublic {
		errs = append(errs, errors.New("auth: jwks_url or public_key_files is configured but auth.algorithms lists no RS*, PS*, ES* or EdDSA algorithm"))
	}
	return errs
}

// validateJWKSURL accepts absolute http and https URLs with a host.
func validateJWKSURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return errors.New("not a valid URL")
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		return fmt.Errorf("scheme must be https or http, not %q", u.Scheme)
	}
	if u.Host == "" {
		return errors.New("URL has no host")
	}
	if u.User != nil {
		// Credentials in the URL would end up in error messages and logs.
		return errors.New("URL must not contain credentials")
	}
	return nil
}
