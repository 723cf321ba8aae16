package reliability

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// heldCalls are calls on "wait" tasks, in flight until the backends release
// them: blocking sends and streams, in both dialects to both backends.
type heldCalls struct {
	wg      sync.WaitGroup
	mu      sync.Mutex
	results []heldResult
}

// heldResult is what one held call received.
type heldResult struct {
	kind   string
	target target
	err    error
}

// startHeld starts perTarget sends and perTarget streams for each dialect
// pair and returns once every one of them reached its backend.
func startHeld(t *testing.T, cl *client, be *backends, perTarget int, prefix string) *heldCalls {
	t.Helper()
	h := &heldCalls{}
	for _, tg := range targets {
		for i := range perTarget {
			for _, kind := range []string{callSend, callStream} {
				text := fmt.Sprintf("wait %s %s %s %d", prefix, kind, tg, i)
				id := fmt.Sprintf("held-%s-%s-%d", kind, tg, i)
				h.wg.Go(func() {
					ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
					defer cancel()
					var err error
					if kind == callSend {
						_, err = cl.sendAndCheck(ctx, tg, id, text)
					} else {
						_, err = cl.streamAndCheck(ctx, tg, id, text)
					}
					h.mu.Lock()
					h.results = append(h.results, heldResult{kind: kind, target: tg, err: err})
					h.mu.Unlock()
				})
			}
		}
	}
	be.seen.awaitWaits(t, 2*perTarget*len(targets), 30*time.Second)
	return h
}

// wait returns the results once every held call is answered.
func (h *heldCalls) wait() []heldResult {
	h.wg.Wait()
	return h.results
}

// checkHeld fails the test for every held call that did not complete, and
// returns how many did.
func checkHeld(t *testing.T, results []heldResult) (sends, streams int) {
	t.Helper()
	for _, r := range results {
		switch {
		case r.err != nil:
			t.Errorf("held %s %s: %v", r.kind, r.target, r.err)
		case r.kind == callSend:
			sends++
		default:
			streams++
		}
	}
	return sends, streams
}
