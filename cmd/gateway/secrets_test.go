package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/a2agate/gateway/internal/testfiles"
)

// secretGoldens are the broken configs of testdata/config whose one
// problem is a secret that cannot be read: start refuses each as validate
// does.
var secretGoldens = []string{
	"tls_cert_missing", "grpc_tls_cert_missing", "auth_hmac_secret_file_missing", "auth_hmac_secret_short",
	"auth_hmac_secret_env_unset", "auth_public_key_files", "redis_password_file_missing", "redis_tls_files_missing",
	"tracing_header_file_missing",
}

// TestSecretsRefusedAtStartAsByValidate: each config validate refuses for
// a secret, start refuses with the same words: both read the secrets with
// the same code, so validate passes no config that start then refuses for
// its secrets.
func TestSecretsRefusedAtStartAsByValidate(t *testing.T) {
	for _, name := range secretGoldens {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("testdata", "config", name+".yaml")
			want, err := os.ReadFile(filepath.Join("testdata", "config", name+".err"))
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := loadWithEnv(t, path, nil)
			if err != nil {
				t.Fatalf("the config itself is refused, not only its secrets: %v", err)
			}
			cfg.Listen = "127.0.0.1:0"
			err = serve(context.Background(), cfg, "", io.Discard, func(string, string) { t.Error("the gateway started") })
			if err == nil {
				t.Fatal("the gateway started")
			}
			for _, sub := range strings.Split(strings.TrimSpace(string(want)), "\n") {
				if !strings.Contains(err.Error(), sub) {
					t.Errorf("start's error lacks %q, which validate reports:\n%v", sub, err)
				}
			}
		})
	}
}

// TestValidateReadsSecretsOnly: a config whose every secret is readable
// passes validate, which sends nothing anywhere: not a request to the
// JWKS, not a command to Redis (at an address where nothing listens).
func TestValidateReadsSecretsOnly(t *testing.T) {
	var fetches atomic.Int32
	jwks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fetches.Add(1)
		_, _ = io.WriteString(w, `{"keys":[]}`)
	}))
	t.Cleanup(jwks.Close)
	files, _ := testCerts(t)
	write := func(name, content string) string { return testfiles.Write(t, name, []byte(content)) }
	hmac := write("hmac.secret", strings.Repeat("k", 32)+"\n")
	redisPassword := write("redis.secret", "hunter2\n")
	apiKey := write("collector.secret", "key\n")
	path := write("gateway.yaml", `listen: ":8080"
tls: {cert_file: `+files.ServerCert+`, key_file: `+files.ServerKey+`}
store:
  type: redis
  redis:
    address: 127.0.0.1:1
    password_file: `+redisPassword+`
    tls: {enabled: true, ca_file: `+files.CA+`, cert_file: `+files.ClientCert+`, key_file: `+files.ClientKey+`}
tracing:
  enabled: true
  otlp:
    endpoint: http://127.0.0.1:1
    headers: [{name: X-Api-Key, value_file: `+apiKey+`}]
agents:
  - name: hmac
    path: /hmac
    public_url: https://agents.example.com/hmac
    grpc_listen: 127.0.0.1:0
    grpc_tls: {cert_file: `+files.ServerCert+`, key_file: `+files.ServerKey+`}
    backend: {url: "http://127.0.0.1:1/"}
    auth: {issuer: https://issuer.example.com/, algorithms: [HS256], hmac_secret_file: `+hmac+`}
  - name: keys
    path: /keys
    public_url: https://agents.example.com/keys
    backend: {url: "http://127.0.0.1:1/"}
    auth: {issuer: https://issuer.example.com/, algorithms: [ES256], public_key_files: [`+files.ServerCert+`], jwks_url: `+jwks.URL+`}
`)
	if err := validateFile(path); err != nil {
		t.Fatalf("a config whose secrets are all readable: %v", err)
	}
	if n := fetches.Load(); n != 0 {
		t.Errorf("validate fetched the JWKS %d times", n)
	}
}
