package proxy

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/auth"
	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/testnet"
	"github.com/a2agate/gateway/internal/testredis"
	"github.com/a2agate/gateway/store"
)

const (
	testIssuer = "https://issuer.test"
	testSecret = "0123456789abcdef0123456789abcdef-test-only"
)

// withAuth turns on HS256 auth with a secret read from a file.
func withAuth(t *testing.T) func(*AgentConfig) {
	secret := filepath.Join(t.TempDir(), "hmac")
	if err := os.WriteFile(secret, []byte(testSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return func(a *AgentConfig) {
		a.Auth = &auth.Config{Issuer: testIssuer, Algorithms: []string{"HS256"}, HMACSecretFile: secret}
	}
}

// token signs a token for sub; edit may change its claims.
func token(t *testing.T, sub string, edit ...func(jwt.MapClaims)) string {
	t.Helper()
	claims := jwt.MapClaims{"iss": testIssuer, "sub": sub, "aud": "http://gateway.test/", "exp": time.Now().Add(time.Hour).Unix(), "iat": time.Now().Unix()}
	for _, e := range edit {
		e(claims)
	}
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString([]byte(testSecret))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// as returns a copy of g that sends the given bearer token.
func (g *testGateway) as(tok string) *testGateway {
	c := *g
	c.token = tok
	return &c
}

func newAuthGateway(t *testing.T, b backendKind, edit ...func(*AgentConfig)) *testGateway {
	t.Helper()
	return newGateway(t, b.handler(t, nil), b.version, append([]func(*AgentConfig){withAuth(t)}, edit...)...)
}

func TestAuthRefusals(t *testing.T) {
	g := newAuthGateway(t, backends[0])
	cases := []struct {
		name, header, oauthErr string
	}{
		{"no token", "", ""},
		{"not bearer", "Basic dXNlcjpwYXNz", "invalid_request"},
		{"garbage", "Bearer not.a.jwt", "invalid_token"},
		{"expired", "Bearer " + token(t, "alice", func(c jwt.MapClaims) { c["exp"] = time.Now().Add(-time.Hour).Unix() }), "invalid_token"},
		{"wrong audience", "Bearer " + token(t, "alice", func(c jwt.MapClaims) { c["aud"] = "https://elsewhere.test/" }), "invalid_token"},
		{"wrong issuer", "Bearer " + token(t, "alice", func(c jwt.MapClaims) { c["iss"] = "https://evil.test" }), "invalid_token"},
		{"alg none", "Bearer " + noneToken(t), "invalid_token"},
	}
	for _, tc := range cases {
		for _, c := range callers {
			t.Run(tc.name+"/"+c.d.String(), func(t *testing.T) {
				var hdr []string
				if tc.header != "" {
					hdr = []string{"Authorization", tc.header}
				}
				status, h, b := g.post(rpc(c.method(dialect.GetTask), `{"id":"t"}`), hdr...)
				if status != http.StatusUnauthorized {
					t.Fatalf("HTTP %d, want 401: %s", status, b)
				}
				www := h.Get("WWW-Authenticate")
				if !strings.HasPrefix(www, "Bearer ") || (tc.oauthErr != "" && !strings.Contains(www, `error="`+tc.oauthErr+`"`)) || (tc.oauthErr == "" && strings.Contains(www, "error=")) {
					t.Fatalf("WWW-Authenticate %q", www)
				}
				wantError(t, gjson.ParseBytes(b), c.d, -31401)
				if tc.header != "" && strings.Contains(string(b), strings.TrimPrefix(tc.header, "Bearer ")) {
					t.Fatalf("the answer echoes the token: %s", b)
				}
			})
		}
	}
	mustResult(t, g.as(token(t, "alice")).call("1", "message/send", `{"message":`+msg03+`}`))
}

func noneToken(t *testing.T) string {
	s, err := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.MapClaims{"iss": testIssuer, "sub": "mallory", "aud": "http://gateway.test/", "exp": time.Now().Add(time.Hour).Unix()}).SignedString(jwt.UnsafeAllowNoneSignatureType)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// taskCalls are the calls that address a task, by name, each building its
// body in c's dialect for a task id.
func taskCalls(c caller) map[string]func(id string) string {
	return map[string]func(id string) string{
		"get":    func(x string) string { return rpc(c.method(dialect.GetTask), `{"id":"`+x+`"}`) },
		"cancel": func(x string) string { return rpc(c.method(dialect.CancelTask), `{"id":"`+x+`"}`) },
		"continue": func(x string) string {
			return rpc(c.method(dialect.SendMessage), c.continuation("m2", x, "hi"))
		},
		"push list": func(x string) string {
			if c.d == dialect.V03 {
				return rpc("tasks/pushNotificationConfig/list", `{"id":"`+x+`"}`)
			}
			return rpc("ListTaskPushNotificationConfigs", `{"taskId":"`+x+`"}`)
		},
		"push get": func(x string) string {
			if c.d == dialect.V03 {
				return rpc("tasks/pushNotificationConfig/get", `{"id":"`+x+`","pushNotificationConfigId":"c"}`)
			}
			return rpc("GetTaskPushNotificationConfig", `{"taskId":"`+x+`","id":"c"}`)
		},
		"push delete": func(x string) string {
			if c.d == dialect.V03 {
				return rpc("tasks/pushNotificationConfig/delete", `{"id":"`+x+`","pushNotificationConfigId":"c"}`)
			}
			return rpc("DeleteTaskPushNotificationConfig", `{"taskId":"`+x+`","id":"c"}`)
		},
		"push set": func(x string) string {
			if c.d == dialect.V03 {
				return rpc("tasks/pushNotificationConfig/set", `{"taskId":"`+x+`","pushNotificationConfig":{"url":"https://x.test"}}`)
			}
			return rpc("CreateTaskPushNotificationConfig", `{"taskId":"`+x+`","url":"https://x.test"}`)
		},
		"subscribe": func(x string) string { return rpc(c.method(dialect.SubscribeToTask), `{"id":"`+x+`"}`) },
		"stream continue": func(x string) string {
			return rpc(c.method(dialect.SendStreamingMessage), c.continuation("m3", x, "hi"))
		},
	}
}

// answersAsUnknown checks that each of calls about another principal's
// task id answers as byte for byte what it answers for a task that does not
// exist: the gateway's own -32001, naming no id.
func answersAsUnknown(t *testing.T, as *testGateway, c caller, id string, calls map[string]func(id string) string) {
	t.Helper()
	for name, body := range calls {
		t.Run(c.d.String()+"/"+name, func(t *testing.T) {
			_, _, theirs := as.post(body(id), as.hdr(c.d)...)
			_, _, none := as.post(body("no-such-task-0000"), as.hdr(c.d)...)
			if string(theirs) != string(none) {
				t.Fatalf("another caller's task answers differently from a missing one:\n%s\n%s", theirs, none)
			}
			if !strings.Contains(string(theirs), "-32001") || strings.Contains(string(theirs), "no-such-task") {
				t.Fatalf("want the gateway's own -32001, naming no id: %s", theirs)
			}
		})
	}
}

// TestTaskOwnership: for every task-addressing method, another principal
// gets exactly the answer a task that does not exist gets.
func TestTaskOwnership(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backendKind) {
		g := newAuthGateway(t, b)
		alice, bob := g.as(token(t, "alice")), g.as(token(t, "bob"))
		for _, c := range callers {
			task := c.task(t, mustResult(t, alice.call("1", c.method(dialect.SendMessage), c.send("m1", c.text("input please"), ""))))
			id, ctxID := task.Get("id").Str, task.Get("contextId").Str
			answersAsUnknown(t, bob, c, id, taskCalls(c))
			// Alice still sees her task; Bob cannot join her context.
			mustResult(t, alice.call("2", c.method(dialect.GetTask), `{"id":"`+id+`"}`))
			send := strings.Replace(c.send("m4", c.text("hello"), ""), `"messageId"`, `"contextId":"`+ctxID+`","messageId"`, 1)
			wantError(t, bob.call("3", c.method(dialect.SendMessage), send), c.d, -32602)
		}
	})
}

func forEachBackend(t *testing.T, f func(t *testing.T, b backendKind)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			f(t, b)
		})
	}
}

func TestMessageRules(t *testing.T) {
	forEachPair(t, func(t *testing.T, c caller, g *testGateway) {
		task := c.task(t, mustResult(t, g.call("1", c.method(dialect.SendMessage), c.send("m1", c.text("input please"), ""))))
		id, ctxID := task.Get("id").Str, task.Get("contextId").Str
		// Unknown task.
		wantError(t, g.call("2", c.method(dialect.SendMessage), c.continuation("m2", "unknown-task", "x")), c.d, -32001)
		// taskId and contextId must agree.
		bad := strings.Replace(c.continuation("m3", id, "Ada"), `"taskId"`, `"contextId":"other-context","taskId"`, 1)
		wantError(t, g.call("3", c.method(dialect.SendMessage), bad), c.d, -32602)
		// Only taskId: the task's contextId is filled in for the backend.
		done := c.task(t, mustResult(t, g.call("4", c.method(dialect.SendMessage), c.continuation("m4", id, "Ada"))))
		if done.Get("contextId").Str != ctxID {
			t.Fatalf("continuation moved to context %q, want %q", done.Get("contextId").Str, ctxID)
		}
	})
}

// TestUnknownTasksAllowedWhenConfigured: with tasks.allow_unknown a task
// the gateway never saw (made before it was deployed) is served, unchecked.
func TestUnknownTasksAllowedWhenConfigured(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backendKind) {
		g := newGateway(t, b.handler(t, nil), b.version, func(a *AgentConfig) { a.Tasks.AllowUnknown = true })
		direct := backendCaller(b)
		pre := direct.task(t, mustResult(t, (&testGateway{t: t, url: g.backend.URL + "/"}).call("1", direct.method(dialect.SendMessage), direct.send("m1", direct.text("input please"), ""))))
		for _, c := range callers {
			got := mustResult(t, g.call("2", c.method(dialect.GetTask), `{"id":"`+pre.Get("id").Str+`"}`))
			if got.Get("id").Str != pre.Get("id").Str {
				t.Fatalf("%s: got %s, want the backend's task %s", c.d, got.Raw, pre.Get("id").Str)
			}
		}
	})
}

// backendCaller is a caller speaking b's own dialect, to reach it directly.
func backendCaller(b backendKind) caller {
	if b.version == dialect.Version10 {
		return caller{dialect.V10}
	}
	return caller{dialect.V03}
}

// TestAllowUnknownIsNoOracle: with tasks.allow_unknown, another caller's
// task, made through another agent of the gateway on the same backend, is
// not served unchecked, and answers byte for byte what a random id does.
func TestAllowUnknownIsNoOracle(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backendKind) {
		tasks := store.NewMemory(store.MemoryConfig{})
		t.Cleanup(func() { tasks.Close() })
		backend := b.handler(t, nil)
		viaA := newGatewayOpts(t, backend, b.version, Options{Tasks: tasks}, withAuth(t), func(a *AgentConfig) { a.Name = "agent-a" })
		viaB := newGatewayOpts(t, backend, b.version, Options{Tasks: tasks}, withAuth(t), func(a *AgentConfig) {
			a.Name, a.Tasks.AllowUnknown = "agent-b", true
		})
		alice, bob := viaA.as(token(t, "alice")), viaB.as(token(t, "bob"))
		for _, c := range callers {
			task := c.task(t, mustResult(t, alice.call("1", c.method(dialect.SendMessage), c.send("m1", c.text("input please"), ""))))
			id := task.Get("id").Str
			all := taskCalls(c)
			answersAsUnknown(t, bob, c, id, map[string]func(string) string{"get": all["get"], "push list": all["push list"], "cancel": all["cancel"]})
			// Alice's own task stays hers, through the agent she used.
			mustResult(t, alice.call("2", c.method(dialect.GetTask), `{"id":"`+id+`"}`))
		}
	})
}

func TestListTasksWalk(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backendKind) {
		g := newAuthGateway(t, b)
		owners := map[string]*testGateway{}
		want := map[string]map[string]string{} // owner -> task id -> state
		for _, who := range []string{"alice", "bob", "carol"} {
			owners[who] = g.as(token(t, who))
			want[who] = map[string]string{}
		}
		c := callers[1]
		n := 0
		for i := 0; i < 150; i++ {
			who := []string{"alice", "bob", "carol", "alice"}[i%4]
			text := "task " + fmt.Sprint(i)
			if i%3 == 0 {
				text = "fail " + fmt.Sprint(i)
			}
			task := c.task(t, mustResult(t, owners[who].call(fmt.Sprint(i), "SendMessage", c.send(fmt.Sprint("m", i), c.text(text), ""))))
			want[who][task.Get("id").Str] = task.Get("status.state").Str
			n++
		}
		for who, gw := range owners {
			for _, filter := range []string{"", `"status":"TASK_STATE_FAILED",`} {
				seen := map[string]bool{}
				token, pages := "", 0
				for {
					res := mustResult(t, gw.call("1", "ListTasks", `{`+filter+`"pageSize":7,"pageToken":"`+token+`"}`))
					pages++
					if res.Get("pageSize").Int() != 7 || !res.Get("nextPageToken").Exists() || !res.Get("totalSize").Exists() {
						t.Fatalf("ListTasks result misses required members: %s", res.Raw)
					}
					var prev time.Time
					for _, task := range res.Get("tasks").Array() {
						id := task.Get("id").Str
						if _, mine := want[who][id]; !mine {
							t.Fatalf("%s sees a task that is not theirs: %s", who, id)
						}
						if seen[id] {
							t.Fatalf("task %s listed twice", id)
						}
						seen[id] = true
						if task.Get("artifacts").Exists() {
							t.Fatalf("artifacts must be left out unless includeArtifacts: %s", task.Raw)
						}
						if filter != "" && task.Get("status.state").Str != "TASK_STATE_FAILED" {
							t.Fatalf("status filter let through %s", task.Raw)
						}
						// Compared as times: RFC 3339 strings of different precision
						// (".406Z", ".406614Z") do not sort as text.
						ts := task.Get("status.timestamp").Str
						at, err := time.Parse(time.RFC3339Nano, ts)
						if err != nil {
							t.Fatalf("task %s: status.timestamp %q: %v", id, ts, err)
						}
						if !prev.IsZero() && at.After(prev) {
							t.Fatalf("not newest first: %s after %s", ts, prev.Format(time.RFC3339Nano))
						}
						prev = at
					}
					token = res.Get("nextPageToken").Str
					if token == "" {
						break
					}
				}
				total := len(want[who])
				if filter != "" {
					total = 0
					for _, s := range want[who] {
						if s == "TASK_STATE_FAILED" {
							total++
						}
					}
				}
				if len(seen) != total {
					t.Fatalf("%s %s: walked %d tasks in %d pages, want %d", who, filter, len(seen), pages, total)
				}
			}
		}
		// includeArtifacts and historyLength.
		res := mustResult(t, owners["alice"].call("1", "ListTasks", `{"pageSize":1,"includeArtifacts":true,"historyLength":0}`))
		task := res.Get("tasks.0")
		if task.Get("history").Exists() {
			t.Fatalf("historyLength 0 keeps no history: %s", task.Raw)
		}
		wantError(t, owners["alice"].call("2", "ListTasks", `{"pageToken":"forged"}`), dialect.V10, -32602)
	})
}

// TestSkillRouting: one published agent, two backends; new work goes by
// skill, follow-ups to the task's backend.
func TestSkillRouting(t *testing.T) {
	var legacyCalls, agent10Calls atomic.Int32
	count := func(n *atomic.Int32, h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				n.Add(1)
			}
			h.ServeHTTP(w, r)
		})
	}
	routed := httptestServer(t, count(&agent10Calls, backends[1].handler(t, nil)))
	g := newGateway(t, count(&legacyCalls, backends[0].handler(t, nil)), dialect.Version025, func(a *AgentConfig) {
		a.Skills = SkillsConfig{Routes: []SkillRoute{{Skill: "work", Backend: BackendConfig{URL: routed + "/", Dialect: dialect.Version10}}}}
	})
	c := callers[1]
	withSkill := func(id, skill string) string {
		return `{"message":{"messageId":"` + id + `","role":"ROLE_USER","parts":[{"text":"input please"}],"metadata":{"skillId":"` + skill + `"}}}`
	}
	wantErrorSaying(t, g.call("1", "SendMessage", c.send("m0", c.text("hello"), "")), c.d, -32602, "answer, work")
	wantError(t, g.call("2", "SendMessage", withSkill("m1", "dance")), c.d, -32602)
	task := c.task(t, mustResult(t, g.call("3", "SendMessage", withSkill("m2", "work"))))
	if agent10Calls.Load() != 1 || legacyCalls.Load() != 0 {
		t.Fatalf("skill work must reach the routed backend: routed %d, own %d", agent10Calls.Load(), legacyCalls.Load())
	}
	mustResult(t, g.call("4", "GetTask", `{"id":"`+task.Get("id").Str+`"}`))
	if agent10Calls.Load() != 2 {
		t.Fatalf("a follow-up must go to the task's backend")
	}
	c.task(t, mustResult(t, g.call("5", "SendMessage", withSkill("m3", "answer"))))
	if legacyCalls.Load() != 1 {
		t.Fatalf("skill answer must reach the agent's own backend")
	}
	card := gjson.Parse(string(g.get("/.well-known/agent-card.json")))
	if ids := card.Get("skills.#.id").String(); ids != `["answer","work"]` {
		t.Fatalf("published skills %s", ids)
	}
}

// TestRedisSharedIndex: two gateways share one Redis index; a task created
// through one is served, with its owner, by the other. Redis going away
// makes task calls fail closed; its return restores service.
func TestRedisSharedIndex(t *testing.T) {
	relay := testnet.NewRelay(t, testredis.Addr(t))
	prefix := fmt.Sprintf("a2agw-test-%d:", time.Now().UnixNano())
	agent := backends[0].handler(t, nil)
	g1 := newGatewayWithStore(t, agent, relayedIndex(t, relay, prefix), withAuth(t))
	g2 := newGatewayWithStore(t, agent, relayedIndex(t, relay, prefix), withAuth(t))
	c := callers[0]
	alice1, alice2, bob2 := g1.as(token(t, "alice")), g2.as(token(t, "alice")), g2.as(token(t, "bob"))
	task := c.task(t, mustResult(t, alice1.call("1", "message/send", c.send("m1", c.text("input please"), ""))))
	id := task.Get("id").Str
	mustResult(t, alice2.call("2", "tasks/get", `{"id":"`+id+`"}`))
	wantError(t, bob2.call("3", "tasks/get", `{"id":"`+id+`"}`), c.d, -32001)

	relay.Cut()
	wantErrorSaying(t, alice2.call("4", "tasks/get", `{"id":"`+id+`"}`), c.d, -32603, "task index cannot be reached")
	relay.Restore()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := alice2.call("5", "tasks/get", `{"id":"`+id+`"}`)
		if !r.Get("error").Exists() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("service did not resume after Redis came back: %s", r.Raw)
		}
		time.Sleep(50 * time.Millisecond) // polling a real reconnect, not synchronising
	}
}
