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

// cardFlipBackend is a 0.2.5 agent whose card says no push while noPush
// is set, the rest of it served as it is.
func cardFlipBackend(t *testing.T) (http.Handler, *atomic.Bool) {
	var noPush atomic.Bool
	agent := legacyagent.New(legacyagent.Options{})
	t.Cleanup(agent.Close)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !noPush.Load() || !strings.Contains(r.URL.Path, "/.well-known/") {
			agent.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		agent.ServeHTTP(rec, r)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rec.Code)
		_, _ = io.WriteString(w, strings.Replace(rec.Body.String(), `"pushNotifications":true`, `"pushNotifications":false`, 1))
	}), &noPush
}

// TestPushRelayOutlivesACardWithoutPush: with push.enabled left to the
// card, a relay made while the backend's card advertised push keeps
// delivering after a refresh reads a card that no longer does (a backend
// mid-deploy, or one that misstates its capabilities): the backend holds
// the relay's URL for the task and posts there, and the caller's webhook
// must not lose what it posts. Before, every such delivery was answered
// 404, and the caller's webhook got nothing, silently.
func TestPushRelayOutlivesACardWithoutPush(t *testing.T) {
	back, noPush := cardFlipBackend(t)
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

// TestPushConfigsOfARelayThatOutlivedTheCard: after a refresh reads a card
// without push, the push config calls of a task whose relay outlived it are
// still the relay's: a get and a list show the caller's own webhook, not
// the relay's URL and token the backend holds, and a delete removes the
// caller's config, not the backend's relay under the gateway's record.
// Before, each passed to the backend, which answered with the relay's.
func TestPushConfigsOfARelayThatOutlivedTheCard(t *testing.T) {
	back, noPush := cardFlipBackend(t)
	g := newGateway(t, back, dialect.Version025, allowLoopback)
	rcv := newReceiver(t, 0)
	c := callers[0]
	id, _, token := pushedTask(t, g, c, dialect.Version025, rcv.url)
	noPush.Store(true)
	if err := g.agent.RefreshCard(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := mustResult(t, g.call("3", c.method(dialect.GetPushConfig), `{"id":"`+id+`","pushNotificationConfigId":"cfg1"}`))
	if u := got.Get("pushNotificationConfig.url").Str; u != rcv.url || strings.Contains(got.Raw, token) {
		t.Fatalf("get after the card dropped push shows %s, want the caller's webhook %s", got.Raw, rcv.url)
	}
	l := mustResult(t, g.call("4", c.method(dialect.ListPushConfigs), `{"id":"`+id+`"}`))
	if u := l.Get("0.pushNotificationConfig.url").Str; u != rcv.url || strings.Contains(l.Raw, token) {
		t.Fatalf("list after the card dropped push shows %s, want the caller's webhook", l.Raw)
	}
	mustResult(t, g.call("5", c.method(dialect.DeletePushConfig), `{"id":"`+id+`","pushNotificationConfigId":"cfg1"}`))
	if configs, _, err := g.agent.push.configs.PushConfigs(context.Background(), g.agent.cfg.Name, id); err != nil || len(configs) != 0 {
		t.Fatalf("after the delete the gateway holds %d configs of the task (%v), want none", len(configs), err)
	}
}

// TestPushConfigsSetBeforeTheCardTurnedPushOn: with push.enabled left to
// the card, a config a caller set while the card advertised no push lives
// at the backend (the relay was off); after a refresh reads a card with
// push, a get and a list still show it and a delete removes it there.
// Before, the gateway answered them from its own store, which holds no
// config of the task: the caller could neither see nor delete its webhook,
// which the backend kept posting to.
func TestPushConfigsSetBeforeTheCardTurnedPushOn(t *testing.T) {
	back, noPush := cardFlipBackend(t)
	noPush.Store(true)
	g := newGateway(t, back, dialect.Version03, allowLoopback)
	if err := g.agent.RefreshCard(context.Background()); err != nil {
		t.Fatal(err)
	}
	if g.agent.push.on() {
		t.Fatal("the relay is on in front of a card without push")
	}
	c := callers[0]
	const hook = "https://hooks.example/mine"
	id := c.task(t, mustResult(t, g.call("1", c.method(dialect.SendMessage), c.send("m1", c.text("input please"), "")))).Get("id").Str
	set, _ := callerPush(c, id, hook)
	mustResult(t, g.call("2", c.method(dialect.CreatePushConfig), set))
	noPush.Store(false)
	if err := g.agent.RefreshCard(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !g.agent.push.on() {
		t.Fatal("the card with push did not turn the relay on")
	}
	got := mustResult(t, g.call("3", c.method(dialect.GetPushConfig), `{"id":"`+id+`","pushNotificationConfigId":"cfg1"}`))
	if u := got.Get("pushNotificationConfig.url").Str; u != hook {
		t.Fatalf("get after the card turned push on: %s, want the caller's webhook %s", got.Raw, hook)
	}
	l := mustResult(t, g.call("4", c.method(dialect.ListPushConfigs), `{"id":"`+id+`"}`))
	if u := l.Get("0.pushNotificationConfig.url").Str; u != hook {
		t.Fatalf("list after the card turned push on: %s, want the caller's webhook", l.Raw)
	}
	mustResult(t, g.call("5", c.method(dialect.DeletePushConfig), `{"id":"`+id+`","pushNotificationConfigId":"cfg1"}`))
	l = mustResult(t, g.call("6", c.method(dialect.ListPushConfigs), `{"id":"`+id+`"}`))
	if strings.Contains(l.Raw, hook) {
		t.Fatalf("the backend still holds the webhook after the delete: %s", l.Raw)
	}
}
