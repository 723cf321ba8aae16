package reliability

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

// rewriteConfig replaces the gateway's config file atomically, as a
// ConfigMap update does: the gateway never reads half a file.
func rewriteConfig(t *testing.T, path, config string) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), ".next.yaml")
	if err := os.WriteFile(tmp, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// cardNames returns the name on each published agent's card.
func (g *gatewayProc) cardNames(t *testing.T) []string {
	t.Helper()
	var names []string
	for _, path := range []string{legacyPath, modernPath} {
		status, body, err := httpGet(g.url + path + "/.well-known/agent-card.json")
		if err != nil || status != http.StatusOK {
			t.Fatalf("card of %s: HTTP %d %v: %.200s", path, status, err, body)
		}
		names = append(names, gjson.Get(body, "name").Str)
	}
	return names
}

// reloads returns the reload counter for result.
func (g *gatewayProc) reloads(t *testing.T, result string) int {
	t.Helper()
	v, err := g.metric("a2a_gateway_config_reloads_total", `result="`+result+`"`)
	if err != nil {
		t.Fatal(err)
	}
	return int(v)
}

// waitForLog waits for the gateway to log msg. A reload logs its outcome
// after it swaps the config and counts the reload, so once the line is
// here, both are done.
func (g *gatewayProc) waitForLog(t *testing.T, msg string) {
	t.Helper()
	if _, err := g.log.waitFor(20*time.Second, g.exited, func(l gjson.Result) bool { return l.Get("msg").Str == msg }); err != nil {
		t.Fatalf("waiting for the log line %q: %v\n%s", msg, err, g.log.text())
	}
}

// TestReloadUnderLoad rewrites the config file while calls run and streams
// are open: no call fails, the open streams finish (on the old config),
// the new card name is served and the reload is counted. An invalid config
// then is refused and counted, and the running one keeps serving.
func TestReloadUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("a load test: skipped with -short")
	}
	f := newFault(t, "config reload under load, then an invalid config")
	be := startBackends(t)
	cfg := be.config()
	cfg.cardName = "Before reload"
	g := startGateway(t, cfg.yaml())
	heldClient := newClient(t, g.url, 16)
	held := startHeld(t, heldClient, be, 1, "reload")
	loadClient := newClient(t, g.url, 8)
	l := startLoad(t, loadClient, loadOptions{workers: 8, prefix: "reload", warm: 40})

	cfg.cardName = "After reload"
	rewriteConfig(t, g.config, cfg.yaml())
	g.waitForLog(t, "config reloaded")
	if n := g.reloads(t, "success"); n != 1 {
		t.Errorf("reloads{success}=%d after the reload was logged, want 1", n)
	}
	names := g.cardNames(t)
	for _, n := range names {
		if n != cfg.cardName {
			t.Errorf("card name %q after the reload, want %q", n, cfg.cardName)
		}
	}
	l.progress(t, 40)
	f.saw("valid config: reloads{success}=%d, card names now %q", g.reloads(t, "success"), names)

	rewriteConfig(t, g.config, cfg.yaml()+"unknown_setting: true\n")
	g.waitForLog(t, "config reload refused; the running config keeps serving")
	l.progress(t, 40)
	names = g.cardNames(t)
	if names[0] != cfg.cardName || names[1] != cfg.cardName {
		t.Errorf("card names %q after the refused reload, want %q", names, cfg.cardName)
	}
	success, failure := g.reloads(t, "success"), g.reloads(t, "failure")
	f.saw("invalid config: refused, reloads{failure}=%d, reloads{success}=%d, card names still %q", failure, success, names)
	if success != 1 || failure != 1 {
		t.Errorf("reloads: %d success, %d failure; want 1 and 1", success, failure)
	}

	be.release()
	sends, streams := checkHeld(t, held.wait())
	f.saw("calls opened before the reload: %d/%d sends completed, %d/%d streams got their last event", sends, len(targets), streams, len(targets))
	res := l.halt()
	f.saw("load across both reloads: %s", res.summary())
	if res.failed > 0 {
		t.Errorf("%d calls failed across the reloads:\n%s", res.failed, res.failureList())
	}
	if !g.running() {
		t.Fatal("the gateway exited")
	}
}
