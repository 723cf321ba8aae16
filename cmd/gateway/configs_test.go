package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2agate/gateway/auth"
)

// repoRoot is the repository root seen from this package's directory, where
// go test runs.
const repoRoot = "../.."

// plausibleEnv holds a realistic value for every ${VAR} that a shipped config
// references. A config that starts referencing a new variable fails the test
// until it gets an entry here: a deployment has to set it too.
var plausibleEnv = map[string]string{
	"PUBLIC_URL":             "https://helpdesk.example.com/",
	"A2AGW_DEMO_LISTEN":      "127.0.0.1:8080",
	"A2AGW_DEMO_PUBLIC_URL":  "http://127.0.0.1:8080/",
	"A2AGW_DEMO_BACKEND_URL": "http://127.0.0.1:9999/",
}

// envRefs lists the distinct ${VAR} names in the config at path, in order.
func envRefs(t *testing.T, path string) []string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range envRef.FindAllSubmatch(raw, -1) {
		if name := string(m[1]); !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names
}

// loadWithEnv loads a config with the given variables set and every other
// variable it references unset, so that the result depends on nothing in the
// environment of the test run.
func loadWithEnv(t *testing.T, path string, env map[string]string) (*Config, error) {
	t.Helper()
	for _, name := range envRefs(t, path) {
		t.Setenv(name, env[name]) // restores the old value after the test
		if _, ok := env[name]; !ok {
			os.Unsetenv(name)
		}
	}
	return loadConfig(path)
}

// validateWithEnv is loadWithEnv for validateFile, what `gateway validate`
// runs.
func validateWithEnv(t *testing.T, path string, env map[string]string) error {
	t.Helper()
	for _, name := range envRefs(t, path) {
		t.Setenv(name, env[name])
		if _, ok := env[name]; !ok {
			os.Unsetenv(name)
		}
	}
	return validateFile(path)
}

// loadShippedConfig loads a config that ships with the project, with
// plausible values for the variables it references.
func loadShippedConfig(t *testing.T, path string) *Config {
	t.Helper()
	for _, name := range envRefs(t, path) {
		if _, ok := plausibleEnv[name]; !ok {
			t.Fatalf("%s references ${%s}: add a plausible value to plausibleEnv", path, name)
		}
	}
	cfg, err := loadWithEnv(t, path, plausibleEnv)
	if err != nil {
		t.Fatalf("a shipped config does not load: %v", err)
	}
	return cfg
}

func TestShippedConfigsLoad(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(repoRoot, "configs", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"demo.yaml", "sidecar.yaml"} {
		if !slices.Contains(paths, filepath.Join(repoRoot, "configs", want)) {
			t.Errorf("configs/%s is missing; found %v", want, paths)
		}
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			cfg := loadShippedConfig(t, path)
			if len(cfg.Agents) == 0 {
				t.Fatal("loaded with no agents")
			}
			for _, a := range cfg.Agents {
				if a.PublicURL == "" || a.Backend.URL == "" {
					t.Errorf("agent %q: public_url %q, backend.url %q: a variable expanded to nothing", a.Name, a.PublicURL, a.Backend.URL)
				}
			}
		})
	}
}

// TestBrokenConfigs checks each testdata/config/NAME.yaml as `gateway
// validate` does (its secrets read too) and that it fails with every line
// of NAME.err in the error message.
func TestBrokenConfigs(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "config", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("no broken configs in testdata/config")
	}
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".yaml")
		t.Run(name, func(t *testing.T) {
			want, err := os.ReadFile(strings.TrimSuffix(path, ".yaml") + ".err")
			if err != nil {
				t.Fatalf("every broken config needs a .err file of expected error substrings: %v", err)
			}
			err = validateWithEnv(t, path, nil)
			if err == nil {
				t.Fatal("validated without error")
			}
			if !strings.HasPrefix(err.Error(), path+": ") {
				t.Errorf("error does not name the file: %v", err)
			}
			for _, sub := range strings.Split(strings.TrimSpace(string(want)), "\n") {
				if !strings.Contains(err.Error(), sub) {
					t.Errorf("error lacks %q:\n%v", sub, err)
				}
			}
		})
	}
	errs, _ := filepath.Glob(filepath.Join("testdata", "config", "*.err"))
	for _, e := range errs {
		if !slices.Contains(paths, strings.TrimSuffix(e, ".err")+".yaml") {
			t.Errorf("%s has no .yaml beside it", e)
		}
	}
}

// TestConfigFileTooLarge: a file past maxConfigBytes is refused without
// being parsed, naming the bound, by validate as at start.
func TestConfigFileTooLarge(t *testing.T) {
	raw := "listen: \":8080\"\n# " + strings.Repeat("x", maxConfigBytes) + "\n"
	path := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(path, []byte(raw), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := validateFile(path); err == nil || !strings.Contains(err.Error(), path+" is larger than 1048576 bytes (1 MiB)") {
		t.Fatalf("got %v", err)
	}
}

// TestURLCredentialsNotEchoed: the refusal of a URL with a password never
// quotes the password (the error is logged, and printed by validate).
func TestURLCredentialsNotEchoed(t *testing.T) {
	err := validateWithEnv(t, filepath.Join("testdata", "config", "url_credentials.yaml"), nil)
	if err == nil {
		t.Fatal("validated")
	}
	for _, secret := range []string{"hunter2", "s3cret", "t0ken"} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("the error quotes %q: %v", secret, err)
		}
	}
}

// TestEnvExpansion: ${VAR} is expanded in values, not comments (a line
// commented out does not need its variable), a plain value is read as what
// it expands to (a number stays a number), and a value is one scalar
// whatever the variable holds (quotes in it do not break the document).
func TestEnvExpansion(t *testing.T) {
	t.Setenv("A2AGW_TEST_SIZE", "4096")
	t.Setenv("A2AGW_TEST_CARD_NAME", `Helpdesk "beta": ask # anything`)
	os.Unsetenv("A2AGW_TEST_COMMENTED_OUT")
	c, err := parseConfig([]byte(`listen: ":8080"
agents:
  - name: helpdesk
    public_url: https://helpdesk.example.com/
    # public_url: ${A2AGW_TEST_COMMENTED_OUT}
    max_body_bytes: ${A2AGW_TEST_SIZE}
    card:
      name: "${A2AGW_TEST_CARD_NAME}"
    backend:
      url: http://127.0.0.1:9999/ # ${A2AGW_TEST_COMMENTED_OUT}
`))
	if err != nil {
		t.Fatal(err)
	}
	a := c.Agents[0]
	if a.MaxBodyBytes != 4096 || a.Card.Name != `Helpdesk "beta": ask # anything` || a.Backend.URL != "http://127.0.0.1:9999/" {
		t.Errorf("max_body_bytes %d, card.name %q, backend.url %q", a.MaxBodyBytes, a.Card.Name, a.Backend.URL)
	}
}

// TestZeroLeeway: auth.leeway is the one duration whose zero is a value
// (no clock skew tolerated), so 0s is kept rather than refused or
// defaulted; left out, it is the default.
func TestZeroLeeway(t *testing.T) {
	for leeway, want := range map[string]time.Duration{"\n      leeway: 0s": 0, "": auth.DefaultLeeway} {
		c, err := parseConfig([]byte(`listen: ":8080"
agents:
  - name: helpdesk
    public_url: https://helpdesk.example.com/
    backend: {url: "http://127.0.0.1:9999/", dialect: "1.0"}
    auth:
      issuer: https://issuer.example.com/
      algorithms: [RS256]
      jwks_url: https://issuer.example.com/jwks` + leeway + "\n"))
		if err != nil {
			t.Fatalf("%q: %v", leeway, err)
		}
		if got := c.Agents[0].Auth.Leeway; got == nil || *got != want {
			t.Errorf("%q: leeway %v, want %s", leeway, got, want)
		}
	}
}

// TestZeroFromTheEnvironment: a zero that ${VAR} brings is refused as a
// written one is.
func TestZeroFromTheEnvironment(t *testing.T) {
	t.Setenv("A2AGW_TEST_CALLS", "0")
	_, err := parseConfig([]byte(`listen: ":8080"
agents:
  - name: helpdesk
    public_url: https://helpdesk.example.com/
    max_calls_per_caller: ${A2AGW_TEST_CALLS}
    backend: {url: "http://127.0.0.1:9999/", dialect: "1.0"}
`))
	if err == nil || !strings.Contains(err.Error(), "agents[0].max_calls_per_caller (line 5): 0 would be taken as unset") {
		t.Fatalf("max_calls_per_caller: ${A2AGW_TEST_CALLS} with 0: %v", err)
	}
}

// TestBadTTLNamedOnce: a task index ttl the store refuses is reported as
// that, not also as every agent's retries.window, which the operator did
// not set (it defaults to the ttl).
func TestBadTTLNamedOnce(t *testing.T) {
	for _, store := range []string{"store: {memory: {ttl: -1s}}", "store: {type: redis, redis: {ttl: -1s}}"} {
		_, err := parseConfig([]byte(store + "\nlisten: \":8080\"\nagents:\n  - name: a\n    public_url: http://x/\n    backend: {url: \"http://127.0.0.1:9/\", dialect: \"1.0\"}\n"))
		if err == nil || !strings.Contains(err.Error(), "ttl: must be at least 1s, got -1s") || strings.Contains(err.Error(), "retries") {
			t.Errorf("%s: %v", store, err)
		}
	}
}

func TestListenOverlap(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{":8080", "127.0.0.1:8080", true},
		{"[::]:8080", "127.0.0.1:8080", true},
		{"0.0.0.0:8080", "127.0.0.1:8080", true},
		{"0.0.0.0:8080", "[::]:8080", true},
		{"0.0.0.0:8080", "localhost:8080", true},
		{"0.0.0.0:8080", "[::1]:8080", false}, // IPv4's every interface leaves IPv6's port free
		{"127.0.0.1:8080", "127.0.0.2:8080", false},
		{"127.0.0.1:8080", "127.0.0.1:8081", false},
		{":0", "127.0.0.1:0", false},
		// A name is resolved only at start: on another listener's port
		// it may be that listener's address.
		{"localhost:8080", "127.0.0.1:8080", true},
		{"localhost:8080", "[::1]:8080", true},
		{"gw.internal:8080", "10.0.0.1:8080", true},
		{"localhost:8080", "127.0.0.1:8081", false},
		{"localhost:0", "127.0.0.1:0", false},
	} {
		if got := listenOverlap(c.a, c.b); got != c.want {
			t.Errorf("listenOverlap(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
		if got := listenOverlap(c.b, c.a); got != c.want {
			t.Errorf("listenOverlap(%q, %q) = %v, want %v", c.b, c.a, got, c.want)
		}
	}
}
