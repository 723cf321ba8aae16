package proxy

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strings"
	"sync"

	"github.com/a2agate/gateway/normalize"
	"github.com/a2agate/gateway/push"
	"github.com/a2agate/gateway/store"
)

// The push relay: the gateway keeps every caller's push config (URL, token,
// authentication, dialect) in the task index store and gives the backend a
// config of its own, one per task, pointing at {public_url}/push/{relay id}
// with a token of its own. Deliveries the backend posts there are checked,
// translated into each caller's dialect and forwarded by a push.Queue.

// relayConfigID is the id of the config the gateway gives a backend: one
// per task, so a set of it replaces the last.
const relayConfigID = "a2a-gateway-relay"

// pushRelay is an agent's relay; nil when the agent's store keeps no push
// configs or agents[].push.enabled is false.
type pushRelay struct {
	a       *Agent
	cfg     push.Config
	policy  *push.Policy
	configs store.PushStore
	queue   *push.Queue
	closed  sync.Once
	// untrack takes the queue's depth out of the metrics once closed.
	untrack func()
}

// newPushRelay builds the relay of a, or returns nil when it is off.
func newPushRelay(a *Agent) (*pushRelay, error) {
	cfg := a.cfg.Push
	if cfg.Enabled != nil && !*cfg.Enabled {
		return nil, nil
	}
	ps, ok := a.tasks.(store.PushStore)
	if !ok {
		a.log.Warn("the task index keeps no push configs: push configs pass through to the backend unrelayed")
		return nil, nil
	}
	policy, err := cfg.Policy()
	if err != nil {
		return nil, fmt.Errorf("agent %q: push: %w", a.cfg.Name, err)
	}
	p := &pushRelay{a: a, cfg: cfg, policy: policy, configs: ps}
	p.queue = push.NewQueue(&cfg, push.NewSender(&cfg, policy), push.Observer{OnOutcome: p.delivered, StartAttempt: p.startPushAttempt})
	p.untrack = a.metrics.pushQueue(a.cfg.Name, p.queue.Len)
	return p, nil
}

// on reports whether the relay serves now: agents[].push.enabled, or by
// default whether the backend's card advertises push notifications. Before
// the first card is read the relay is on: passing a config through
// unchecked is the one choice that could open the backend's network.
func (p *pushRelay) on() bool {
	if p == nil {
		return false
	}
	if p.cfg.Enabled != nil {
		return *p.cfg.Enabled
	}
	p.a.cards.mu.RLock()
	defer p.a.cards.mu.RUnlock()
	return p.a.cards.canon == nil || p.a.cards.pushCapable
}

// close drains the queue until ctx ends; see push.Queue.Close.
func (p *pushRelay) close(ctx context.Context) (abandoned int, err error) {
	if p == nil {
		return 0, nil
	}
	p.closed.Do(func() {
		abandoned, err = p.queue.Close(ctx)
		p.untrack()
	})
	return abandoned, err
}

// ClosePush stops the agent's push relay from taking deliveries and sends
// the queued ones until ctx ends (server.shutdown_timeout); it reports how
// many were abandoned.
func (a *Agent) ClosePush(ctx context.Context) (abandoned int, err error) {
	return a.push.close(ctx)
}

// randomID returns 128 random bits, base64url: unguessable, URL-safe.
func randomID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func newRelay(agent string) store.PushRelay {
	return store.PushRelay{ID: randomID(), Token: randomID() + randomID(), Agent: agent}
}

// relayURL is where the backend posts a relay's deliveries.
func (p *pushRelay) relayURL(relayID string) string {
	return strings.TrimSuffix(p.a.cfg.PublicURL, "/") + "/push/" + relayID
}

// relayConfig is the push config the backend holds for a relay.
func (p *pushRelay) relayConfig(r store.PushRelay) []byte {
	return normalize.RelayPushConfig(relayConfigID, p.relayURL(r.ID), r.Token)
}
