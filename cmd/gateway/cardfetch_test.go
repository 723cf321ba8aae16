package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2agate/gateway/proxy"
)

// blockingCards is a backend whose card requests all wait until release is
// closed (or the gateway gives up on them), then get card. bothWaiting is
// closed once two of them wait at the same time.
type blockingCards struct {
	card        []byte
	release     chan struct{}
	waiting     atomic.Int32
	bothWaiting chan struct{}
	once        sync.Once
}

func (b *blockingCards) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if b.waiting.Add(1) >= 2 {
		b.once.Do(func() { close(b.bothWaiting) })
	}
	defer b.waiting.Add(-1)
	select {
	case <-b.release:
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b.card)
	case <-r.Context().Done():
	}
}

// TestStartWaitsForCardsAtOnceAndInTime: two agents whose backends hold
// their cards are read at once, the start returns at card.fetch_timeout
// with both unready, and /readyz turns ready once the cards are served.
func TestStartWaitsForCardsAtOnceAndInTime(t *testing.T) {
	legacy := startLegacyBackend(t)
	_, card := httpGet(t, legacy.URL+"/.well-known/agent.json")
	cards := &blockingCards{card: []byte(card), release: make(chan struct{}), bothWaiting: make(chan struct{})}
	backend := httptest.NewServer(cards)
	t.Cleanup(backend.Close)
	released := false
	t.Cleanup(func() {
		if !released {
			close(cards.release)
		}
	})
	config := `listen: 127.0.0.1:0
admin:
  listen: 127.0.0.1:0
agents:
`
	for _, name := range []string{"first", "second"} {
		config += `  - name: ` + name + `
    path: /` + name + `/
    public_url: http://gateway.test/` + name + `/
    backend:
      url: ` + backend.URL + `/` + name + `/
      dialect: "0.2.5"
    card:
      fetch_timeout: 1s
      refresh_interval: 100ms
`
	}
	started := time.Now()
	g := startGateway(t, config)
	if took := time.Since(started); took > 10*time.Second {
		t.Errorf("the start took %s with card.fetch_timeout 1s", took)
	}
	select {
	case <-cards.bothWaiting:
	default:
		t.Fatal("the gateway started without ever asking for both agents' cards at once: it read them one after the other")
	}
	code, body := httpGet(t, g.admin+"/readyz")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "agent first: no card") || !strings.Contains(body, "agent second: no card") {
		t.Fatalf("readyz before any card: HTTP %d %q, want 503 naming both agents", code, body)
	}
	close(cards.release)
	released = true
	eventually(t, "ready once the cards are served", func() bool {
		code, _ := httpGet(t, g.admin+"/readyz")
		return code == http.StatusOK
	})
	if code, _ := httpGet(t, g.url+"/second/.well-known/agent.json"); code != http.StatusOK {
		t.Errorf("the second agent's card: HTTP %d", code)
	}
}

// TestReloadRecoversPanicBuildingAnAgent: a panic while one agent is built
// (on a goroutine of its own) is recovered as a panic of build is: the
// reload is refused, logged with the agent's name and where it happened,
// and the old config keeps serving.
func TestReloadRecoversPanicBuildingAnAgent(t *testing.T) {
	g := startReloadingGateway(t)
	real := newAgent
	newAgent = func(context.Context, proxy.AgentConfig, proxy.Options) (*proxy.Agent, error) {
		panic("a defect in an agent")
	}
	t.Cleanup(func() { newAgent = real })
	// The stack logged must be the one the panic happened on (buildAgent).
	refuseReload(t, g, 1, strings.Replace(configText(t, g), "name: First", "name: Second", 1),
		`building the new config panicked: agent \"helpdesk\": a defect in an agent`, "buildAgent")
}
