package proxy

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"github.com/golang-jwt/jwt/v5"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/grpctest"
	"github.com/a2agate/gateway/store"
)

// restRaw sends one REST request as tok's holder and returns the status
// and the body as sent, for byte-for-byte comparisons.
func restRaw(t *testing.T, g *testGateway, method, path, body, tok string) (int, string) {
	t.Helper()
	contentType := ""
	if body != "" {
		contentType = "application/json"
	}
	res, b := g.request(t, method, path, body, "Content-Type", contentType, "Authorization", bearerOf(tok))
	return res.StatusCode, string(b)
}

// TestRESTAnotherCallersTaskIsNoOracle: every REST route that names a
// task, in the 1.0 and the 0.3 binding, answers bob about alice's task
// byte for byte what it answers about a task that does not exist.
func TestRESTAnotherCallersTaskIsNoOracle(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backendKind) {
		g := newAuthGateway(t, b)
		alice, bobTok := token(t, "alice"), token(t, "bob")
		c := callers[1]
		id := c.task(t, mustResult(t, g.as(alice).call("1", c.method(dialect.SendMessage), c.send("m1", c.text("input please"), "")))).Get("id").Str
		_ = id
		routes := []struct{ method, path, body string }{
			{"GET", "/tasks/%s", ""},
			{"GET", "/tasks/%s?historyLength=5", ""},
			{"POST", "/tasks/%s:cancel", "{}"},
			{"GET", "/tasks/%s:subscribe", ""},
			{"POST", "/tasks/%s:subscribe", "{}"},
			{"GET", "/tasks/%s/pushNotificationConfigs", ""},
			{"POST", "/tasks/%s/pushNotificationConfigs", `{"url":"https://hooks.example/a2a"}`},
			{"GET", "/tasks/%s/pushNotificationConfigs/c1", ""},
			{"DELETE", "/tasks/%s/pushNotificationConfigs/c1", ""},
			{"POST", "/message:send", `{"message":{"messageId":"b1","taskId":"%s","role":"ROLE_USER","parts":[{"text":"hi"}]}}`},
			{"POST", "/message:stream", `{"message":{"messageId":"b2","taskId":"%s","role":"ROLE_USER","parts":[{"text":"hi"}]}}`},
			{"GET", "/v1/tasks/%s", ""},
			{"POST", "/v1/tasks/%s:cancel", "{}"},
			{"GET", "/v1/tasks/%s:subscribe", ""},
			{"GET", "/v1/tasks/%s/pushNotificationConfigs", ""},
			{"GET", "/v1/tasks/%s/pushNotificationConfigs/c1", ""},
			{"DELETE", "/v1/tasks/%s/pushNotificationConfigs/c1", ""},
		}
		for _, r := range routes {
			fill := func(s, x string) string { return strings.ReplaceAll(s, "%s", x) }
			s1, theirs := restRaw(t, g, r.method, fill(r.path, id), fill(r.body, id), bobTok)
			s2, none := restRaw(t, g, r.method, fill(r.path, "no-such-task-0000"), fill(r.body, "no-such-task-0000"), bobTok)
			if s1 != s2 || theirs != none {
				t.Errorf("%s %s: bob about alice's task: HTTP %d %s\nabout none: HTTP %d %s", r.method, r.path, s1, theirs, s2, none)
			}
			if strings.Contains(theirs, id) {
				t.Errorf("%s %s names alice's task: %s", r.method, r.path, theirs)
			}
		}
	})
}

// TestGRPCAnotherCallersTaskIsNoOracle: the same over gRPC, status and
// details compared.
func TestGRPCAnotherCallersTaskIsNoOracle(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backendKind) {
		g := newAuthGateway(t, b)
		c := callers[1]
		id := c.task(t, mustResult(t, g.as(token(t, "alice")).call("1", c.method(dialect.SendMessage), c.send("m1", c.text("input please"), "")))).Get("id").Str
		bob := newGRPCGateway(t, g.as(token(t, "bob")))
		ctx := context.Background()
		calls := map[string]func(id string) error{
			"get":    func(x string) error { _, err := bob.raw.GetTask(ctx, &a2apb.GetTaskRequest{Id: x}); return err },
			"cancel": func(x string) error { _, err := bob.raw.CancelTask(ctx, &a2apb.CancelTaskRequest{Id: x}); return err },
			"subscribe": func(x string) error {
				s, err := bob.raw.SubscribeToTask(ctx, &a2apb.SubscribeToTaskRequest{Id: x})
				if err != nil {
					return err
				}
				return grpctest.Drain(s)
			},
			"push get": func(x string) error {
				_, err := bob.raw.GetTaskPushNotificationConfig(ctx, &a2apb.GetTaskPushNotificationConfigRequest{TaskId: x, Id: "c1"})
				return err
			},
			"push list": func(x string) error {
				_, err := bob.raw.ListTaskPushNotificationConfigs(ctx, &a2apb.ListTaskPushNotificationConfigsRequest{TaskId: x})
				return err
			},
			"push delete": func(x string) error {
				_, err := bob.raw.DeleteTaskPushNotificationConfig(ctx, &a2apb.DeleteTaskPushNotificationConfigRequest{TaskId: x, Id: "c1"})
				return err
			},
			"push create": func(x string) error {
				_, err := bob.raw.CreateTaskPushNotificationConfig(ctx, &a2apb.TaskPushNotificationConfig{TaskId: x, Url: "https://hooks.example/a2a"})
				return err
			},
		}
		for name, call := range calls {
			theirs, none := status.Convert(call(id)), status.Convert(call("no-such-task-0000"))
			if !proto.Equal(theirs.Proto(), none.Proto()) || theirs.Code() == 0 {
				t.Errorf("%s: bob about alice's task: %v\nabout none: %v", name, theirs.Proto(), none.Proto())
			}
		}
	})
}

// TestExtendedCardNeedsAToken: every way to ask for the extended card
// refuses a caller without a valid token, in its own form, and gives the
// card to one with.
func TestExtendedCardNeedsAToken(t *testing.T) {
	g := newAuthGateway(t, backends[1])
	for _, tok := range []string{"", "not.a.token", token(t, "alice", func(c jwt.MapClaims) { c["aud"] = "https://other-agent.test/" })} {
		for _, path := range []string{"/extendedAgentCard", "/v1/card", "/agent/authenticatedExtendedCard"} {
			if status, body := restRaw(t, g, "GET", path, "", tok); status != http.StatusUnauthorized || strings.Contains(body, "skills") {
				t.Errorf("GET %s with token %q: HTTP %d %s", path, tok, status, body)
			}
		}
		for _, c := range callers {
			status, _, body := g.as(tok).post(rpc(c.method(dialect.GetExtendedCard), `{}`))
			if status != http.StatusUnauthorized || strings.Contains(string(body), "skills") {
				t.Errorf("%s with token %q: HTTP %d %s", c.method(dialect.GetExtendedCard), tok, status, body)
			}
		}
		_, err := newGRPCGateway(t, g.as(tok)).raw.GetExtendedAgentCard(context.Background(), &a2apb.GetExtendedAgentCardRequest{})
		if status.Code(err) != codes.Unauthenticated {
			t.Errorf("gRPC GetExtendedAgentCard with token %q: %v", tok, err)
		}
	}
	alice := g.as(token(t, "alice"))
	if status, body := restRaw(t, alice, "GET", "/extendedAgentCard", "", alice.token); status != http.StatusOK {
		t.Fatalf("alice's extended card: HTTP %d %s", status, body)
	}
}

// TestPushConfigIDOfAnotherCaller: alice naming the id of bob's push
// config on her own task gets what a made-up id gets, in every dialect,
// and bob's config is untouched.
func TestPushConfigIDOfAnotherCaller(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backendKind) {
		g := newAuthGateway(t, b)
		alice, bob := g.as(token(t, "alice")), g.as(token(t, "bob"))
		c := callers[1]
		newTask := func(who *testGateway) string {
			return c.task(t, mustResult(t, who.call("1", c.method(dialect.SendMessage), c.send("m1", c.text("input please"), "")))).Get("id").Str
		}
		bobs, hers := newTask(bob), newTask(alice)
		mustResult(t, bob.call("2", "CreateTaskPushNotificationConfig", `{"taskId":"`+bobs+`","id":"bob-cfg","url":"https://hooks.example/bob"}`))
		for _, cc := range callers {
			get, del := `{"taskId":"%s","id":"%s"}`, `{"taskId":"%s","id":"%s"}`
			getM, delM := "GetTaskPushNotificationConfig", "DeleteTaskPushNotificationConfig"
			if cc.d == dialect.V03 {
				get, del = `{"id":"%s","pushNotificationConfigId":"%s"}`, `{"id":"%s","pushNotificationConfigId":"%s"}`
				getM, delM = "tasks/pushNotificationConfig/get", "tasks/pushNotificationConfig/delete"
			}
			fill := func(f, cfg string) string { return strings.Replace(strings.Replace(f, "%s", hers, 1), "%s", cfg, 1) }
			for m, f := range map[string]string{getM: get, delM: del} {
				_, _, theirs := alice.post(rpc(m, fill(f, "bob-cfg")), alice.hdr(cc.d)...)
				_, _, none := alice.post(rpc(m, fill(f, "no-such-cfg")), alice.hdr(cc.d)...)
				if string(theirs) != string(none) || strings.Contains(string(theirs), "hooks.example") {
					t.Errorf("%s %s with bob's config id: %s\nwith a made-up one: %s", cc.d, m, theirs, none)
				}
			}
		}
		if r := mustResult(t, bob.call("3", "GetTaskPushNotificationConfig", `{"taskId":"`+bobs+`","id":"bob-cfg"}`)); r.Get("url").Str != "https://hooks.example/bob" {
			t.Fatalf("bob's config after alice's calls: %s", r.Raw)
		}
	})
}

// TestListTasksPageTokenOfAnotherCaller: a page token alice was given
// is, in bob's hands, or through another agent on the same index, what a
// forged token is: refused, byte for byte alike, with none of her tasks.
func TestListTasksPageTokenOfAnotherCaller(t *testing.T) {
	tasks := store.NewMemory(store.MemoryConfig{})
	t.Cleanup(func() { tasks.Close() })
	backend := backends[1].handler(t, nil)
	viaA := newGatewayOpts(t, backend, dialect.Version10, Options{Tasks: tasks}, withAuth(t), func(a *AgentConfig) { a.Name = "agent-a" })
	viaB := newGatewayOpts(t, backend, dialect.Version10, Options{Tasks: tasks}, withAuth(t), func(a *AgentConfig) { a.Name = "agent-b" })
	alice, aliceTok := viaA.as(token(t, "alice")), token(t, "alice")
	c := callers[1]
	for i := range 3 {
		mustResult(t, alice.call("1", c.method(dialect.SendMessage), c.send("m"+strconv.Itoa(i), c.text("input please"), "")))
	}
	next := mustResult(t, alice.call("2", "ListTasks", `{"pageSize":1}`)).Get("nextPageToken").Str
	if next == "" {
		t.Fatal("no next page token")
	}
	forged := func(g *testGateway, tok, pageToken string) string {
		_, _, b := g.as(tok).post(rpc("ListTasks", `{"pageSize":1,"pageToken":"`+pageToken+`"}`))
		return string(b)
	}
	want := forged(viaA, token(t, "bob"), "forged")
	for name, got := range map[string]string{
		"bob on agent a":      forged(viaA, token(t, "bob"), next),
		"alice on agent b":    forged(viaB, aliceTok, next),
		"alice, other filter": forged(viaA, aliceTok, next+`","contextId":"c`),
	} {
		if !strings.Contains(got, "-32602") || (name != "alice, other filter" && got != want) {
			t.Errorf("%s: %s\nforged: %s", name, got, want)
		}
	}
}

// TestTokenForAnotherAgent: two agents published by one gateway, on one
// backend and one index, the audience of each its own public URL. A
// token for agent a is refused by agent b; one the issuer made for both
// still shows agent b none of the tasks made through agent a.
func TestTokenForAnotherAgent(t *testing.T) {
	tasks := store.NewMemory(store.MemoryConfig{})
	t.Cleanup(func() { tasks.Close() })
	backend := httptestServer(t, backends[1].handler(t, nil))
	authOn := withAuth(t)
	var agents []*Agent
	for _, name := range []string{"a", "b"} {
		cfg := AgentConfig{Name: name, Path: "/" + name, PublicURL: "http://gateway.test/" + name,
			Backend: BackendConfig{URL: backend + "/", Dialect: dialect.Version10}, Skills: SkillsConfig{Default: "work"}}
		authOn(&cfg)
		a := newValidAgent(t, cfg, Options{Tasks: tasks, Verifier: verifierOf(t, cfg)})
		_ = a.RefreshCard(context.Background())
		agents = append(agents, a)
	}
	gw, err := NewGateway(agents)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gw.Close)
	base := httptestServer(t, gw)
	at := func(path, tok string) *testGateway { return &testGateway{t: t, url: base + path, token: tok} }
	forA := token(t, "alice", func(c jwt.MapClaims) { c["aud"] = "http://gateway.test/a" })
	forBoth := token(t, "alice", func(c jwt.MapClaims) { c["aud"] = []string{"http://gateway.test/a", "http://gateway.test/b"} })
	c := callers[1]
	id := c.task(t, mustResult(t, at("/a", forA).call("1", c.method(dialect.SendMessage), c.send("m1", c.text("input please"), "")))).Get("id").Str

	status, h, body := at("/b", forA).post(rpc("GetTask", `{"id":"`+id+`"}`))
	if status != http.StatusUnauthorized || !strings.Contains(h.Get("WWW-Authenticate"), "audience") {
		t.Fatalf("agent a's token on agent b: HTTP %d %q %s", status, h.Get("WWW-Authenticate"), body)
	}
	viaB := at("/b", forBoth)
	wantError(t, viaB.call("2", "GetTask", `{"id":"`+id+`"}`), dialect.V10, -32001)
	if list := mustResult(t, viaB.call("3", "ListTasks", `{}`)); len(list.Get("tasks").Array()) != 0 {
		t.Fatalf("agent b lists agent a's tasks: %s", list.Raw)
	}
	mustResult(t, at("/a", forBoth).call("4", "GetTask", `{"id":"`+id+`"}`))
}

// TestMetricsNameNoPrincipalOrTask: after calls of alice's that succeed
// and fail, and refused tokens, no series of the gateway's metrics names
// her, her task or context, or a token: labels are closed sets.
func TestMetricsNameNoPrincipalOrTask(t *testing.T) {
	reg := prometheus.NewRegistry()
	g := newGatewayOpts(t, backends[1].handler(t, nil), dialect.Version10, Options{Metrics: NewMetrics(reg, nil)}, withAuth(t))
	tok := token(t, "alice-the-principal")
	alice := g.as(tok)
	c := callers[1]
	task := c.task(t, mustResult(t, alice.call("1", c.method(dialect.SendMessage), c.send("m1", c.text("input please"), ""))))
	wantError(t, alice.call("2", "GetTask", `{"id":"no-such-task-0000"}`), c.d, -32001)
	mustResult(t, alice.call("3", "ListTasks", `{}`))
	g.as(token(t, "mallory-the-principal", func(cl jwt.MapClaims) { cl["aud"] = "https://elsewhere.test/" })).post(rpc("GetTask", `{"id":"x"}`))
	g.as("forged.token.value").post(rpc("GetTask", `{"id":"x"}`))
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	for _, mf := range mfs {
		all.WriteString(mf.String())
	}
	for _, secret := range []string{"alice-the-principal", "mallory-the-principal", task.Get("id").Str, task.Get("contextId").Str, "no-such-task", tok[:20], "forged"} {
		if strings.Contains(all.String(), secret) {
			t.Errorf("a metric names %q", secret)
		}
	}
	if !strings.Contains(all.String(), "bad_audience") {
		t.Fatalf("the refused token was not counted: the check above saw no auth series")
	}
}

// TestRESTAuthenticatesBeforeValidating: a REST caller without a valid
// token is answered the 401 whatever is wrong with its query, body or
// Content-Type, byte for byte what a well-formed request without a token
// is answered, in the 1.0 and the 0.3 binding: the request's shape is
// checked for authenticated callers only.
func TestRESTAuthenticatesBeforeValidating(t *testing.T) {
	g := newAuthGateway(t, backends[0])
	send := `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}`
	cases := []struct {
		name, method, path, contentType, body string
		wellFormed                            string // the same route asked well
	}{
		{"bad historyLength", "GET", "/tasks/t1?historyLength=many", "", "", "/tasks/t1"},
		{"unknown query parameter", "GET", "/tasks/t1?nosuch=1", "", "", "/tasks/t1"},
		{"bad pageSize", "GET", "/tasks?pageSize=-x", "", "", "/tasks"},
		{"bad version parameter", "GET", "/tasks/t1?a2a-version=9.9", "", "", "/tasks/t1"},
		{"body not JSON", "POST", "/message:send", "application/json", "{not json", "/message:send"},
		{"body not a request", "POST", "/message:send", "application/json", `{"message":7}`, "/message:send"},
		{"Content-Type not JSON", "POST", "/message:send", "text/plain", send, "/message:send"},
		{"0.3 bad historyLength", "GET", "/v1/tasks/t1?historyLength=many", "", "", "/v1/tasks/t1"},
		{"0.3 body not JSON", "POST", "/v1/message:send", "application/json", "{not json", "/v1/message:send"},
	}
	do := func(method, path, contentType, body, authorization string) (*http.Response, string) {
		res, b := g.request(t, method, path, body, "Content-Type", contentType, "Authorization", authorization)
		return res, string(b)
	}
	for _, tc := range cases {
		for _, authorization := range []string{"", "Bearer not.a.jwt"} {
			t.Run(tc.name+"/"+cmpName(authorization), func(t *testing.T) {
				wantBody := ""
				if tc.method == "POST" {
					wantBody = send
				}
				want, wantB := do(tc.method, tc.wellFormed, "application/json", wantBody, authorization)
				if want.StatusCode != http.StatusUnauthorized {
					t.Fatalf("the well-formed request without a valid token: HTTP %d %s", want.StatusCode, wantB)
				}
				got, gotB := do(tc.method, tc.path, tc.contentType, tc.body, authorization)
				if got.StatusCode != want.StatusCode || gotB != wantB || got.Header.Get("WWW-Authenticate") != want.Header.Get("WWW-Authenticate") {
					t.Errorf("HTTP %d %s (WWW-Authenticate %q)\nwant HTTP %d %s (WWW-Authenticate %q)",
						got.StatusCode, gotB, got.Header.Get("WWW-Authenticate"), want.StatusCode, wantB, want.Header.Get("WWW-Authenticate"))
				}
			})
		}
	}
	// An authenticated caller still learns what is wrong with its request.
	res, b := do("GET", "/tasks/t1?historyLength=many", "", "", "Bearer "+token(t, "alice"))
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(b, "historyLength") {
		t.Fatalf("an authenticated caller's bad query: HTTP %d %s", res.StatusCode, b)
	}
}

// cmpName names a test case by its Authorization header.
func cmpName(authorization string) string {
	if authorization == "" {
		return "no token"
	}
	return "bad token"
}
