package proxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/dialect"
)

// heldReceiver is a webhook that records each delivery and answers it
// only once released.
type heldReceiver struct {
	url     string
	release chan struct{}
	arrived chan struct{}
	mu      sync.Mutex
	states  []string
}

func newHeldReceiver(t *testing.T, release chan struct{}) *heldReceiver {
	r := &heldReceiver{release: release, arrived: make(chan struct{}, 16)}
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.states = append(r.states, gjson.GetBytes(b, "statusUpdate.status.state").Str+gjson.GetBytes(b, "task.status.state").Str)
		r.mu.Unlock()
		r.arrived <- struct{}{}
		<-r.release
	}))
	t.Cleanup(s.Close)
	r.url = s.URL + "/hook"
	return r
}

// awaitArrival waits for the next delivery to arrive, up to a bound.
func (r *heldReceiver) awaitArrival(t *testing.T) {
	t.Helper()
	select {
	case <-r.arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("no delivery reached the webhook within 10s")
	}
}

func (r *heldReceiver) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.states...)
}

// TestPushFanOutRefusedWhole: a notification for a task with three
// webhooks, posted when the queue has room for one more delivery only, is
// refused whole (503): the backend's retry then reaches each webhook once.
// Before, the first webhook's delivery was queued before the queue filled,
// and the retry delivered it a second time.
func TestPushFanOutRefusedWhole(t *testing.T) {
	release := make(chan struct{})
	g := newGateway(t, backends[1].handler(t, nil), backends[1].version, allowLoopback, func(a *AgentConfig) { a.Push.QueueSize = 4 })
	c := caller{dialect.V10}
	hooks := []*heldReceiver{newHeldReceiver(t, release), newHeldReceiver(t, release), newHeldReceiver(t, release)}
	id, path, token := pushedTask(t, g, c, dialect.Version10, hooks[0].url)
	for i, h := range hooks[1:] {
		n := string(rune('2' + i))
		mustResult(t, g.call("3", "CreateTaskPushNotificationConfig", `{"taskId":"`+id+`","id":"cfg`+n+`","url":"`+h.url+`"}`))
	}
	working := `{"statusUpdate":{"taskId":"` + id + `","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}`
	completed := `{"statusUpdate":{"taskId":"` + id + `","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"}}}`
	if status, answer := deliver(t, g, path, "A2A-Notification-Token", token, working); status != http.StatusOK {
		t.Fatalf("first notification answered %d: %s", status, answer)
	}
	for _, h := range hooks {
		h.awaitArrival(t) // all three in flight, held: the queue holds 3 of 4
	}
	if status, _ := deliver(t, g, path, "A2A-Notification-Token", token, completed); status != http.StatusServiceUnavailable {
		t.Fatalf("a notification for three webhooks into a queue with room for one answered %d, want 503", status)
	}
	close(release)
	g.agent.push.waitIdle(t)
	if status, answer := deliver(t, g, path, "A2A-Notification-Token", token, completed); status != http.StatusOK {
		t.Fatalf("the backend's retry answered %d: %s", status, answer)
	}
	for _, h := range hooks {
		h.awaitArrival(t)
	}
	g.agent.push.waitIdle(t)
	for i, h := range hooks {
		if got := h.got(); len(got) != 2 || got[0] != "TASK_STATE_WORKING" || got[1] != "TASK_STATE_COMPLETED" {
			t.Errorf("webhook %d got %q, want each notification once", i+1, got)
		}
	}
}
