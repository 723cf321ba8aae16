package proxy

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/tidwall/gjson"
)

// restClient is the official a2a-go v2 REST transport pointed at the
// gateway, sending tok as its bearer token.
type restClient struct {
	t  *testing.T
	tr a2aclient.Transport
	sp a2aclient.ServiceParams
}

func newRESTClient(t *testing.T, g *testGateway, tok string) *restClient {
	t.Helper()
	u, err := url.Parse(g.url)
	if err != nil {
		t.Fatal(err)
	}
	sp := a2aclient.ServiceParams{}
	if tok != "" {
		sp["Authorization"] = []string{"Bearer " + tok}
	}
	return &restClient{t: t, tr: a2aclient.NewRESTTransport(u, &http.Client{Timeout: 30 * time.Second}), sp: sp}
}

func (c *restClient) send(text string, cfg *a2a.SendMessageConfig) a2a.SendMessageResult {
	c.t.Helper()
	res, err := c.tr.SendMessage(context.Background(), c.sp, &a2a.SendMessageRequest{
		Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text)), Config: cfg})
	if err != nil {
		c.t.Fatalf("SendMessage %q: %v", text, err)
	}
	return res
}

func (c *restClient) sendTask(text string, cfg *a2a.SendMessageConfig) *a2a.Task {
	c.t.Helper()
	task, ok := c.send(text, cfg).(*a2a.Task)
	if !ok {
		c.t.Fatalf("SendMessage %q: not a task", text)
	}
	return task
}

// forEachRESTBackend runs f against a gateway with auth on in front of each
// test backend; hold releases the backends' "wait" tasks.
func forEachRESTBackend(t *testing.T, f func(t *testing.T, g *testGateway, c *restClient, hold chan struct{})) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			hold := make(chan struct{})
			g := newGateway(t, b.handler(t, hold), b.version, withAuth(t))
			f(t, g, newRESTClient(t, g, token(t, "alice")), hold)
		})
	}
}

func TestRESTSendBlockingAndGet(t *testing.T) {
	forEachRESTBackend(t, func(t *testing.T, g *testGateway, c *restClient, _ chan struct{}) {
		task := c.sendTask("hello world", nil)
		if task.Status.State != a2a.TaskStateCompleted {
			t.Fatalf("state %q", task.Status.State)
		}
		if len(task.Artifacts) == 0 || task.Artifacts[0].Parts[0].Text() != "done: hello world" {
			t.Fatalf("artifacts: %+v", task.Artifacts)
		}
	})
}

func TestRESTGetWithHistory(t *testing.T) {
	forEachRESTBackend(t, func(t *testing.T, g *testGateway, c *restClient, _ chan struct{}) {
		ctx := context.Background()
		task := c.sendTask("input please", nil)
		if task.Status.State != a2a.TaskStateInputRequired {
			t.Fatalf("state %q", task.Status.State)
		}
		follow := a2a.NewMessageForTask(a2a.MessageRoleUser, task, a2a.NewTextPart("Ada"))
		if _, err := c.tr.SendMessage(ctx, c.sp, &a2a.SendMessageRequest{Message: follow}); err != nil {
			t.Fatal(err)
		}
		all, err := c.tr.GetTask(ctx, c.sp, &a2a.GetTaskRequest{ID: task.ID})
		if err != nil {
			t.Fatal(err)
		}
		if all.ID != task.ID || all.Status.State != a2a.TaskStateCompleted || len(all.History) < 2 {
			t.Fatalf("get: %+v", all)
		}
		one := 1
		got, err := c.tr.GetTask(ctx, c.sp, &a2a.GetTaskRequest{ID: task.ID, HistoryLength: &one})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.History) != 1 || got.History[0].ID != all.History[len(all.History)-1].ID {
			t.Fatalf("historyLength=1 must keep the newest message: %+v", got.History)
		}
	})
}

func TestRESTDirectMessage(t *testing.T) {
	forEachRESTBackend(t, func(t *testing.T, g *testGateway, c *restClient, _ chan struct{}) {
		msg, ok := c.send("what is A2A?", nil).(*a2a.Message)
		if !ok || msg.Role != a2a.MessageRoleAgent || !strings.Contains(msg.Parts[0].Text(), "what is A2A?") {
			t.Fatalf("direct answer: %+v", msg)
		}
	})
}

func TestRESTNonBlockingSendListCancel(t *testing.T) {
	forEachRESTBackend(t, func(t *testing.T, g *testGateway, c *restClient, _ chan struct{}) {
		task := c.sendTask("wait here", &a2a.SendMessageConfig{ReturnImmediately: true})
		if task.Status.State.Terminal() {
			t.Fatalf("returnImmediately answered a finished task: %q", task.Status.State)
		}
		list, err := c.tr.ListTasks(context.Background(), c.sp, &a2a.ListTasksRequest{ContextID: task.ContextID, PageSize: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Tasks) != 1 || list.Tasks[0].ID != task.ID {
			t.Fatalf("list by contextId: %+v", list)
		}
		// a2a-go sends statusTimestampAfter as lastUpdatedAfter.
		since := time.Now().Add(-time.Hour)
		list, err = c.tr.ListTasks(context.Background(), c.sp, &a2a.ListTasksRequest{StatusTimestampAfter: &since})
		if err != nil || len(list.Tasks) != 1 || list.Tasks[0].ID != task.ID {
			t.Fatalf("list by time: %+v, %v", list, err)
		}
		future := time.Now().Add(time.Hour)
		list, err = c.tr.ListTasks(context.Background(), c.sp, &a2a.ListTasksRequest{StatusTimestampAfter: &future})
		if err != nil || len(list.Tasks) != 0 {
			t.Fatalf("list of tasks updated after an hour from now: %+v, %v", list, err)
		}
		canceled, err := c.tr.CancelTask(context.Background(), c.sp, &a2a.CancelTaskRequest{ID: task.ID})
		if err != nil {
			t.Fatal(err)
		}
		if canceled.Status.State != a2a.TaskStateCanceled {
			t.Fatalf("cancel: state %q", canceled.Status.State)
		}
		// Another caller sees neither the task nor it in a list.
		bob := newRESTClient(t, g, token(t, "bob"))
		if _, err := bob.tr.GetTask(context.Background(), bob.sp, &a2a.GetTaskRequest{ID: task.ID}); !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Fatalf("bob gets alice's task: %v", err)
		}
		list, err = bob.tr.ListTasks(context.Background(), bob.sp, &a2a.ListTasksRequest{})
		if err != nil || len(list.Tasks) != 0 {
			t.Fatalf("bob's list: %+v, %v", list, err)
		}
	})
}

// TestRESTStreamNotBuffered: the working event reaches the REST caller
// while the backend still holds the task.
func TestRESTStreamNotBuffered(t *testing.T) {
	forEachRESTBackend(t, func(t *testing.T, g *testGateway, c *restClient, hold chan struct{}) {
		events := c.tr.SendStreamingMessage(context.Background(), c.sp, &a2a.SendMessageRequest{
			Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("wait for it"))})
		working := make(chan struct{})
		done := make(chan []a2a.Event, 1)
		go func() {
			var got []a2a.Event
			seen := false
			defer func() { done <- got }()
			for ev, err := range events {
				if err != nil {
					t.Errorf("stream: %v", err)
					return
				}
				got = append(got, ev)
				if su, ok := ev.(*a2a.TaskStatusUpdateEvent); ok && su.Status.State == a2a.TaskStateWorking && !seen {
					close(working)
					seen = true
				}
			}
		}()
		select {
		case <-working:
		case got := <-done:
			t.Fatalf("the stream ended before a working event: %v", got)
		case <-time.After(10 * time.Second):
			t.Fatal("the REST stream is buffered: no working event while the backend was held")
		}
		close(hold)
		got := <-done
		last, ok := got[len(got)-1].(*a2a.TaskStatusUpdateEvent)
		if !ok || last.Status.State != a2a.TaskStateCompleted {
			t.Fatalf("the stream must end completed: %+v", got[len(got)-1])
		}
	})
}

func TestRESTSubscribe(t *testing.T) {
	forEachRESTBackend(t, func(t *testing.T, g *testGateway, c *restClient, hold chan struct{}) {
		task := c.sendTask("wait a bit", &a2a.SendMessageConfig{ReturnImmediately: true})
		var first a2a.Event
		for ev, err := range c.tr.SubscribeToTask(context.Background(), c.sp, &a2a.SubscribeToTaskRequest{ID: task.ID}) {
			if err != nil {
				t.Fatal(err)
			}
			if first == nil {
				first = ev
				close(hold)
			}
		}
		if tk, ok := first.(*a2a.Task); !ok || tk.ID != task.ID {
			t.Fatalf("subscribe's first event is not the task: %+v", first)
		}
		if _, err := c.tr.GetTask(context.Background(), c.sp, &a2a.GetTaskRequest{ID: task.ID}); err != nil {
			t.Fatal(err)
		}
	})
}

func TestRESTPushConfigCRUD(t *testing.T) {
	forEachRESTBackend(t, func(t *testing.T, g *testGateway, c *restClient, _ chan struct{}) {
		task := c.sendTask("input please", nil)
		ctx := context.Background()
		cfg := &a2a.PushConfig{TaskID: task.ID, ID: "cfg1", URL: "https://hooks.example/a2a", Token: "tok",
			Auth: &a2a.PushAuthInfo{Scheme: "Bearer", Credentials: "secret"}}
		check := func(got *a2a.PushConfig, err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
			if got.TaskID != task.ID || got.ID != "cfg1" || got.URL != cfg.URL || got.Token != "tok" || got.Auth == nil || got.Auth.Scheme != "Bearer" {
				t.Fatalf("push config: %+v", got)
			}
		}
		check(c.tr.CreateTaskPushConfig(ctx, c.sp, cfg))
		check(c.tr.GetTaskPushConfig(ctx, c.sp, &a2a.GetTaskPushConfigRequest{TaskID: task.ID, ID: "cfg1"}))
		list, err := c.tr.ListTaskPushConfigs(ctx, c.sp, &a2a.ListTaskPushConfigRequest{TaskID: task.ID})
		if err != nil || len(list) != 1 {
			t.Fatalf("list: %+v, %v", list, err)
		}
		check(list[0], nil)
		if err := c.tr.DeleteTaskPushConfig(ctx, c.sp, &a2a.DeleteTaskPushConfigRequest{TaskID: task.ID, ID: "cfg1"}); err != nil {
			t.Fatal(err)
		}
		if list, err = c.tr.ListTaskPushConfigs(ctx, c.sp, &a2a.ListTaskPushConfigRequest{TaskID: task.ID}); err != nil || len(list) != 0 {
			t.Fatalf("list after delete: %+v, %v", list, err)
		}
	})
}

func TestRESTExtendedCard(t *testing.T) {
	forEachRESTBackend(t, func(t *testing.T, g *testGateway, c *restClient, _ chan struct{}) {
		card, err := c.tr.GetExtendedAgentCard(context.Background(), c.sp, &a2a.GetExtendedAgentCardRequest{})
		if err != nil {
			t.Fatal(err)
		}
		var admin bool
		for _, s := range card.Skills {
			admin = admin || s.ID == "admin"
		}
		if !admin {
			t.Fatalf("not the extended card: %+v", card.Skills)
		}
	})
}

// restDo sends one raw REST request and returns status, headers and body.
func restDo(t *testing.T, g *testGateway, method, path, contentType, body, tok string) (int, http.Header, gjson.Result) {
	t.Helper()
	res, b := g.request(t, method, path, body, "Content-Type", contentType, "Authorization", bearerOf(tok))
	if ct := res.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("%s %s: Content-Type %q: %s", method, path, ct, b)
	}
	return res.StatusCode, res.Header, gjson.ParseBytes(b)
}

// TestRESTErrors: every error the SDK's REST client can meet is a
// google.rpc.Status with the mapped HTTP status, and the client reads it as
// the A2A error it is.
func TestRESTErrors(t *testing.T) {
	forEachRESTBackend(t, func(t *testing.T, g *testGateway, c *restClient, _ chan struct{}) {
		ctx := context.Background()
		if _, err := c.tr.GetTask(ctx, c.sp, &a2a.GetTaskRequest{ID: "no-such-task"}); !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Fatalf("unknown task: %v", err)
		}
		if _, err := c.tr.CancelTask(ctx, c.sp, &a2a.CancelTaskRequest{ID: "no-such-task"}); !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Fatalf("cancel of an unknown task: %v", err)
		}
		for _, err := range c.tr.SubscribeToTask(ctx, c.sp, &a2a.SubscribeToTaskRequest{ID: "no-such-task"}) {
			if !errors.Is(err, a2a.ErrTaskNotFound) {
				t.Fatalf("subscribe to an unknown task: %v", err)
			}
		}
		done := c.sendTask("all done", nil)
		var subErr error
		for _, err := range c.tr.SubscribeToTask(ctx, c.sp, &a2a.SubscribeToTaskRequest{ID: done.ID}) {
			subErr = err
		}
		if !errors.Is(subErr, a2a.ErrUnsupportedOperation) {
			t.Fatalf("subscribe to a finished task: %v", subErr)
		}
		anon := newRESTClient(t, g, "")
		if _, err := anon.tr.GetTask(ctx, anon.sp, &a2a.GetTaskRequest{ID: "x"}); !errors.Is(err, a2a.ErrUnauthenticated) {
			t.Fatalf("no token: %v", err)
		}
		alice := token(t, "alice")
		cases := []struct {
			name, method, path, ct, body string
			status                       int
			code, reason                 string
		}{
			{"unknown task", "GET", "/tasks/no-such-task", "", "", 404, "NOT_FOUND", "TASK_NOT_FOUND"},
			{"bad JSON", "POST", "/message:send", "application/json", `{"message":`, 400, "INVALID_ARGUMENT", "PARSE_ERROR"},
			{"not an object", "POST", "/message:send", "application/json", `[1]`, 400, "INVALID_ARGUMENT", "INVALID_PARAMS"},
			{"invalid message", "POST", "/message:send", "application/a2a+json", `{"message":{"role":"ROLE_USER"}}`, 400, "INVALID_ARGUMENT", "INVALID_PARAMS"},
			{"unknown route", "GET", "/nowhere", "", "", 404, "NOT_FOUND", "METHOD_NOT_FOUND"},
			{"unknown task route", "POST", "/tasks/x:frobnicate", "", "", 404, "NOT_FOUND", "METHOD_NOT_FOUND"},
			{"wrong verb", "DELETE", "/tasks/x", "", "", 405, "UNIMPLEMENTED", "METHOD_NOT_FOUND"},
			{"wrong content type", "POST", "/message:send", "text/plain", `{}`, 415, "INVALID_ARGUMENT", "INVALID_REQUEST"},
			{"a charset other than UTF-8", "POST", "/message:send", "application/json; charset=iso-8859-1", `{}`, 415, "INVALID_ARGUMENT", "INVALID_REQUEST"},
			{"bad query", "GET", "/tasks?pageSize=many", "", "", 400, "INVALID_ARGUMENT", "INVALID_PARAMS"},
			{"unknown query", "GET", "/tasks?colour=red", "", "", 400, "INVALID_ARGUMENT", "INVALID_PARAMS"},
			{"encoded slash", "GET", "/tasks/a%2Fb", "", "", 400, "INVALID_ARGUMENT", "INVALID_PARAMS"},
			{"too large", "POST", "/message:send", "application/json", `{"x":"` + strings.Repeat("a", DefaultMaxBodyBytes) + `"}`, 413, "INVALID_ARGUMENT", "INVALID_REQUEST"},
		}
		for _, tc := range cases {
			status, h, body := restDo(t, g, tc.method, tc.path, tc.ct, tc.body, alice)
			e := body.Get("error")
			if status != tc.status || e.Get("code").Int() != int64(tc.status) || e.Get("status").Str != tc.code ||
				e.Get("details.0.reason").Str != tc.reason || e.Get("details.0.domain").Str != "a2a-protocol.org" || e.Get("message").Str == "" {
				t.Errorf("%s: HTTP %d %s", tc.name, status, body.Raw)
			}
			if tc.status == 405 && h.Get("Allow") != "GET, HEAD" {
				t.Errorf("%s: Allow %q", tc.name, h.Get("Allow"))
			}
		}
		status, h, body := restDo(t, g, "GET", "/tasks/x", "", "", "")
		if status != 401 || body.Get("error.status").Str != "UNAUTHENTICATED" || !strings.HasPrefix(h.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("no token: HTTP %d %q %s", status, h.Get("WWW-Authenticate"), body.Raw)
		}
	})
}

// TestRESTBelowAgentPath: an agent published at a path serves its REST
// routes below it, tenant prefix included, and only there.
func TestRESTBelowAgentPath(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backendKind) {
		g := newGateway(t, b.handler(t, nil), b.version, func(a *AgentConfig) { a.Path = "/a2a/helpdesk/" })
		g.url = strings.TrimSuffix(g.url, "/") + "/a2a/helpdesk/"
		c := newRESTClient(t, g, "")
		task := c.sendTask("hello", nil)
		got, err := c.tr.GetTask(context.Background(), c.sp, &a2a.GetTaskRequest{ID: task.ID, Tenant: "acme"})
		if err != nil || got.ID != task.ID {
			t.Fatalf("get under a tenant prefix: %+v, %v", got, err)
		}
		status, _, body := restDo(t, g, "GET", "/extra/tasks/"+string(task.ID)+"/more", "", "", "")
		if status != http.StatusNotFound || body.Get("error.details.0.reason").Str != "METHOD_NOT_FOUND" {
			t.Fatalf("unknown route below the agent: HTTP %d %s", status, body.Raw)
		}
	})
}

// TestRESTHeadIsTheGetWithoutBody: a HEAD of a REST GET route is answered
// as the GET is, status and headers, without the body (RFC 9110 §9.3.2),
// on the 1.0 and the 0.3 routes; a HEAD of a subscription, which would hold
// a stream open on the backend, is refused naming the verbs it takes.
// Before, every HEAD answered 405.
func TestRESTHeadIsTheGetWithoutBody(t *testing.T) {
	b := sdkBackends[0]
	g := newGateway(t, b.handler(t, nil), b.version)
	id := mustResult(t, g.call("1", "SendMessage", `{"message":{"messageId":"h1","role":"ROLE_USER","parts":[{"text":"hi"}]}}`)).Get("task.id").Str
	for _, tc := range []struct {
		path   string
		status int
	}{
		{"/tasks/" + id, http.StatusOK},
		{"/v1/tasks/" + id, http.StatusOK},
		{"/tasks", http.StatusOK},
		{"/tasks/no-such-task", http.StatusNotFound},
	} {
		get, getBody := g.request(t, http.MethodGet, tc.path, "")
		head, headBody := g.request(t, http.MethodHead, tc.path, "")
		if get.StatusCode != tc.status || head.StatusCode != tc.status || len(headBody) != 0 ||
			head.Header.Get("Content-Type") != get.Header.Get("Content-Type") || len(getBody) == 0 {
			t.Errorf("HEAD %s: HTTP %d %q %q (GET: HTTP %d %q), want HTTP %d, the GET's headers, no body",
				tc.path, head.StatusCode, head.Header.Get("Content-Type"), headBody, get.StatusCode, get.Header.Get("Content-Type"), tc.status)
		}
	}
	res, _ := g.request(t, http.MethodHead, "/tasks/"+id+":subscribe", "")
	if res.StatusCode != http.StatusMethodNotAllowed || res.Header.Get("Allow") != "GET, POST" {
		t.Errorf("HEAD of a subscription: HTTP %d, Allow %q", res.StatusCode, res.Header.Get("Allow"))
	}
}
