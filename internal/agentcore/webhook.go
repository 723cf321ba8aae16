package agentcore

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"time"
)

// webhookTimeout bounds one POST to a push config's URL.
const webhookTimeout = 5 * time.Second

var webhookClient = &http.Client{Timeout: webhookTimeout}

// Webhooks is how a wire sends push notifications, as its dialect's SDK
// senders do.
type Webhooks[M, A, C any] struct {
	// TokenHeader carries a config's token.
	TokenHeader string
	// Target is where a config sends and the token it presents.
	Target func(C) (url, token string)
	// Bodies are the notifications that events, which the task now at task
	// went through, send: a 0.x SDK sends the whole task once, a 1.0 SDK
	// each event's StreamResponse.
	Bodies func(task Task[M, A], events []Event[M, A]) []any
}

// SendWebhooks makes the agent notify every push config stored from now on.
func (c *Core[M, A, C]) SendWebhooks(w Webhooks[M, A, C]) { c.webhooks = &w }

// notify starts, once per task, the goroutine that sends the task's push
// notifications, following its events from the moment the first config is
// stored until the task ends. Call it with the store's mutex held.
func (c *Core[M, A, C]) notify(rec *Record[M, A, C]) {
	if c.webhooks == nil || rec.notifying {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	rec.notifying = true
	c.scripts.Add(1)
	cursor := len(rec.updates)
	go func() {
		defer c.scripts.Done()
		c.sendWebhooks(rec, cursor)
	}()
}

func (c *Core[M, A, C]) sendWebhooks(rec *Record[M, A, C], cursor int) {
	s := c.store
	for {
		s.mu.Lock()
		pending, changed, configs := slices.Clone(rec.updates[cursor:]), rec.changed, slices.Clone(rec.push)
		task := snapshotLocked(rec)
		s.mu.Unlock()
		cursor += len(pending)
		if len(pending) > 0 {
			events := make([]Event[M, A], len(pending))
			for i, u := range pending {
				events[i] = u.event
			}
			for _, v := range c.webhooks.Bodies(task, events) {
				body, err := json.Marshal(v)
				if err != nil {
					continue
				}
				for _, p := range configs {
					url, token := c.webhooks.Target(p.Config)
					c.postWebhook(url, token, body)
				}
			}
			if task.Status.State.Terminal() {
				return
			}
		}
		if !awaitChange(c.ctx, c.done, changed) {
			return
		}
	}
}

// postWebhook POSTs one notification; a failure is the receiver's loss, as
// with the SDKs' senders, which log and move on.
func (c *Core[M, A, C]) postWebhook(url, token string, body []byte) {
	req, err := http.NewRequestWithContext(c.ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set(c.webhooks.TokenHeader, token)
	}
	if res, err := webhookClient.Do(req); err == nil {
		res.Body.Close()
	}
}
