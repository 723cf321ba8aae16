package legacyagent

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"time"
)

// webhookTimeout bounds one POST to a push config's URL.
const webhookTimeout = 5 * time.Second

var webhookClient = &http.Client{Timeout: webhookTimeout}

// notify starts, once per task, the goroutine that sends the task's push
// notifications: as 0.2.5 SDKs do, the whole task after each event, with
// the config's token in X-A2A-Notification-Token. It follows the task's
// events from the moment the first config is set until the task ends.
// Call it with s.mu held.
func (a *Agent) notify(rec *record) {
	if rec.notifying {
		return
	}
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return
	}
	rec.notifying = true
	a.scripts.Add(1)
	a.mu.Unlock()
	cursor := len(rec.updates)
	go func() {
		defer a.scripts.Done()
		a.sendWebhooks(rec, cursor)
	}()
}

func (a *Agent) sendWebhooks(rec *record, cursor int) {
	s := a.store
	for {
		s.mu.Lock()
		n, changed, configs := len(rec.updates), rec.changed, slices.Clone(rec.push)
		s.mu.Unlock()
		if n > cursor {
			cursor = n
			t := s.snapshot(rec, 0)
			body, _ := json.Marshal(t)
			for _, c := range configs {
				postWebhook(a.ctx, c.URL, c.Token, body)
			}
			if isTerminal(t.Status.State) {
				return
			}
		}
		select {
		case <-changed:
		case <-a.ctx.Done():
			return
		}
	}
}

// postWebhook POSTs one notification; a failure is the receiver's loss, as
// with the SDKs' senders, which log and move on.
func postWebhook(ctx context.Context, url, token string, body []byte) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("X-A2A-Notification-Token", token)
	}
	res, err := webhookClient.Do(req)
	if err == nil {
		res.Body.Close()
	}
}
