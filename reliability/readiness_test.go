package reliability

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/internal/testnet"
)

// TestReadinessFollowsBackend starts the gateway while a backend is away,
// brings the backend up, takes it away and brings it back. /readyz follows
// within seconds each time (the card refresh retries), callers of that
// agent get -32603 naming the unreachable backend while it is away, and the
// last good card stays published.
func TestReadinessFollowsBackend(t *testing.T) {
	const refresh = 2 * time.Second
	f := newFault(t, "backend away at start, back, away again, back")
	be := startBackends(t)
	relay := testnet.NewRelay(t, be.legacy.Listener.Addr().String())
	relay.Cut()
	cfg := be.config()
	cfg.legacyURL = "http://" + relay.Addr + "/"
	cfg.cardRefresh = refresh
	g := startGateway(t, cfg.yaml())
	cl := newClient(t, g.url, 4)
	card := func() (int, string) {
		status, body, err := httpGet(g.url + legacyPath + "/.well-known/agent-card.json")
		if err != nil {
			t.Fatal(err)
		}
		return status, body
	}
	// away checks what callers of the legacy agent get while its backend
	// is away, and that the other agent still serves.
	away := func(when string) {
		t.Helper()
		got := map[string]int{}
		for i, tg := range targets {
			_, err := cl.sendAndCheck(context.Background(), tg, fmt.Sprintf("a%d %s", i, when), "hello "+when)
			if tg.path == modernPath {
				if err != nil {
					t.Errorf("%s %s: the other agent failed: %v", when, tg, err)
				}
				continue
			}
			var e rpcError
			if !errors.As(err, &e) || e.code != -32603 || !strings.Contains(e.message, `backend "legacy" is unreachable`) {
				t.Errorf("%s %s: got %v, want -32603 naming the unreachable backend", when, tg, err)
				continue
			}
			got[e.Error()]++
		}
		for a, n := range got {
			f.saw("%s: %d callers got %s", when, n, a)
		}
	}
	serving := func(when string) {
		t.Helper()
		for i, tg := range targets {
			if _, err := cl.sendAndCheck(context.Background(), tg, fmt.Sprintf("s%d %s", i, when), "hello "+when); err != nil {
				t.Errorf("%s %s: %v", when, tg, err)
			}
		}
	}
	readyWithin := func(want int, reason, when string) {
		t.Helper()
		var body string
		took := eventually(t, 15*time.Second, fmt.Sprintf("/readyz %d %s", want, when), func() bool {
			var status int
			status, body = g.readyz(t)
			return status == want && strings.Contains(body, reason)
		})
		f.saw("%s: /readyz %d %q within %s", when, want, reasonOf(body), took.Round(100*time.Millisecond))
	}

	readyWithin(http.StatusServiceUnavailable, "agent legacy: no card from the backend yet", "away at start")
	if status, _ := card(); status != http.StatusServiceUnavailable {
		t.Errorf("card of an agent whose backend never answered: HTTP %d, want 503", status)
	}
	away("away at start")

	relay.Restore()
	readyWithin(http.StatusOK, "ready", "back")
	serving("back")

	relay.Cut()
	readyWithin(http.StatusServiceUnavailable, "agent legacy: backend unreachable, serving its last good card", "away again")
	if status, body := card(); status != http.StatusOK || gjson.Get(body, "name").Str != cfg.cardName {
		t.Errorf("the last good card is not served while the backend is away: HTTP %d %.200s", status, body)
	}
	away("away again")

	relay.Restore()
	readyWithin(http.StatusOK, "ready", "back again")
	serving("back again")
}

// reasonOf shortens a /readyz answer for the summary: its first reason,
// without the underlying error's details (addresses, URLs).
func reasonOf(body string) string {
	line, _, _ := strings.Cut(body, "\n")
	parts := strings.SplitN(line, ": ", 3)
	return strings.Join(parts[:min(len(parts), 2)], ": ")
}
