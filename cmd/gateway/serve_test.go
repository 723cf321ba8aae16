package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	goruntime "runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/internal/testfiles"
	"github.com/a2agate/gateway/internal/testlog"
	"github.com/a2agate/gateway/internal/testnet"
	"github.com/a2agate/gateway/legacyagent"
)

// running is a gateway served in-process from a config file.
type running struct {
	url, admin string
	path       string
	done       chan error
	stop       context.CancelFunc
	log        *testlog.Buffer
}

// rewriteConfig replaces the config file the way editors and Kubernetes do,
// by a rename: the watcher never reads it half written (os.WriteFile
// truncates, then writes, so a poll in between counts one more reload, a
// refused one).
func rewriteConfig(t *testing.T, path string, config []byte) {
	t.Helper()
	tmp := path + ".new"
	if err := os.WriteFile(tmp, config, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func startGateway(t *testing.T, config string) *running {
	t.Helper()
	path := testfiles.Write(t, "gateway.yaml", []byte(config))
	cfg, err := loadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	return runGateway(t, path, cfg)
}

// startLegacyBackend serves a 0.2.5 legacy agent, JSON-RPC on its URL +
// "/", until the test ends.
func startLegacyBackend(t *testing.T) *httptest.Server {
	agent := legacyagent.New(legacyagent.Options{})
	t.Cleanup(agent.Close)
	backend := httptest.NewServer(agent)
	t.Cleanup(backend.Close)
	return backend
}

// runGateway serves cfg, read from path, until the test ends.
func runGateway(t *testing.T, path string, cfg *Config) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{path: path, done: make(chan error, 1), stop: cancel, log: &testlog.Buffer{}}
	ready := make(chan struct{})
	go func() {
		r.done <- serve(ctx, cfg, path, r.log, func(addr, admin string) {
			r.url, r.admin = "http://"+addr, "http://"+admin
			close(ready)
		})
	}()
	select {
	case <-ready:
	case err := <-r.done:
		t.Fatalf("gateway did not start: %v\n%s", err, r.log.String())
	}
	t.Cleanup(func() {
		cancel()
		if err := <-r.done; err != nil {
			t.Errorf("gateway stopped with %v", err)
		}
	})
	return r
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, b := testnet.RoundTrip(t, http.DefaultClient, req)
	return res.StatusCode, string(b)
}

// eventually polls cond until it holds or the deadline passes: the
// gateway's reloads and card refreshes run on their own clocks.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond) // polling, not synchronising
	}
}

func gatewayConfig(backend, name string) string {
	return `listen: 127.0.0.1:0
admin:
  listen: 127.0.0.1:0
agents:
  - name: helpdesk
    public_url: http://gateway.test/
    backend:
      url: ` + backend + `
      dialect: "0.2.5"
    skills:
      default: work
    card:
      name: ` + name + `
      refresh_interval: 100ms
`
}

// TestConfigChangedBeforeWatchIsReloaded: a change written after the config
// was read but before the watcher first looked is a change: the watcher
// tells changes from what the running config was read from, not from what
// the file holds when it starts.
func TestConfigChangedBeforeWatchIsReloaded(t *testing.T) {
	pollConfigEvery(t, 20*time.Millisecond)
	backend := startLegacyBackend(t)
	path := testfiles.Write(t, "gateway.yaml", []byte(gatewayConfig(backend.URL+"/", "First")))
	cfg, err := loadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	rewriteConfig(t, path, []byte(gatewayConfig(backend.URL+"/", "Second")))
	g := runGateway(t, path, cfg)
	eventually(t, "the config written before the watcher started", func() bool { return cardName(t, g) == "Second" })
}

// openHeldStream opens a message/stream through the gateway at url and
// reads its first byte; the backend (legacyagent with Hold) holds the rest.
func openHeldStream(t *testing.T, url string) *http.Response {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"message/stream","params":{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":"wait"}]}}}`
	res, err := http.Post(url+"/", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(res.Body, make([]byte, 1)); err != nil {
		res.Body.Close()
		t.Fatal(err)
	}
	return res
}

// TestReloadDuringOpenStream: a valid config takes over for new calls while
// an open stream finishes on the old one; an invalid config is refused and
// counted, and the running config keeps serving.
func TestReloadDuringOpenStream(t *testing.T) {
	pollConfigEvery(t, 20*time.Millisecond)
	hold := make(chan struct{})
	agent := legacyagent.New(legacyagent.Options{Hold: hold})
	defer agent.Close()
	backend := httptest.NewServer(agent)
	defer backend.Close()
	g := startGateway(t, gatewayConfig(backend.URL+"/", "First"))
	if name := cardName(t, g); name != "First" {
		t.Fatalf("card name %q", name)
	}
	// An open stream, held by the backend.
	res := openHeldStream(t, g.url)
	defer res.Body.Close()

	rewriteConfig(t, g.path, []byte(gatewayConfig(backend.URL+"/", "Second")))
	eventually(t, "the new card name", func() bool { return cardName(t, g) == "Second" })
	if got := reloadMetric(t, g, "success"); got != "1" {
		t.Fatalf("reload success counter %q", got)
	}
	// The stream opened before the reload runs to completion.
	close(hold)
	rest, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("the open stream broke on reload: %v", err)
	}
	if !strings.Contains(string(rest), `"state":"completed"`) {
		t.Fatalf("the open stream did not complete: %s", rest)
	}

	rewriteConfig(t, g.path, []byte("listen: [this is not a config"))
	eventually(t, "the failure counter", func() bool { return reloadMetric(t, g, "failure") == "1" })
	if cardName(t, g) != "Second" {
		t.Fatalf("the running config must keep serving after a refused reload")
	}
	if !strings.Contains(g.log.String(), "config reload refused") {
		t.Fatalf("a refused reload must be logged")
	}
}

// TestReadinessFollowsBackend: /readyz turns 503 when the backend goes away
// and ready again when it comes back.
func TestReadinessFollowsBackend(t *testing.T) {
	backend := startLegacyBackend(t)
	relay := testnet.NewRelay(t, strings.TrimPrefix(backend.URL, "http://"))
	g := startGateway(t, gatewayConfig("http://"+relay.Addr+"/", "Ready"))
	ready := func() int { code, _ := httpGet(t, g.admin+"/readyz"); return code }
	eventually(t, "ready", func() bool { return ready() == http.StatusOK })
	if code, _ := httpGet(t, g.admin+"/healthz"); code != http.StatusOK {
		t.Fatalf("healthz %d", code)
	}
	relay.Cut()
	eventually(t, "not ready while the backend is away", func() bool { return ready() == http.StatusServiceUnavailable })
	// The last good card keeps being served.
	if code, _ := httpGet(t, g.url+"/.well-known/agent-card.json"); code != http.StatusOK {
		t.Fatalf("the last good card must stay served, got %d", code)
	}
	relay.Restore()
	eventually(t, "ready again", func() bool { return ready() == http.StatusOK })
}

func TestValidateCommand(t *testing.T) {
	good := testfiles.Write(t, "good.yaml", []byte(gatewayConfig("http://127.0.0.1:9/", "x")))
	bad := testfiles.Write(t, "bad.yaml", []byte("listen: \"\"\nagents:\n  - name: a\n    backend: {url: ftp://x, dialect: \"9\"}\n"))
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"validate", "-config", good}, &out, &errOut); err != nil {
		t.Fatalf("a good config: %v", err)
	}
	err := run(context.Background(), []string{"validate", "-config", bad}, &out, &errOut)
	if err == nil {
		t.Fatal("a bad config must fail")
	}
	for _, want := range []string{"listen is required", "public_url", "ftp://x", `dialect "9"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error must report %q among all problems: %v", want, err)
		}
	}
}

// TestAutoDialectFailsLoudlyAtStart: a backend whose card cannot be read
// stops the gateway at start, not at the first request.
func TestAutoDialectFailsLoudlyAtStart(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	cfg, err := parseConfig([]byte(strings.Replace(gatewayConfig(dead.URL+"/", "x"), `dialect: "0.2.5"`, "dialect: auto", 1)))
	if err != nil {
		t.Fatal(err)
	}
	err = serve(context.Background(), cfg, "", io.Discard, func(string, string) { t.Error("the gateway must not start") })
	if err == nil || !strings.Contains(err.Error(), "dialect auto") {
		t.Fatalf("want a dialect auto error, got %v", err)
	}
}

// TestReloadOnSIGHUP: SIGHUP reloads the config file even when the file
// watcher has not looked yet.
func TestReloadOnSIGHUP(t *testing.T) {
	pollConfigEvery(t, time.Hour) // only the signal can reload
	backend := startLegacyBackend(t)
	g := startGateway(t, gatewayConfig(backend.URL+"/", "BeforeHUP"))
	rewriteConfig(t, g.path, []byte(gatewayConfig(backend.URL+"/", "AfterHUP")))
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the reload on SIGHUP", func() bool { return cardName(t, g) == "AfterHUP" })
}

// TestPprofOnlyWhenAsked: Go's profiles are on the admin listener only
// when admin.pprof says so.
func TestPprofOnlyWhenAsked(t *testing.T) {
	backend := startLegacyBackend(t)
	off := startGateway(t, gatewayConfig(backend.URL+"/", "Off"))
	if code, _ := httpGet(t, off.admin+"/debug/pprof/"); code != http.StatusNotFound {
		t.Errorf("pprof without admin.pprof: HTTP %d, want 404", code)
	}
	on := startGateway(t, strings.Replace(gatewayConfig(backend.URL+"/", "On"), "admin:\n", "admin:\n  pprof: true\n", 1))
	if code, body := httpGet(t, on.admin+"/debug/pprof/"); code != http.StatusOK || !strings.Contains(body, "goroutine") {
		t.Errorf("pprof with admin.pprof: HTTP %d", code)
	}
	if code, _ := httpGet(t, on.url+"/debug/pprof/"); code == http.StatusOK {
		t.Error("pprof is served on the traffic listener")
	}
}

// TestServeSamplesNoHeapProfileWithoutPprof: a gateway whose admin
// listener serves no profiles records none. Not parallel: the sampling rate
// is the process's.
func TestServeSamplesNoHeapProfileWithoutPprof(t *testing.T) {
	was := goruntime.MemProfileRate
	t.Cleanup(func() { goruntime.MemProfileRate = was })
	config := testfiles.Write(t, "gateway.yaml", []byte(gatewayConfig("http://127.0.0.1:9/", "x")))
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // serve sets up and shuts down at once
	var errOut bytes.Buffer
	if err := run(ctx, []string{"-config", config}, io.Discard, &errOut); err != nil {
		t.Fatalf("serve: %v\n%s", err, &errOut)
	}
	if goruntime.MemProfileRate != 0 {
		t.Fatalf("MemProfileRate = %d after serving without pprof, want 0", goruntime.MemProfileRate)
	}
}

// TestReadinessWhileDraining: from SIGTERM on, while in-flight calls
// finish, /readyz answers 503 saying so (the traffic listener takes no new
// calls) and /healthz and /metrics still answer.
func TestReadinessWhileDraining(t *testing.T) {
	hold := make(chan struct{})
	agent := legacyagent.New(legacyagent.Options{Hold: hold})
	defer agent.Close()
	backend := httptest.NewServer(agent)
	defer backend.Close()
	defer close(hold)
	g := startGateway(t, gatewayConfig(backend.URL+"/", "Draining"))
	eventually(t, "ready", func() bool { code, _ := httpGet(t, g.admin+"/readyz"); return code == http.StatusOK })
	res := openHeldStream(t, g.url)
	defer res.Body.Close()

	g.stop()
	eventually(t, "the shutdown", func() bool { return strings.Contains(g.log.String(), "shutting down") })
	if code, b := httpGet(t, g.admin+"/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(b, "shutting down") {
		t.Errorf("/readyz while draining: %d %q, want 503 saying it is shutting down", code, b)
	}
	if code, _ := httpGet(t, g.admin+"/healthz"); code != http.StatusOK {
		t.Errorf("/healthz while draining: %d, want 200: the process is alive", code)
	}
	if code, _ := httpGet(t, g.admin+"/metrics"); code != http.StatusOK {
		t.Errorf("/metrics while draining: %d", code)
	}
}

// TestAdminServesWhileStarting: while the first config is built (a
// backend's card slow to come, up to card.fetch_timeout), the admin
// listener already answers: /healthz 200, so that a liveness probe does
// not kill a gateway waiting for its backend, and /readyz 503 saying it is
// starting.
func TestAdminServesWhileStarting(t *testing.T) {
	agent := legacyagent.New(legacyagent.Options{})
	defer agent.Close()
	release := make(chan struct{})
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			select { // the card comes once the test has looked
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
		agent.ServeHTTP(w, r)
	}))
	defer backend.Close()
	config := strings.Replace(gatewayConfig(backend.URL+"/", "Slow"), "      refresh_interval: 100ms\n", "      refresh_interval: 100ms\n      fetch_timeout: 1m\n", 1)
	cfg, err := parseConfig([]byte(config))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	log := &testlog.Buffer{}
	done := make(chan error, 1)
	ready := make(chan struct{})
	go func() { done <- serve(ctx, cfg, "", log, func(string, string) { close(ready) }) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	var admin string
	eventually(t, "the admin listener", func() bool {
		for _, l := range strings.Split(log.String(), "\n") {
			if j := gjson.Parse(l); j.Get("msg").Str == "admin listening" {
				admin = "http://" + j.Get("addr").Str
			}
		}
		return admin != ""
	})
	if code, _ := httpGet(t, admin+"/healthz"); code != http.StatusOK {
		t.Errorf("/healthz while starting: %d, want 200", code)
	}
	if code, body := httpGet(t, admin+"/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "starting") {
		t.Errorf("/readyz while starting: %d %q, want 503 saying it is starting", code, body)
	}
	close(release)
	<-ready
	eventually(t, "ready", func() bool { code, _ := httpGet(t, admin+"/readyz"); return code == http.StatusOK })
}
