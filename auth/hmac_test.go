package auth

import (
	"context"
	"strings"
	"testing"

	"github.com/a2agate/gateway/internal/testfiles"
)

func TestLoadHMACSecret(t *testing.T) {
	t.Parallel()
	secret := strings.Repeat("k", 32)
	tests := []struct {
		name string
		file string
		want string
	}{
		{"plain", secret, secret},
		{"trailing newline", secret + "\n", secret},
		{"trailing CRLF", secret + "\r\n", secret},
		{"inner and leading whitespace kept", " " + secret + " x\n", " " + secret + " x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := loadHMACSecret(Config{HMACSecretFile: testfiles.Write(t, "secret", []byte(tt.file))})
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Fatalf("secret = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestLoadHMACSecretFailures(t *testing.T) {
	t.Parallel()
	if _, err := loadHMACSecret(Config{HMACSecretFile: testfiles.Write(t, "empty", []byte("\n"))}); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("empty file: %v", err)
	}
	if _, err := loadHMACSecret(Config{HMACSecretFile: "/nonexistent/secret"}); err == nil || !strings.Contains(err.Error(), "auth.hmac_secret_file") {
		t.Errorf("missing file: %v", err)
	}
	if _, err := loadHMACSecret(Config{HMACSecretEnv: "AUTH_TEST_SURELY_UNSET_VARIABLE"}); err == nil || !strings.Contains(err.Error(), "AUTH_TEST_SURELY_UNSET_VARIABLE") {
		t.Errorf("unset variable: %v", err)
	}
}

func TestNewEnforcesHMACSecretLength(t *testing.T) {
	t.Parallel()
	tests := []struct {
		alg    string
		length int
		ok     bool
	}{
		{"HS256", 31, false},
		{"HS256", 32, true},
		{"HS384", 47, false},
		{"HS384", 48, true},
		{"HS512", 63, false},
		{"HS512", 64, true},
	}
	for _, tt := range tests {
		cfg := Config{Issuer: testIssuer, Algorithms: []string{tt.alg},
			HMACSecretFile: testfiles.Write(t, "secret", []byte(strings.Repeat("k", tt.length)+"\n"))}
		v, err := New(context.Background(), cfg, testAudience, nil)
		if tt.ok {
			if err != nil {
				t.Errorf("%s with %d bytes: %v", tt.alg, tt.length, err)
				continue
			}
			v.Close()
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.alg+" needs at least") {
			t.Errorf("%s with %d bytes: New = %v, want a length error", tt.alg, tt.length, err)
		}
		if err != nil && strings.Contains(err.Error(), "kkkk") {
			t.Errorf("error %q quotes the secret", err)
		}
	}
}
