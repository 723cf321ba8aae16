package proxy

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/agent10"
	"github.com/a2agate/gateway/internal/testlog"
	"github.com/a2agate/gateway/legacyagent"
)

// TestAutoDialectChangeOnTheCardIsLogged: with dialect auto, a refresh
// that reads a card naming another dialect than the one chosen from the
// card at start (the backend was upgraded in place) logs a warning, once,
// naming both and what to do: the gateway goes on speaking the dialect it
// chose, so every call may now fail, and until now nothing said why. A
// card back on the chosen dialect clears it, so a later change warns again.
func TestAutoDialectChangeOnTheCardIsLogged(t *testing.T) {
	legacy := legacyagent.New(legacyagent.Options{})
	t.Cleanup(legacy.Close)
	modern := agent10.New(agent10.Options{})
	t.Cleanup(modern.Close)
	var upgraded atomic.Bool
	back := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if upgraded.Load() {
			modern.ServeHTTP(w, r)
			return
		}
		legacy.ServeHTTP(w, r)
	})
	var logs testlog.Buffer
	g := newGatewayOpts(t, back, dialect.VersionAuto, Options{Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	if v := g.agent.backend.version; v != dialect.Version025 {
		t.Fatalf("auto chose %s", v)
	}
	refresh := func() {
		t.Helper()
		if err := g.agent.RefreshCard(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	const warning = `"msg":"the backend's card now names another dialect than the one chosen from it at start`
	refresh()
	if strings.Contains(logs.String(), warning) {
		t.Fatalf("warned with the card unchanged: %s", logs.String())
	}
	upgraded.Store(true)
	refresh()
	refresh()
	out := logs.String()
	if n := strings.Count(out, warning); n != 1 || !strings.Contains(out, `"speaking":"0.2.5"`) || !strings.Contains(out, `"card_dialect":"1.0"`) {
		t.Fatalf("want one warning naming 0.2.5 and 1.0: %s", out)
	}
	upgraded.Store(false)
	refresh()
	upgraded.Store(true)
	refresh()
	if n := strings.Count(logs.String(), warning); n != 2 {
		t.Fatalf("a second change warned %d times in all, want 2", n)
	}
}
