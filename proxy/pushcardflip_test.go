package proxy

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/legacyagent"
)

// TestPushRelayOutlivesACardWithoutPush: with push.enabled left to the
// card, a relay made while the backend's card advertised push keeps
// delivering after a refresh reads a card that no longer does (a backend
// mid-deploy, or one that misstates its capabilities): the backend holds
// the relay's URL for the task and posts there, and the caller's webhook
// must not lose what it posts. Before, every such delivery was answered
// 404, and the caller's webhook got nothing, silently.
func TestPushRelayOutlivesACardWithoutPush(t *testing.T) {
	var noPush atomic.Bool
	agent := legacyagent.New(legacyagent.Options{})
	t.Cleanup(agent.Close)
	back := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !noPush.Load() || !strings.Contains(r.URL.Path, "/.well-known/") {
			agent.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		agent.ServeHTTP(rec, r)
		card := strings.Replace(rec.Body.String(), `"pushNotifications":true`, `"pushNotifications":false`, 1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rec.Code)
		_, _ = io.WriteString(w, card)
	})
	g := newGateway(t, back, dialect.Version025, allowLoopback)
	rcv := newReceiver(t, 0)
	c := callers[0]
	id, path, token := pushedTask(t, g, c, dialect.Version025, rcv.url)
	noPush.Store(true)
	if err := g.agent.RefreshCard(context.Background()); err != nil {
		t.Fatal(err)
	}
	if g.agent.push.on() {
		t.Fatal("the card without push did not turn the relay off for new configs")
	}
	header, bodies := backendDeliveries(dialect.Version025, id, "c")
	if status, body := deliver(t, g, path, header, token, bodies[0]); status != http.StatusOK {
		t.Fatalf("a delivery to the task's relay after the card dropped push: HTTP %d %s", status, body)
	}
	if got := rcv.next(t).body.Get("id").Str; got != id {
		t.Fatalf("the webhook got a delivery for %q, want %q", got, id)
	}
	if status, _ := deliver(t, g, path, header, "forged", bodies[0]); status != http.StatusNotFound {
		t.Fatalf("a forged token: HTTP %d, want 404", status)
	}
}
