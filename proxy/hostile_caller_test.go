package proxy

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/tidwall/gjson"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/a2agate/gateway/dialect"
)

// TestPushConfigMembersBounded: a push config whose id, url, token or
// authentication is over its bound is refused as invalid params in every
// binding and dialect, the message naming the member and its bound, and
// one at every bound is taken.
func TestPushConfigMembersBounded(t *testing.T) {
	g := newGateway(t, backends[1].handler(t, nil), backends[1].version, allowLoopback)
	c10 := callers[1]
	id := c10.task(t, mustResult(t, g.call("1", c10.method(dialect.SendMessage), c10.send("m1", c10.text("input please"), "")))).Get("id").Str
	grpcG := newGRPCGateway(t, g)
	hook := newReceiver(t, 0).url
	pad := func(prefix string, n int) string { return prefix + strings.Repeat("x", n-len(prefix)) }
	// authentication is the length of the object as sent, 0 for none.
	type member struct {
		id, url, token string
		authentication int
	}
	auth := func(d dialect.ID, n int) string {
		o := `{"scheme":"Bearer","credentials":""}`
		if d == dialect.V03 {
			o = `{"schemes":["Bearer"],"credentials":""}`
		}
		return strings.Replace(o, `""`, `"`+pad("s", n-len(o))+`"`, 1)
	}
	at := member{id: pad("c", 1<<10), url: pad(hook+"&pad=", 4<<10), token: pad("t", 4<<10), authentication: 8 << 10}
	over := []struct {
		name, limit string
		m           member
	}{
		{"id", "1024", member{id: at.id + "x", url: hook}},
		{"url", "4096", member{url: at.url + "x"}},
		{"token", "4096", member{url: hook, token: at.token + "x"}},
		{"authentication", "8192", member{url: hook, authentication: at.authentication + 1}},
	}
	jsonrpc := func(c caller, m member) string {
		var b strings.Builder
		b.WriteString(`{"url":"` + m.url + `"`)
		if m.id != "" {
			b.WriteString(`,"id":"` + m.id + `"`)
		}
		if m.token != "" {
			b.WriteString(`,"token":"` + m.token + `"`)
		}
		if m.authentication != 0 {
			b.WriteString(`,"authentication":` + auth(c.d, m.authentication))
		}
		b.WriteString("}")
		if c.d == dialect.V03 {
			return `{"taskId":"` + id + `","pushNotificationConfig":` + b.String() + `}`
		}
		return `{"taskId":"` + id + `",` + strings.TrimPrefix(b.String(), "{")
	}
	for _, tc := range over {
		t.Run(tc.name, func(t *testing.T) {
			for i, c := range callers {
				r := g.call(strconv.Itoa(10+i), c.method(dialect.CreatePushConfig), jsonrpc(c, tc.m))
				msg := wantError(t, r, c.d, -32602).Get("message").Str
				if !strings.Contains(msg, tc.name) || !strings.Contains(msg, tc.limit) {
					t.Errorf("%s: the message does not name %s and its bound %s: %q", c.d, tc.name, tc.limit, msg)
				}
			}
			status, _, r := restDo(t, g, http.MethodPost, "/tasks/"+id+"/pushNotificationConfigs", "application/json",
				"{"+strings.TrimPrefix(jsonrpc(c10, tc.m), `{"taskId":"`+id+`",`), "")
			if msg := r.Get("error.message").Str; status != http.StatusBadRequest || r.Get("error.status").Str != "INVALID_ARGUMENT" ||
				!strings.Contains(msg, tc.name) || !strings.Contains(msg, tc.limit) {
				t.Errorf("REST: HTTP %d %s", status, r.Raw)
			}
			cfg := &a2apb.TaskPushNotificationConfig{TaskId: id, Id: tc.m.id, Url: tc.m.url, Token: tc.m.token}
			if tc.m.authentication != 0 {
				a := gjson.Parse(auth(dialect.V10, tc.m.authentication))
				cfg.Authentication = &a2apb.AuthenticationInfo{Scheme: "Bearer", Credentials: a.Get("credentials").Str}
			}
			_, err := grpcG.raw.CreateTaskPushNotificationConfig(context.Background(), cfg)
			if st := wantStatus(t, err, codes.InvalidArgument, "INVALID_PARAMS"); !strings.Contains(st.Message(), tc.name) || !strings.Contains(st.Message(), tc.limit) {
				t.Errorf("gRPC: %v", err)
			}
		})
	}
	t.Run("at the bounds", func(t *testing.T) {
		for i, c := range callers {
			mustResult(t, g.call(strconv.Itoa(20+i), c.method(dialect.CreatePushConfig), jsonrpc(c, at)))
		}
	})
	t.Run("inline in a send", func(t *testing.T) {
		for i, c := range callers {
			inline := `"pushNotificationConfig":{"url":"` + hook + `","token":"` + at.token + `x"}`
			if c.d == dialect.V10 {
				inline = `"taskPushNotificationConfig":{"url":"` + hook + `","token":"` + at.token + `x"}`
			}
			r := g.call(strconv.Itoa(30+i), c.method(dialect.SendMessage), c.send("m"+strconv.Itoa(30+i), c.text("hi"), inline))
			wantErrorSaying(t, r, c.d, -32602, "4096")
		}
	})
}

// TestJSONRPCAuthenticatesBeforeValidating: a caller without a valid
// token, to an agent that requires one, is answered 401 with the error a
// well-formed request gets, whatever is wrong with its request: it is
// not told what, and nothing of its request is judged.
func TestJSONRPCAuthenticatesBeforeValidating(t *testing.T) {
	g := newAuthGateway(t, backends[1], func(a *AgentConfig) { a.MaxBodyBytes = 128 << 10 })
	type request struct {
		name, body string
		d          dialect.ID
		hdr        []string
	}
	cases := []request{
		{"Content-Type not JSON", rpc("GetTask", `{"id":"t"}`), dialect.V10, []string{"Content-Type", "text/plain"}},
		{"Content-Encoding gzip", rpc("tasks/get", `{"id":"t"}`), dialect.V03, []string{"Content-Encoding", "gzip"}},
		{"body over the limit", rpc("SendMessage", `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"`+strings.Repeat("x", 128<<10)+`"}]}}`), dialect.V10, nil},
		{"push config over its bounds", rpc("CreateTaskPushNotificationConfig", `{"taskId":"t","url":"https://x","token":"`+strings.Repeat("t", 5<<10)+`"}`), dialect.V10, nil},
	}
	for _, h := range hostileRequests {
		cases = append(cases, request{h.name, h.body, h.d, h.hdr})
	}
	well := map[dialect.ID]string{dialect.V03: rpc("tasks/get", `{"id":"t"}`), dialect.V10: rpc("GetTask", `{"id":"t"}`)}
	for _, authorization := range []string{"", "Bearer not.a.jwt"} {
		var lines [][2]string
		if authorization != "" {
			lines = append(lines, [2]string{"Authorization", authorization})
		}
		want := map[dialect.ID]gjson.Result{}
		var challenge string
		for d, body := range well {
			status, h, b := postHeaders(t, g.url, body, lines...)
			if status != http.StatusUnauthorized {
				t.Fatalf("a well-formed request without a valid token: HTTP %d %s", status, b)
			}
			want[d], challenge = wantError(t, gjson.ParseBytes(b), d, -31401), h.Get("WWW-Authenticate")
		}
		for _, tc := range cases {
			t.Run(cmpName(authorization)+"/"+tc.name, func(t *testing.T) {
				l := append([][2]string(nil), lines...)
				for i := 0; i+1 < len(tc.hdr); i += 2 {
					l = append(l, [2]string{tc.hdr[i], tc.hdr[i+1]})
				}
				req, err := http.NewRequest(http.MethodPost, g.url, strings.NewReader(tc.body))
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Content-Type", "application/json")
				for _, kv := range l {
					req.Header.Set(kv[0], kv[1])
				}
				res, b := roundTrip(t, req)
				if res.StatusCode != http.StatusUnauthorized || res.Header.Get("WWW-Authenticate") != challenge {
					t.Fatalf("HTTP %d (WWW-Authenticate %q), want 401 (%q): %s", res.StatusCode, res.Header.Get("WWW-Authenticate"), challenge, b)
				}
				if e := wantError(t, gjson.ParseBytes(b), tc.d, -31401); e.Raw != want[tc.d].Raw {
					t.Fatalf("error %s, want %s", e.Raw, want[tc.d].Raw)
				}
			})
		}
	}
}

// heldBackend is a 1.0 backend whose calls of a message saying "hold"
// wait, after telling arrived, until release is closed (or their caller
// leaves); every send is answered with a working task named after its
// message id, a stream with that task's event and its completion.
func heldBackend(arrived chan<- struct{}, release <-chan struct{}) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := gjson.ParseBytes(readAll(r))
		id, msg := req.Get("id").Raw, req.Get("params.message")
		if msg.Get("parts.0.text").Str == "hold" {
			arrived <- struct{}{}
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
		task := `{"id":"t-` + msg.Get("messageId").Str + `","contextId":"c-` + msg.Get("messageId").Str + `","status":{"state":"TASK_STATE_WORKING"}}`
		if strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
			w.Header().Set("Content-Type", "text/event-stream")
			sseWrite(w, `data: {"jsonrpc":"2.0","id":`+id+`,"result":{"task":`+task+`}}`+"\n\n",
				`data: {"jsonrpc":"2.0","id":`+id+`,"result":{"statusUpdate":{"taskId":"t-`+msg.Get("messageId").Str+`","contextId":"c-`+msg.Get("messageId").Str+`","status":{"state":"TASK_STATE_COMPLETED"}}}}`+"\n\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"result":{"task":`+task+`}}`)
	})
}

func readAll(r *http.Request) []byte {
	b, _ := io.ReadAll(r.Body)
	return b
}

// TestCallsPerCallerBounded: a caller with max_calls_per_caller calls in
// flight (a unary call and a stream) has its next call refused, 429 with
// Retry-After over JSON-RPC (in its dialect) and REST, RESOURCE_EXHAUSTED
// over gRPC, saying which bound and what to do, and counted; another
// caller is served meanwhile, and the caller again once its calls end.
// Without auth the caller is its remote address.
func TestCallsPerCallerBounded(t *testing.T) {
	arrived, release := make(chan struct{}), make(chan struct{})
	reg := prometheus.NewRegistry()
	g := newGatewayOpts(t, heldBackend(arrived, release), dialect.Version10, Options{Metrics: NewMetrics(reg, nil)}, withAuth(t),
		func(a *AgentConfig) { a.MaxCallsPerCaller = 2 })
	t.Cleanup(func() { close(release) })
	aliceTok := token(t, "alice")
	alice, bob := g.as(aliceTok), g.as(token(t, "bob"))
	c03, c10 := callers[0], callers[1]
	var held sync.WaitGroup
	held.Add(2)
	go func() {
		defer held.Done()
		_ = sendResult(t, alice, c10, c10.send("h1", c10.text("hold"), ""))
	}()
	<-arrived
	go func() {
		defer held.Done()
		// Its answer's head comes with the backend's first event.
		res, err := http.DefaultClient.Do(alice.streamRequest(context.Background(), "2", c10.method(dialect.SendStreamingMessage), c10.send("h2", c10.text("hold"), "")))
		if err == nil {
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
		}
	}()
	<-arrived

	for _, c := range []caller{c03, c10} {
		res, b, err := alice.postCtx(context.Background(), rpc(c.method(dialect.SendMessage), c.send("x"+c.d.String(), c.text("hi"), "")), alice.hdr(c.d)...)
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") != "1" {
			t.Fatalf("%s: HTTP %d, Retry-After %q: %s", c.d, res.StatusCode, res.Header.Get("Retry-After"), b)
		}
		wantErrorSaying(t, gjson.ParseBytes(b), c.d, -32603, "max_calls_per_caller")
	}
	status, h, r := restDo(t, g, http.MethodPost, "/message:send", "application/json", `{"message":{"messageId":"xr","role":"ROLE_USER","parts":[{"text":"hi"}]}}`, aliceTok)
	if status != http.StatusTooManyRequests || h.Get("Retry-After") != "1" || r.Get("error.status").Str != "RESOURCE_EXHAUSTED" ||
		!strings.Contains(r.Get("error.message").Str, "max_calls_per_caller") {
		t.Fatalf("REST: HTTP %d, Retry-After %q: %s", status, h.Get("Retry-After"), r.Raw)
	}
	status, h, r = restDo(t, g, http.MethodPost, "/message:stream", "application/json", `{"message":{"messageId":"xrs","role":"ROLE_USER","parts":[{"text":"hi"}]}}`, aliceTok)
	if status != http.StatusTooManyRequests || h.Get("Retry-After") != "1" || r.Get("error.status").Str != "RESOURCE_EXHAUSTED" {
		t.Fatalf("REST stream: HTTP %d, Retry-After %q: %s", status, h.Get("Retry-After"), r.Raw)
	}
	res, b, err := alice.postCtx(context.Background(), rpc(c10.method(dialect.SendStreamingMessage), c10.send("xs", c10.text("hi"), "")), "A2A-Version", "1.0", "Accept", "text/event-stream")
	if err != nil || res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") != "1" {
		t.Fatalf("JSON-RPC stream: %v, %v: %s", res, err, b)
	}
	wantErrorSaying(t, gjson.ParseBytes(b), c10.d, -32603, "max_calls_per_caller")
	grpcAlice := newGRPCGateway(t, alice)
	_, err = grpcAlice.raw.SendMessage(context.Background(), pbText("xg", "hi"))
	if st := wantStatus(t, err, codes.ResourceExhausted, dialect.ErrInternal.Error().Reason); !strings.Contains(st.Message(), "max_calls_per_caller") {
		t.Fatalf("gRPC: %v", err)
	}
	stream, err := grpcAlice.raw.SendStreamingMessage(context.Background(), pbText("xgs", "hi"))
	if err == nil {
		_, err = stream.Recv()
	}
	wantStatus(t, err, codes.ResourceExhausted, dialect.ErrInternal.Error().Reason)
	mustResult(t, sendResult(t, bob, c10, c10.send("b1", c10.text("hi"), "")))
	if n := counterValue(t, reg, "a2a_gateway_requests_total", map[string]string{"outcome": "caller_limited"}); n != 7 {
		t.Errorf("calls counted as caller_limited: %v, want 7", n)
	}

	release <- struct{}{}
	release <- struct{}{}
	held.Wait()
	mustResult(t, sendResult(t, alice, c10, c10.send("a1", c10.text("hi"), "")))

	t.Run("without auth", func(t *testing.T) {
		arrived, release := make(chan struct{}), make(chan struct{})
		g := newGateway(t, heldBackend(arrived, release), dialect.Version10, func(a *AgentConfig) { a.MaxCallsPerCaller = 1 })
		t.Cleanup(func() { close(release) })
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = sendResult(t, g, c10, c10.send("h1", c10.text("hold"), ""))
		}()
		<-arrived
		res, b, err := g.postCtx(context.Background(), rpc(c10.method(dialect.SendMessage), c10.send("x", c10.text("hi"), "")), g.hdr(c10.d)...)
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("HTTP %d: %s", res.StatusCode, b)
		}
		release <- struct{}{}
		<-done
		mustResult(t, sendResult(t, g, c10, c10.send("a1", c10.text("hi"), "")))
	})
}

// pushConfigMixUp is a 1.0 backend whose push config answers name bob's
// task: Create and Get answer a config of t-bob, List the asked task's
// config and one of t-bob's. A send makes the task named after its
// message id.
func pushConfigMixUp() http.Handler {
	bobs := `{"taskId":"t-bob","id":"c-bob","url":"https://bob.example/hook","token":"bob-secret"}`
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := gjson.ParseBytes(readAll(r))
		id, p := req.Get("id").Raw, req.Get("params")
		var result string
		switch req.Get("method").Str {
		case "SendMessage":
			m := p.Get("message.messageId").Str
			result = `{"task":{"id":"t-` + m + `","contextId":"c-` + m + `","status":{"state":"TASK_STATE_WORKING"}}}`
		case "CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig":
			result = bobs
		case "ListTaskPushNotificationConfigs":
			result = `{"configs":[` + bobs + `,{"taskId":` + p.Get("taskId").Raw + `,"id":"c1","url":"https://alice.example/hook"}],"nextPageToken":"p2"}`
		case "DeleteTaskPushNotificationConfig":
			result = `{}`
		default:
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"result":`+result+`}`)
	})
}

// noBobs fails when an answer tells anything of bob's config.
func noBobs(t *testing.T, what, raw string) {
	t.Helper()
	for _, s := range []string{"t-bob", "c-bob", "bob.example", "bob-secret"} {
		if strings.Contains(raw, s) {
			t.Errorf("%s: the answer shows bob's config (%s): %s", what, s, raw)
		}
	}
}

// TestPushConfigAnswerAboutAnotherTask: a backend that answers alice's
// Create or Get push config with a config of another task (bob's) does
// not have it passed to her: she gets the gateway's error for a bad
// backend answer, in her dialect and binding, with the push relay off; and
// with the relay on, a registration the backend answers so is refused and
// nothing is stored for her task.
func TestPushConfigAnswerAboutAnotherTask(t *testing.T) {
	off, on := false, true
	for _, relay := range []bool{false, true} {
		t.Run(map[bool]string{false: "relay off", true: "relay on"}[relay], func(t *testing.T) {
			reg := prometheus.NewRegistry()
			g := newGatewayOpts(t, pushConfigMixUp(), dialect.Version10, Options{Metrics: NewMetrics(reg, nil)}, allowLoopback,
				func(a *AgentConfig) { a.Push.Enabled = map[bool]*bool{false: &off, true: &on}[relay] })
			for i, c := range callers {
				task := c.task(t, mustResult(t, g.call(strconv.Itoa(i+1), c.method(dialect.SendMessage), c.send("a"+strconv.Itoa(i), c.text("hi"), "")))).Get("id").Str
				set, _ := callerPush(c, task, newReceiver(t, 0).url)
				r := g.call("10", c.method(dialect.CreatePushConfig), set)
				wantErrorSaying(t, r, c.d, -32603, "another task")
				noBobs(t, c.d.String()+" create", r.Raw)
				if relay {
					configs, _, err := g.agent.push.configs.PushConfigs(context.Background(), "test", task)
					if err != nil || len(configs) != 0 {
						t.Errorf("%s: the task holds %v (%v) after a refused registration", c.d, configs, err)
					}
					continue
				}
				get := `{"taskId":"` + task + `","id":"cfg1"}`
				if c.d == dialect.V03 {
					get = `{"id":"` + task + `","pushNotificationConfigId":"cfg1"}`
				}
				r = g.call("11", c.method(dialect.GetPushConfig), get)
				wantErrorSaying(t, r, c.d, -32603, "another task")
				noBobs(t, c.d.String()+" get", r.Raw)
			}
			if !relay {
				_, err := newGRPCGateway(t, g).raw.GetTaskPushNotificationConfig(context.Background(), &a2apb.GetTaskPushNotificationConfigRequest{TaskId: "t-a1", Id: "cfg1"})
				wantStatus(t, err, codes.Internal, dialect.ErrInternal.Error().Reason)
				noBobs(t, "gRPC get", status.Convert(err).Message())
			}
			if n := counterValue(t, reg, "a2a_gateway_backend_errors_total", map[string]string{"kind": backendInvalidReply}); n == 0 {
				t.Errorf("the backend's answers were not counted as invalid replies")
			}
		})
	}
}

// TestPushConfigListOfTwoTasks: a backend's list of push configs for
// alice's task that also holds a config of bob's is passed on without
// bob's, in every dialect and binding, with the relay off and, for a task
// served unchecked (tasks.allow_unknown), with it on; a 0.x get naming no
// config, which a 1.0 backend is asked as the list's first, answers
// alice's.
func TestPushConfigListOfTwoTasks(t *testing.T) {
	off, on := false, true
	for _, relay := range []bool{false, true} {
		t.Run(map[bool]string{false: "relay off", true: "relay on"}[relay], func(t *testing.T) {
			g := newGateway(t, pushConfigMixUp(), dialect.Version10, func(a *AgentConfig) {
				a.Push.Enabled = map[bool]*bool{false: &off, true: &on}[relay]
				a.Tasks.AllowUnknown = relay
			})
			task := "t-unknown"
			if !relay {
				c := callers[1]
				task = c.task(t, mustResult(t, g.call("1", c.method(dialect.SendMessage), c.send("a1", c.text("hi"), "")))).Get("id").Str
			}
			for _, c := range callers {
				list := `{"taskId":"` + task + `"}`
				if c.d == dialect.V03 {
					list = `{"id":"` + task + `"}`
				}
				r := mustResult(t, g.call("2", c.method(dialect.ListPushConfigs), list))
				configs := r
				if c.d == dialect.V10 {
					configs = r.Get("configs")
					if r.Get("nextPageToken").Str != "p2" {
						t.Errorf("%s: the list lost its next page: %s", c.d, r.Raw)
					}
				}
				if n := len(configs.Array()); n != 1 || configs.Get("0.taskId").Str != task {
					t.Errorf("%s: want alice's one config, got %s", c.d, r.Raw)
				}
				noBobs(t, c.d.String()+" list", r.Raw)
			}
			first := mustResult(t, g.call("3", "tasks/pushNotificationConfig/get", `{"id":"`+task+`"}`))
			if first.Get("taskId").Str != task || first.Get("pushNotificationConfig.id").Str != "c1" {
				t.Errorf("0.x get of the first config: %s", first.Raw)
			}
			noBobs(t, "0.x get of the first config", first.Raw)
			status, _, r := restDo(t, g, http.MethodGet, "/tasks/"+task+"/pushNotificationConfigs", "", "", "")
			if status != http.StatusOK || len(r.Get("configs").Array()) != 1 {
				t.Errorf("REST list: HTTP %d %s", status, r.Raw)
			}
			noBobs(t, "REST list", r.Raw)
			res, err := newGRPCGateway(t, g).raw.ListTaskPushNotificationConfigs(context.Background(), &a2apb.ListTaskPushNotificationConfigsRequest{TaskId: task})
			if err != nil || len(res.GetConfigs()) != 1 {
				t.Errorf("gRPC list: %v, %v", res, err)
			}
			noBobs(t, "gRPC list", res.String())
		})
	}
}

// TestForwardedHeadersNotPassedAsSent: what a caller claims of where its
// request came from reaches the backend only where the gateway's own word
// follows it: its X-Forwarded-For gets the caller's address appended, its
// Forwarded, X-Real-IP, X-Forwarded-Host and X-Forwarded-Proto are not
// passed on as sent.
func TestForwardedHeadersNotPassedAsSent(t *testing.T) {
	got := make(chan http.Header, 1)
	back := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := gjson.ParseBytes(readAll(r))
		if r.Method == http.MethodPost {
			got <- r.Header.Clone()
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+req.Get("id").Raw+`,"error":{"code":-32001,"message":"Task not found"}}`)
	})
	g := newGateway(t, back, dialect.Version10, func(a *AgentConfig) { a.Tasks.AllowUnknown = true })
	_, _, b := g.post(rpc("GetTask", `{"id":"t"}`), "A2A-Version", "1.0",
		"Forwarded", "for=198.51.100.1;proto=https", "X-Real-IP", "198.51.100.1", "X-Forwarded-For", "198.51.100.1",
		"X-Forwarded-Host", "admin.internal", "X-Forwarded-Proto", "https")
	h := <-got
	for _, k := range []string{"Forwarded", "X-Real-Ip"} {
		if v, ok := h[k]; ok {
			t.Errorf("the backend got the caller's %s: %q", k, v)
		}
	}
	if xff := h.Values("X-Forwarded-For"); len(xff) != 1 || xff[0] != "198.51.100.1, 127.0.0.1" {
		t.Errorf("X-Forwarded-For %q, want the caller's with its address appended", xff)
	}
	if host, proto := h.Values("X-Forwarded-Host"), h.Values("X-Forwarded-Proto"); len(host) != 1 || host[0] == "admin.internal" || len(proto) != 1 || proto[0] != "http" {
		t.Errorf("X-Forwarded-Host %q, X-Forwarded-Proto %q: want the gateway's own", host, proto)
	}
	wantError(t, gjson.ParseBytes(b), dialect.V10, -32001)
}
