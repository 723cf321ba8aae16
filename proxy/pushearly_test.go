package proxy

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/dialect"
)

// earlySender is a 1.0 backend that posts a task's first deliveries to the
// push config of a send before it answers the send, as a2a-go v2.3.1's
// a2asrv does (its processor sends each event's push synchronously, and a
// non-blocking send answers after the first events were processed).
type earlySender struct {
	gatewayURL string // set before the first call
	mu         sync.Mutex
	path       string // the relay's path and token, once a send gave them
	token      string
	errs       []string
}

const earlyTask = `"taskId":"t1","contextId":"c1"`

func (s *earlySender) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	req := gjson.ParseBytes(b)
	if req.Get("method").Str != "SendMessage" {
		http.NotFound(w, r)
		return
	}
	cfg := req.Get("params.configuration.taskPushNotificationConfig")
	u := cfg.Get("url").Str
	i := strings.Index(u, "/push/")
	s.mu.Lock()
	if i < 0 {
		s.errs = append(s.errs, "the send carries no relay config: "+string(b))
	} else {
		s.path, s.token = u[i:], cfg.Get("token").Str
	}
	s.mu.Unlock()
	for _, d := range []string{
		`{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_SUBMITTED"},"history":[{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hello"}]}]}}`,
		`{"statusUpdate":{` + earlyTask + `,"status":{"state":"TASK_STATE_WORKING"}}}`,
		`{"artifactUpdate":{` + earlyTask + `,"artifact":{"artifactId":"a1","parts":[{"text":"result"}]}}}`,
	} {
		s.post(d)
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+req.Get("id").Raw+`,"result":{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING"}}}}`)
}

// post delivers body to the relay as the backend's sender does; failures
// are kept for the test goroutine (no t.Fatal off it).
func (s *earlySender) post(body string) {
	s.mu.Lock()
	url, token := strings.TrimSuffix(s.gatewayURL, "/")+s.path, s.token
	s.mu.Unlock()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Notification-Token", token)
	res, err := http.DefaultClient.Do(req)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.errs = append(s.errs, err.Error())
		return
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		answer, _ := io.ReadAll(res.Body)
		s.errs = append(s.errs, res.Status+": "+string(answer))
	}
}

// TestPushRelayDeliveriesBeforeTheSendAnswer: a 0.x caller gives its config
// inline in a send to a backend that posts the task, a status update and an
// artifact update before it answers. Each delivery is the task as it then
// stands: the update folds into the task the relay saw first (its state,
// its history), never into an empty task of unknown state; and the
// deliveries after the answer fold into the same task.
func TestPushRelayDeliveriesBeforeTheSendAnswer(t *testing.T) {
	backend := &earlySender{}
	g := newGateway(t, backend, dialect.Version10, allowLoopback)
	backend.gatewayURL = g.url
	rcv := newReceiver(t, 0)
	c := caller{dialect.V03}
	inline := `"blocking":false,"pushNotificationConfig":{"url":"` + rcv.url + `","token":"caller-token"}`
	task := c.task(t, mustResult(t, g.call("1", c.method(dialect.SendMessage), c.send("m1", c.text("hello"), inline))))
	if task.Get("id").Str != "t1" {
		t.Fatalf("send answered %s", task.Raw)
	}
	backend.post(`{"statusUpdate":{` + earlyTask + `,"status":{"state":"TASK_STATE_COMPLETED"}}}`)
	backend.mu.Lock()
	errs := backend.errs
	backend.mu.Unlock()
	if len(errs) > 0 {
		t.Fatalf("the relay refused deliveries: %v", errs)
	}
	for i, want := range []string{"submitted", "working", "working", "completed"} {
		d := rcv.next(t)
		b := d.body
		if b.Get("kind").Str != "task" || b.Get("id").Str != "t1" || b.Get("status.state").Str != want {
			t.Fatalf("delivery %d: %s, want a %s task", i, b.Raw, want)
		}
		if b.Get(`history.#(messageId=="m1").role`).Str != "user" {
			t.Fatalf("delivery %d lost the task's history: %s", i, b.Raw)
		}
		if i >= 2 && b.Get("artifacts.0.parts.0.text").Str != "result" {
			t.Fatalf("delivery %d lacks the artifact folded in: %s", i, b.Raw)
		}
	}
	rcv.none(t, g)
	got := mustResult(t, g.call("2", c.method(dialect.GetPushConfig), `{"id":"t1","pushNotificationConfigId":"t1"}`))
	if got.Get("pushNotificationConfig.url").Str != rcv.url || got.Get("pushNotificationConfig.token").Str != "caller-token" {
		t.Fatalf("read-back after an early delivery: %s", got.Raw)
	}
}
