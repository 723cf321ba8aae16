package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/internal/testfiles"
	"github.com/a2agate/gateway/legacyagent"
)

// reloadMetric reads the config reload counter of one result.
func reloadMetric(t *testing.T, g *running, result string) string {
	t.Helper()
	_, m := httpGet(t, g.admin+"/metrics")
	for _, line := range strings.Split(m, "\n") {
		if strings.HasPrefix(line, `a2a_gateway_config_reloads_total{result="`+result+`"}`) {
			return strings.Fields(line)[1]
		}
	}
	return ""
}

// cardName is the name on the legacy card g serves.
func cardName(t *testing.T, g *running) string {
	t.Helper()
	_, b := httpGet(t, g.url+"/.well-known/agent.json")
	return gjson.Get(b, "name").Str
}

// pollConfigEvery makes the config watcher look every d for the test.
func pollConfigEvery(t *testing.T, d time.Duration) {
	old := configPollInterval
	configPollInterval = d
	t.Cleanup(func() { configPollInterval = old })
}

// startReloadingGateway serves a legacy agent under a config the test then
// rewrites, polled every 20ms.
func startReloadingGateway(t *testing.T) *running {
	pollConfigEvery(t, 20*time.Millisecond)
	backend := startLegacyBackend(t)
	g := startGateway(t, gatewayConfig(backend.URL+"/", "First"))
	if name := cardName(t, g); name != "First" {
		t.Fatalf("card name %q before the reload, want First", name)
	}
	return g
}

// configText is the config file g runs, as it stands.
func configText(t *testing.T, g *running) string {
	t.Helper()
	raw, err := os.ReadFile(g.path)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// refuseReload rewrites the config of g, started by startReloadingGateway,
// to config, waits for the reload failure counter to reach failures, and
// checks that the old config serves on and that the log holds each of want.
func refuseReload(t *testing.T, g *running, failures int, config string, want ...string) {
	t.Helper()
	rewriteConfig(t, g.path, []byte(config))
	n := strconv.Itoa(failures)
	eventually(t, "the failure counter at "+n, func() bool { return reloadMetric(t, g, "failure") == n })
	if name := cardName(t, g); name != "First" {
		t.Fatalf("the old config must keep serving after a refused reload: card name %q", name)
	}
	log := g.log.String()
	for _, w := range want {
		if !strings.Contains(log, w) {
			t.Fatalf("the log must hold %q:\n%s", w, log)
		}
	}
}

// TestReloadRefusesBadPath: a path that ServeMux would panic on (or take
// as a wildcard) is refused on reload, with the old config serving on.
func TestReloadRefusesBadPath(t *testing.T) {
	g := startReloadingGateway(t)
	bad := strings.Replace(configText(t, g), "  - name: helpdesk\n", "  - name: helpdesk\n    path: \"/{x\"\n", 1)
	refuseReload(t, g, 1, bad, "config reload refused", `path \"/{x\" may not hold '{'`)
}

// TestReloadRefusesAbsurdLeeway: a leeway that would keep expired tokens
// valid for years is refused on reload as at load, with the old config
// serving on.
func TestReloadRefusesAbsurdLeeway(t *testing.T) {
	g := startReloadingGateway(t)
	authBlock := "    auth:\n      issuer: https://issuer.example.com/\n      algorithms: [RS256]\n      jwks_url: https://issuer.example.com/jwks\n      leeway: 87600h\n"
	bad := strings.Replace(configText(t, g), "  - name: helpdesk\n", "  - name: helpdesk\n"+authBlock, 1)
	refuseReload(t, g, 1, bad, "config reload refused", "auth.leeway (87600h0m0s) must be at most 5m0s")
}

// TestReloadRefusesAbsurdPushAndStoreBounds: a push queue of billions, then
// a task index ttl of years, are refused on reload as at load, each naming
// its key, with the old config serving on.
func TestReloadRefusesAbsurdPushAndStoreBounds(t *testing.T) {
	g := startReloadingGateway(t)
	raw := configText(t, g)
	for i, c := range []struct{ edit, want string }{
		{strings.Replace(raw, "  - name: helpdesk\n", "  - name: helpdesk\n    push:\n      queue_size: 1000000000\n", 1),
			"push: queue_size: must be at most 100000, got 1000000000"},
		{"store:\n  memory:\n    ttl: 87600h\n" + raw,
			"store.memory: ttl: must be at most 720h0m0s (30 days), got 87600h0m0s"},
	} {
		refuseReload(t, g, i+1, c.edit, c.want)
	}
}

// TestReloadRecoversPanic: a panic while building a reloaded config is
// recovered, logged and counted as a failed reload, and the old config
// keeps serving.
func TestReloadRecoversPanic(t *testing.T) {
	g := startReloadingGateway(t)
	real := buildGeneration
	buildGeneration = func(*runtime, context.Context, *Config) (*generation, error) { panic("a defect in build") }
	t.Cleanup(func() { buildGeneration = real })
	refuseReload(t, g, 1, strings.Replace(configText(t, g), "name: First", "name: Second", 1), "building the new config panicked: a defect in build")
}

// TestMaxCallsPerCallerValidated: agents[].max_calls_per_caller defaults to
// 1000 and takes 1 to 1,000,000; outside that it is refused at load and on
// reload, naming the key, with the old config serving on.
func TestMaxCallsPerCallerValidated(t *testing.T) {
	agent := func(n string) []byte {
		return []byte("listen: \":8080\"\nagents:\n  - name: helpdesk\n    public_url: https://agents.example.com/\n    backend:\n      url: http://helpdesk.internal/\n" + n)
	}
	for n, want := range map[string]int{"": 1000, "    max_calls_per_caller: 1\n": 1, "    max_calls_per_caller: 1000000\n": 1000000} {
		c, err := parseConfig(agent(n))
		if err != nil {
			t.Fatalf("%q: %v", n, err)
		}
		if got := c.Agents[0].MaxCallsPerCaller; got != want {
			t.Fatalf("%q: max_calls_per_caller %d, want %d", n, got, want)
		}
	}
	for _, n := range []string{"-1", "1000001", "2147483648"} {
		if _, err := parseConfig(agent("    max_calls_per_caller: " + n + "\n")); err == nil || !strings.Contains(err.Error(), "max_calls_per_caller ("+n+") is not between 1 and 1000000") {
			t.Fatalf("%s: %v", n, err)
		}
	}

	g := startReloadingGateway(t)
	bad := strings.Replace(configText(t, g), "  - name: helpdesk\n", "  - name: helpdesk\n    max_calls_per_caller: 1000001\n", 1)
	refuseReload(t, g, 1, bad, "max_calls_per_caller (1000001) is not between 1 and 1000000")
}

// TestReloadRefusesWhatDecodingWouldLose: a second YAML document, a
// duration without its unit and a file too large to be a config are each
// refused on reload as at load, counted, naming what is wrong, with the old
// config serving on.
func TestReloadRefusesWhatDecodingWouldLose(t *testing.T) {
	g := startReloadingGateway(t)
	raw := configText(t, g)
	huge := raw + "# " + strings.Repeat("x", maxConfigBytes) + "\n"
	for i, c := range []struct{ edit, want string }{
		{strings.Replace(raw, "name: First", "name: Second", 1) + "---\nlog:\n  level: debug\n", "a second YAML document starts at line"},
		{strings.Replace(raw, "name: First", "name: Second", 1) + "server:\n  idle_timeout: 30\n", "server.idle_timeout (line"},
		{strings.Replace(huge, "name: First", "name: Second", 1), "is larger than 1048576 bytes"},
	} {
		refuseReload(t, g, i+1, c.edit, c.want)
	}
}

// TestReloadChangesLogLevel: log.level is applied on reload (it was read
// once at start, so a reload to debug or info "succeeded" and changed
// nothing), and the change is logged at a level shown under either.
func TestReloadChangesLogLevel(t *testing.T) {
	pollConfigEvery(t, 20*time.Millisecond)
	backend := startLegacyBackend(t)
	g := startGateway(t, "log:\n  level: warn\n"+gatewayConfig(backend.URL+"/", "First"))
	if strings.Contains(g.log.String(), `"level":"INFO"`) {
		t.Fatalf("an info line at level warn:\n%s", g.log.String())
	}
	rewriteConfig(t, g.path, []byte("log:\n  level: info\n"+gatewayConfig(backend.URL+"/", "Second")))
	eventually(t, "the reload", func() bool { return cardName(t, g) == "Second" })
	eventually(t, "the reload's log line", func() bool { return strings.Contains(g.log.String(), `"msg":"config reloaded"`) })
	if log := g.log.String(); !strings.Contains(log, `"msg":"log level changed","from":"warn","to":"info"`) {
		t.Fatalf("the change of level is not logged:\n%s", log)
	}
}

// TestSecretFileRotationReloads: a backend header's value_file rewritten
// (a rotated Secret; the config file unchanged) is taken up as a reload is:
// the backend gets the new value, and the reload is counted.
func TestSecretFileRotationReloads(t *testing.T) {
	pollConfigEvery(t, 20*time.Millisecond)
	agent := legacyagent.New(legacyagent.Options{})
	defer agent.Close()
	var mu sync.Mutex
	var seen string
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			mu.Lock()
			seen = r.Header.Get("X-Api-Key")
			mu.Unlock()
		}
		agent.ServeHTTP(w, r)
	}))
	defer backend.Close()
	keyFile := testfiles.Write(t, "api-key", []byte("first-key\n"))
	config := strings.Replace(gatewayConfig(backend.URL+"/", "Keyed"), `      dialect: "0.2.5"`,
		"      dialect: \"0.2.5\"\n      headers:\n        - {name: X-Api-Key, value_file: "+keyFile+"}", 1)
	g := startGateway(t, config)
	sent := 0
	keySeen := func() string {
		t.Helper()
		sent++ // a message id of its own: a repeated one is a retry, answered without the backend
		body := `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m` + strconv.Itoa(sent) + `","role":"user","parts":[{"kind":"text","text":"what is A2A?"}]}}}`
		res, err := http.Post(g.url+"/", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		mu.Lock()
		defer mu.Unlock()
		return seen
	}
	if got := keySeen(); got != "first-key" {
		t.Fatalf("the backend got X-Api-Key %q", got)
	}
	rewriteConfig(t, keyFile, []byte("second-key\n"))
	eventually(t, "the rotated key at the backend", func() bool { return keySeen() == "second-key" })

	if got := reloadMetric(t, g, "success"); got != "1" {
		t.Errorf("reloads counted as success: %q, want 1", got)
	}
}

// TestReloadedGenerationDrainedAtExit: push deliveries a generation a
// reload replaced still holds when the gateway stops are drained within
// the shutdown's bound and what is left is abandoned, logged, before the
// gateway returns, not lost with the process unseen.
func TestReloadedGenerationDrainedAtExit(t *testing.T) {
	pollConfigEvery(t, 20*time.Millisecond)
	arrived, hung := make(chan struct{}, 8), make(chan struct{})
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select {
		case <-hung:
		case <-r.Context().Done():
		}
	}))
	defer hook.Close()
	defer close(hung)
	backend := startLegacyBackend(t)
	config := func(name string) string {
		return strings.Replace(gatewayConfig(backend.URL+"/", name), "agents:", "server:\n  shutdown_timeout: 1s\nagents:", 1) +
			"    push:\n      allowed_cidrs: [127.0.0.0/8]\n"
	}
	g := startGateway(t, config("First"))
	call := func(body string) gjson.Result {
		t.Helper()
		res, err := http.Post(g.url+"/", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if !gjson.GetBytes(b, "result").Exists() {
			t.Fatalf("%s: %s", body, b)
		}
		return gjson.GetBytes(b, "result")
	}
	task := call(`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m1","contextId":"c","role":"user","parts":[{"kind":"text","text":"input please"}]}}}`)
	id := task.Get("id").Str
	call(`{"jsonrpc":"2.0","id":2,"method":"tasks/pushNotificationConfig/set","params":{"taskId":"` + id + `","pushNotificationConfig":{"url":"` + hook.URL + `/hook","token":"t"}}}`)
	// The relay the gateway gave the backend, read from the backend.
	res, err := http.Post(backend.URL+"/", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":3,"method":"tasks/pushNotificationConfig/get","params":{"id":"`+id+`","pushNotificationConfigId":"a2a-gateway-relay"}}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	relay := gjson.GetBytes(b, "result.pushNotificationConfig")
	path := relay.Get("url").Str[strings.Index(relay.Get("url").Str, "/push/"):]
	req, _ := http.NewRequest(http.MethodPost, g.url+path, strings.NewReader(`{"kind":"task","id":"`+id+`","contextId":"c","status":{"state":"working"}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-A2A-Notification-Token", relay.Get("token").Str)
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("the delivery: %v %v", res, err)
	}
	<-arrived // in flight at the webhook, which does not answer

	rewriteConfig(t, g.path, []byte(config("Second")))
	eventually(t, "the reload", func() bool { return cardName(t, g) == "Second" })
	start := time.Now()
	g.stop()
	err = <-g.done
	g.done <- err
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the gateway took %s to stop", took)
	}
	if !strings.Contains(g.log.String(), `"msg":"push deliveries abandoned at shutdown","agent":"helpdesk","abandoned":1`) {
		t.Errorf("the replaced generation's delivery is not accounted for in the gateway's log:\n%s", g.log.String())
	}
}
