package proxy

import (
	"bufio"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	pb03 "github.com/a2aproject/a2a-go/a2apb"
	"github.com/tidwall/gjson"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/a2agate/gateway/dialect"
)

// The 0.3 HTTP+JSON binding has no Go SDK client (a2a-go v0.3 speaks
// JSON-RPC and gRPC only), so these tests send the 0.3 proto's ProtoJSON as
// its clients do (Python's 0.3 REST transport) and check the shapes that
// come back.

// noForeignV03Keys fails when a 0.3 proto payload carries 0.3 JSON-RPC or 1.0
// spellings: kind discriminators, parts of a message, 1.0's CANCELED.
func noForeignV03Keys(t *testing.T, payload string) {
	t.Helper()
	for _, k := range []string{`"kind"`, `"mediaType"`, `"TASK_STATE_CANCELED"`, `"taskPushNotificationConfig"`} {
		if strings.Contains(payload, k) {
			t.Fatalf("0.3 proto payload holds %s: %s", k, payload)
		}
	}
	var walk func(r gjson.Result)
	walk = func(r gjson.Result) {
		if r.IsObject() && r.Get("messageId").Exists() && r.Get("parts").Exists() {
			t.Fatalf("a 0.3 proto message carries parts, not content: %s", r.Raw)
		}
		if r.IsObject() || r.IsArray() {
			r.ForEach(func(_, v gjson.Result) bool { walk(v); return true })
		}
	}
	walk(gjson.Parse(payload))
}

func v03Send(text string, blocking bool) string {
	b := "false"
	if blocking {
		b = "true"
	}
	return `{"message":{"messageId":"m-` + strings.ReplaceAll(text, " ", "-") + `","role":"ROLE_USER","content":[{"text":"` + text + `"}]},"configuration":{"blocking":` + b + `}}`
}

func TestRESTv03SendGetCancel(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backendKind) {
		g := newGateway(t, b.handler(t, nil), b.version, withAuth(t))
		alice := token(t, "alice")
		status, _, res := restDo(t, g, "POST", "/v1/message:send", "application/json", v03Send("hello world", true), alice)
		task := res.Get("task")
		if status != 200 || task.Get("status.state").Str != "TASK_STATE_COMPLETED" || task.Get("artifacts.0.parts.0.text").Str != "done: hello world" {
			t.Fatalf("send: HTTP %d %s", status, res.Raw)
		}
		noForeignV03Keys(t, res.Raw)
		id := task.Get("id").Str
		status, _, got := restDo(t, g, "GET", "/v1/tasks/"+id+"?historyLength=1", "", "", alice)
		if status != 200 || got.Get("id").Str != id || len(got.Get("history").Array()) != 1 || !got.Get("history.0.content").Exists() {
			t.Fatalf("get: HTTP %d %s", status, got.Raw)
		}
		noForeignV03Keys(t, got.Raw)

		status, _, res = restDo(t, g, "POST", "/v1/message:send", "application/json", v03Send("wait here", false), alice)
		if status != 200 || res.Get("task.status.state").Str == "TASK_STATE_COMPLETED" {
			t.Fatalf("non-blocking send: HTTP %d %s", status, res.Raw)
		}
		status, _, res = restDo(t, g, "POST", "/v1/tasks/"+res.Get("task.id").Str+":cancel", "application/json", `{}`, alice)
		if status != 200 || res.Get("status.state").Str != "TASK_STATE_CANCELLED" {
			t.Fatalf("cancel: HTTP %d %s", status, res.Raw)
		}
		status, _, res = restDo(t, g, "GET", "/v1/tasks/no-such-task", "", "", alice)
		if status != 404 || res.Get("code").Int() != -32001 {
			t.Fatalf("unknown task: HTTP %d %s", status, res.Raw)
		}
		status, _, res = restDo(t, g, "GET", "/v1/tasks/"+id, "", "", token(t, "bob"))
		if status != 404 {
			t.Fatalf("bob gets alice's task: HTTP %d %s", status, res.Raw)
		}
	})
}

func TestRESTv03Stream(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backendKind) {
		g := newGateway(t, b.handler(t, nil), b.version)
		req, _ := http.NewRequest("POST", strings.TrimSuffix(g.url, "/")+"/v1/message:stream", strings.NewReader(v03Send("hello stream", true)))
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("HTTP %d %v", res.StatusCode, res.Header)
		}
		var events []gjson.Result
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				noForeignV03Keys(t, d)
				events = append(events, gjson.Parse(d))
			}
		}
		if len(events) < 2 {
			t.Fatalf("events: %v", events)
		}
		last := events[len(events)-1].Get("statusUpdate")
		if last.Get("status.state").Str != "TASK_STATE_COMPLETED" || !last.Get("final").Bool() {
			t.Fatalf("the stream must end with a final completed status update: %v", events)
		}
	})
}

func TestRESTv03PushConfigCRUD(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backendKind) {
		g := newGateway(t, b.handler(t, nil), b.version)
		_, _, res := restDo(t, g, "POST", "/v1/message:send", "application/json", v03Send("input please", true), "")
		id := res.Get("task.id").Str
		name := "tasks/" + id + "/pushNotificationConfigs/cfg1"
		check := func(what string, status int, r gjson.Result) {
			t.Helper()
			noForeignV03Keys(t, r.Raw)
			c := r.Get("pushNotificationConfig")
			if status != 200 || r.Get("name").Str != name || c.Get("id").Str != "cfg1" || c.Get("url").Str != "https://hooks.example/a2a" ||
				c.Get("token").Str != "tok" || c.Get("authentication.schemes.0").Str != "Bearer" {
				t.Fatalf("%s: HTTP %d %s", what, status, r.Raw)
			}
		}
		status, _, r := restDo(t, g, "POST", "/v1/tasks/"+id+"/pushNotificationConfigs", "application/json",
			`{"name":"`+name+`","pushNotificationConfig":{"id":"cfg1","url":"https://hooks.example/a2a","token":"tok","authentication":{"schemes":["Bearer"],"credentials":"secret"}}}`, "")
		check("create", status, r)
		status, _, r = restDo(t, g, "GET", "/v1/"+name, "", "", "")
		check("get", status, r)
		status, _, r = restDo(t, g, "GET", "/v1/tasks/"+id+"/pushNotificationConfigs", "", "", "")
		if len(r.Get("configs").Array()) != 1 {
			t.Fatalf("list: HTTP %d %s", status, r.Raw)
		}
		check("list", status, r.Get("configs.0"))
		status, _, r = restDo(t, g, "DELETE", "/v1/"+name, "", "", "")
		if status != 200 || r.Raw != "{}" {
			t.Fatalf("delete: HTTP %d %s", status, r.Raw)
		}
		if _, _, r = restDo(t, g, "GET", "/v1/tasks/"+id+"/pushNotificationConfigs", "", "", ""); len(r.Get("configs").Array()) != 0 {
			t.Fatalf("list after delete: %s", r.Raw)
		}
	})
}

// TestRESTv03Card: GET /v1/card, where the 0.3 SDKs' REST clients read the
// extended card, answers the 0.3 proto's AgentCard: strict ProtoJSON of
// a2a.v1.AgentCard, the gateway's URLs at 0.3, the extended skills.
func TestRESTv03Card(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backendKind) {
		g := newGateway(t, b.handler(t, nil), b.version, withAuth(t))
		status, _, res := restDo(t, g, "GET", "/v1/card", "", "", token(t, "alice"))
		if status != 200 {
			t.Fatalf("HTTP %d %s", status, res.Raw)
		}
		var card pb03.AgentCard
		if err := protojson.Unmarshal([]byte(res.Raw), &card); err != nil {
			t.Fatalf("not a 0.3 proto AgentCard: %v: %s", err, res.Raw)
		}
		if card.GetUrl() != g.agent.cfg.PublicURL || card.GetPreferredTransport() != "JSONRPC" || card.GetProtocolVersion() != "0.3" {
			t.Fatalf("url %q transport %q version %q, want the gateway's JSON-RPC at 0.3", card.GetUrl(), card.GetPreferredTransport(), card.GetProtocolVersion())
		}
		if !slices.ContainsFunc(card.GetSkills(), func(s *pb03.AgentSkill) bool { return s.GetId() == "admin" }) {
			t.Fatalf("not the extended card: %s", res.Raw)
		}
		if status, _, res := restDo(t, g, "GET", "/v1/card", "", "", ""); status != 401 {
			t.Fatalf("without a token: HTTP %d %s", status, res.Raw)
		}
	})
}

// TestRESTv03PushConfigListPaged: the 0.3 binding's list takes the 0.3
// proto's page_size and page_token (ListTaskPushNotificationConfigRequest)
// as query parameters, as its GET annotation makes them, and pages as the
// 1.0 list does: a 0.3 client that asks for pages is not refused.
func TestRESTv03PushConfigListPaged(t *testing.T) {
	g := newGateway(t, backends[1].handler(t, nil), backends[1].version)
	_, _, res := restDo(t, g, "POST", "/v1/message:send", "application/json", v03Send("input please", true), "")
	id := res.Get("task.id").Str
	for _, cfg := range []string{"cfg1", "cfg2"} {
		if status, _, r := restDo(t, g, "POST", "/v1/tasks/"+id+"/pushNotificationConfigs", "application/json",
			`{"pushNotificationConfig":{"id":"`+cfg+`","url":"https://hooks.example/a2a"}}`, ""); status != 200 {
			t.Fatalf("create %s: HTTP %d %s", cfg, status, r.Raw)
		}
	}
	status, _, first := restDo(t, g, "GET", "/v1/tasks/"+id+"/pushNotificationConfigs?pageSize=1", "", "", "")
	next := first.Get("nextPageToken").Str
	if status != 200 || len(first.Get("configs").Array()) != 1 || next == "" {
		t.Fatalf("first page: HTTP %d %s", status, first.Raw)
	}
	status, _, second := restDo(t, g, "GET", "/v1/tasks/"+id+"/pushNotificationConfigs?page_size=1&page_token="+next, "", "", "")
	if status != 200 || len(second.Get("configs").Array()) != 1 || second.Get("configs.0.name").Str == first.Get("configs.0.name").Str {
		t.Fatalf("second page: HTTP %d %s after %s", status, second.Raw, first.Raw)
	}
}

// TestRESTv03MembersItDoesNotKnowAreCarried: members of a 0.3 REST send
// that the 0.3 proto has no field for (a newer client's, an SDK's own) reach
// the backend as the same members sent over JSON-RPC do (to be taken, or
// refused as a strict 1.0 server refuses them), rather than being dropped
// by the translation from the 0.3 proto's shape.
func TestRESTv03MembersItDoesNotKnowAreCarried(t *testing.T) {
	var mu sync.Mutex
	var sent string
	back := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if gjson.GetBytes(body, "method").Str == "SendMessage" {
			mu.Lock()
			sent = string(body)
			mu.Unlock()
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+gjson.GetBytes(body, "id").Raw+`,"result":{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"}}}}`)
	})
	g := newGateway(t, back, dialect.Version10)
	status, _, res := restDo(t, g, "POST", "/v1/message:send", "application/json",
		`{"message":{"messageId":"m1","role":"ROLE_USER","content":[{"text":"hi","xPart":1}],"xMessage":2},"configuration":{"blocking":true,"xConfig":3},"xParams":4}`, "")
	if status != 200 {
		t.Fatalf("send: HTTP %d %s", status, res.Raw)
	}
	mu.Lock()
	defer mu.Unlock()
	p := gjson.Parse(sent).Get("params")
	for path, want := range map[string]int64{"message.parts.0.xPart": 1, "message.xMessage": 2, "configuration.xConfig": 3, "xParams": 4} {
		if p.Get(path).Int() != want {
			t.Errorf("%s did not reach the backend: %s", path, p.Raw)
		}
	}
}
