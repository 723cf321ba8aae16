package auth

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestConfigSetDefaults(t *testing.T) {
	t.Parallel()
	var c Config
	c.SetDefaults()
	want := Config{JWKSRefresh: 10 * time.Minute, JWKSMinRefetch: 30 * time.Second, PrincipalClaim: "sub", Leeway: new(30 * time.Second)}
	if c.JWKSRefresh != want.JWKSRefresh || c.JWKSMinRefetch != want.JWKSMinRefetch ||
		c.PrincipalClaim != want.PrincipalClaim || c.leeway() != want.leeway() {
		t.Fatalf("SetDefaults = %+v, want %+v", c, want)
	}
	for _, leeway := range []time.Duration{time.Second, 0} {
		custom := Config{JWKSRefresh: time.Minute, JWKSMinRefetch: time.Second, PrincipalClaim: "email", Leeway: new(leeway)}
		kept := custom
		kept.SetDefaults()
		if kept.JWKSRefresh != custom.JWKSRefresh || kept.JWKSMinRefetch != custom.JWKSMinRefetch ||
			kept.PrincipalClaim != custom.PrincipalClaim || kept.leeway() != leeway {
			t.Fatalf("SetDefaults overwrote set fields: %+v (leeway %s)", kept, kept.leeway())
		}
	}
}

func TestConfigValidateAccepts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  Config
	}{
		{"jwks", Config{Issuer: testIssuer, Algorithms: []string{"RS256", "ES256"}, JWKSURL: "https://issuer.test/jwks"}},
		{"pem", Config{Issuer: testIssuer, Algorithms: []string{"EdDSA"}, PublicKeyFiles: []string{"/etc/keys/ed.pem"}}},
		{"hmac file", Config{Issuer: testIssuer, Algorithms: []string{"HS256"}, HMACSecretFile: "/run/secrets/jwt"}},
		{"hmac env and jwks", Config{Issuer: testIssuer, Algorithms: []string{"HS512", "PS256"}, HMACSecretEnv: "JWT_SECRET", JWKSURL: "http://keycloak:8080/certs"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := tt.cfg
			cfg.SetDefaults()
			if err := cfg.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
		})
	}
}

func TestConfigValidateReportsEveryProblem(t *testing.T) {
	t.Parallel()
	cfg := Config{
		Audiences:      []string{"https://ok.test", " "},
		Algorithms:     []string{"none", "HS256", "RS257", "ES256", "ES256"},
		HMACSecretFile: "",
		JWKSRefresh:    -time.Second,
		Leeway:         new(-time.Second),
	}
	err := cfg.Validate()
	if err == nil {
		t.Fatal("Validate accepted a broken config")
	}
	for _, want := range []string{
		"auth.issuer is required",
		"auth.audiences[1] is empty",
		`auth.algorithms[0]: "none" is never allowed`,
		"auth.algorithms[1]: HS256 needs hmac_secret_file or hmac_secret_env",
		`auth.algorithms[2]: unknown algorithm "RS257"`,
		"auth.algorithms[3]: ES256 needs jwks_url or public_key_files",
		"auth.algorithms[4]: ES256 is listed twice",
		"auth needs a key source",
		"auth.jwks_refresh must not be negative",
		"auth.leeway must not be negative",
		"auth.principal_claim is required",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Validate error lacks %q; got:\n%v", want, err)
		}
	}
	if n := len(strings.Split(err.Error(), "\n")); n != 11 {
		t.Errorf("Validate reported %d problems, want 11:\n%v", n, err)
	}
}

func TestConfigValidateRejects(t *testing.T) {
	t.Parallel()
	base := func() Config {
		c := Config{Issuer: testIssuer, Algorithms: []string{"RS256"}, JWKSURL: "https://issuer.test/jwks"}
		c.SetDefaults()
		return c
	}
	tests := []struct {
		name   string
		modify func(*Config)
		want   string
	}{
		{"no algorithms", func(c *Config) { c.Algorithms = nil }, "auth.algorithms is required"},
		{"lower-case alg", func(c *Config) { c.Algorithms = []string{"rs256"} }, `unknown algorithm "rs256"`},
		{"NONE", func(c *Config) { c.Algorithms = []string{"NONE"} }, "never allowed"},
		{"hmac secret without HS alg", func(c *Config) { c.HMACSecretEnv = "S" }, "lists no HS256"},
		{"public keys without asymmetric alg", func(c *Config) {
			c.Algorithms = []string{"HS256"}
			c.HMACSecretEnv = "S"
		}, "lists no RS*"},
		{"two hmac sources", func(c *Config) {
			c.Algorithms = []string{"HS256"}
			c.JWKSURL = ""
			c.HMACSecretEnv, c.HMACSecretFile = "S", "/s"
		}, "mutually exclusive"},
		{"jwks url not a url", func(c *Config) { c.JWKSURL = "::nope" }, "auth.jwks_url: not a valid URL"},
		{"jwks url relative", func(c *Config) { c.JWKSURL = "/jwks" }, "scheme must be https or http"},
		{"jwks url ftp", func(c *Config) { c.JWKSURL = "ftp://issuer.test/jwks" }, "scheme must be https or http"},
		{"jwks url no host", func(c *Config) { c.JWKSURL = "https:///jwks" }, "no host"},
		{"jwks url credentials", func(c *Config) { c.JWKSURL = "https://u:p@issuer.test/jwks" }, "credentials"},
		{"empty key file", func(c *Config) { c.PublicKeyFiles = []string{""} }, "auth.public_key_files[0] is empty"},
		{"negative min refetch", func(c *Config) { c.JWKSMinRefetch = -1 }, "auth.jwks_min_refetch must not be negative"},
		{"leeway of years", func(c *Config) { c.Leeway = new(10 * 365 * 24 * time.Hour) }, "auth.leeway (87600h0m0s) must be at most 5m0s"},
		{"min refetch of days", func(c *Config) { c.JWKSMinRefetch = 48 * time.Hour }, "auth.jwks_min_refetch (48h0m0s) must be at most 10m0s"},
		{"refresh of weeks", func(c *Config) { c.JWKSRefresh = 14 * 24 * time.Hour }, "auth.jwks_refresh (336h0m0s) must be at most 24h0m0s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := base()
			tt.modify(&cfg)
			err := cfg.Validate()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Validate = %v, want error containing %q", err, tt.want)
			}
		})
	}
}

func TestNewRejectsInvalidConfig(t *testing.T) {
	t.Parallel()
	_, err := New(context.Background(), Config{Algorithms: []string{"none"}}, testAudience, nil)
	if err == nil || !strings.Contains(err.Error(), "auth.issuer is required") || !strings.Contains(err.Error(), "never allowed") {
		t.Fatalf("New = %v, want the Validate errors", err)
	}
	_, err = New(context.Background(), jwksConfig("https//issuer.test", "RS256"), testAudience, nil)
	if err == nil || !strings.Contains(err.Error(), "auth.jwks_url") {
		t.Fatalf("New with a malformed jwks_url = %v, want an auth.jwks_url error", err)
	}
}
