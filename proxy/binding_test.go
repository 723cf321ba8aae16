package proxy

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	a2a03 "github.com/a2aproject/a2a-go/a2a"
	a2aclient03 "github.com/a2aproject/a2a-go/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/tidwall/gjson"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/testlog"
	"github.com/a2agate/gateway/legacyagent"
)

// accessLogCalls returns the access log's call records in a JSON log.
func accessLogCalls(t *testing.T, log *testlog.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(log.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %s: %v", line, err)
		}
		if rec["msg"] == "call" {
			out = append(out, rec)
		}
	}
	return out
}

// bindingGateway is a gateway in front of the 0.2.5 agent on an h2c
// listener whose address is the agent's public URL, so that the cards
// name where it really is.
type bindingGateway struct {
	addr    string // host:port
	url     string // the public URL, http://addr/
	reg     *prometheus.Registry
	log     *testlog.Buffer
	release func()
}

func newBindingGateway(t *testing.T, bindings ...string) *bindingGateway {
	t.Helper()
	var gw http.Handler
	ready := make(chan struct{})
	g := &bindingGateway{reg: prometheus.NewRegistry(), log: &testlog.Buffer{}}
	g.addr = serveH2C(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-ready
		gw.ServeHTTP(w, r)
	}))
	g.url = "http://" + g.addr + "/"
	hold := make(chan struct{})
	g.release = sync.OnceFunc(func() { close(hold) })
	t.Cleanup(g.release)
	backend := legacyagent.New(legacyagent.Options{Hold: hold})
	t.Cleanup(backend.Close)
	bs := httptestServer(t, backend)
	cfg := AgentConfig{Name: "test", PublicURL: g.url, Backend: BackendConfig{URL: bs + "/", Dialect: dialect.Version025},
		Skills: SkillsConfig{Default: "work"}, Bindings: bindings}
	a := newValidAgent(t, cfg, Options{Metrics: NewMetrics(g.reg, nil), Logger: slog.New(slog.NewJSONHandler(g.log, nil))})
	if err := a.RefreshCard(context.Background()); err != nil {
		t.Fatal(err)
	}
	gw = soleGateway(t, a)
	close(ready)
	return g
}

func (g *bindingGateway) card(t *testing.T, version string) gjson.Result {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, g.url+".well-known/agent-card.json", nil)
	if version != "" {
		req.Header.Set("A2A-Version", version)
	}
	_, body := roundTrip(t, req)
	return gjson.ParseBytes(body)
}

func (g *bindingGateway) do(t *testing.T, method, path, body string, header ...string) (int, gjson.Result) {
	t.Helper()
	req, _ := http.NewRequest(method, g.url+strings.TrimPrefix(path, "/"), strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, b := roundTrip(t, req)
	return res.StatusCode, gjson.ParseBytes(b)
}

// dialGRPC is a gRPC client of the h2c server at addr, without TLS, with
// opts; closed when tb ends.
func dialGRPC(tb testing.TB, addr string, opts ...grpc.DialOption) *grpc.ClientConn {
	tb.Helper()
	conn, err := grpc.NewClient(addr, append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, opts...)...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = conn.Close() })
	return conn
}

// TestCardsListServedBindings: each card lists the bindings served, JSON-RPC
// first, REST at the public URL, gRPC at its host:port; a reduced bindings
// setting lists fewer.
func TestCardsListServedBindings(t *testing.T) {
	list := func(r gjson.Result, key, bindingKey string) string {
		var parts []string
		for _, it := range r.Get(key).Array() {
			parts = append(parts, it.Get(bindingKey).Str+" "+it.Get("protocolVersion").Str+" "+it.Get("url").Str)
		}
		return strings.Join(parts, ", ")
	}
	t.Run("all", func(t *testing.T) {
		g := newBindingGateway(t)
		u, a := g.url, g.addr
		if got, want := list(g.card(t, "1.0"), "supportedInterfaces", "protocolBinding"),
			"JSONRPC 1.0 "+u+", HTTP+JSON 1.0 "+u+", GRPC 1.0 "+a; got != want {
			t.Errorf("1.0 card: %s, want %s", got, want)
		}
		v03 := g.card(t, "0.3")
		if got, want := list(v03, "additionalInterfaces", "transport"), "JSONRPC  "+u+", HTTP+JSON  "+u+", GRPC  "+a; got != want {
			t.Errorf("0.3 card: %s, want %s", got, want)
		}
		if v03.Get("preferredTransport").Str != "JSONRPC" || v03.Get("url").Str != u {
			t.Errorf("0.3 card main interface %s at %s", v03.Get("preferredTransport"), v03.Get("url"))
		}
		hybrid := g.card(t, "")
		if got, want := list(hybrid, "supportedInterfaces", "protocolBinding"),
			"JSONRPC 1.0 "+u+", HTTP+JSON 1.0 "+u+", GRPC 1.0 "+a+", JSONRPC 0.3 "+u+", HTTP+JSON 0.3 "+u+", GRPC 0.3 "+a; got != want {
			t.Errorf("hybrid card: %s, want %s", got, want)
		}
		res, err := http.Get(g.url + ".well-known/agent.json")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if v025 := gjson.ParseBytes(body); v025.Get("url").Str != u || v025.Get("additionalInterfaces").Exists() {
			t.Errorf("0.2.5 card: %s", body)
		}
	})
	t.Run("jsonrpc and grpc", func(t *testing.T) {
		g := newBindingGateway(t, "grpc", "jsonrpc")
		if got, want := list(g.card(t, "1.0"), "supportedInterfaces", "protocolBinding"), "JSONRPC 1.0 "+g.url+", GRPC 1.0 "+g.addr; got != want {
			t.Errorf("1.0 card: %s, want %s", got, want)
		}
		if got, want := list(g.card(t, "0.3"), "additionalInterfaces", "transport"), "JSONRPC  "+g.url+", GRPC  "+g.addr; got != want {
			t.Errorf("0.3 card: %s, want %s", got, want)
		}
	})
	t.Run("http_json only", func(t *testing.T) {
		g := newBindingGateway(t, "http_json")
		if got, want := list(g.card(t, "1.0"), "supportedInterfaces", "protocolBinding"), "HTTP+JSON 1.0 "+g.url; got != want {
			t.Errorf("1.0 card: %s, want %s", got, want)
		}
		if v03 := g.card(t, "0.3"); v03.Get("preferredTransport").Str != "HTTP+JSON" {
			t.Errorf("0.3 card: %s", v03.Raw)
		}
	})
}

// TestBindingNotPublishedIsNotServed: a binding the bindings setting leaves
// out is refused in its own wire shape, naming the setting.
func TestBindingNotPublishedIsNotServed(t *testing.T) {
	g := newBindingGateway(t, "jsonrpc")
	for _, path := range []string{"/message:send", "/v1/message:send", "/tasks/x"} {
		method := http.MethodPost
		if path == "/tasks/x" {
			method = http.MethodGet
		}
		code, st := g.do(t, method, path, `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}}`)
		if code != http.StatusNotFound || st.Get("error.status").Str != "NOT_FOUND" || !strings.Contains(st.Get("error.message").Str, "bindings") {
			t.Errorf("REST %s %s: %d %s, want a 404 Status naming the bindings setting", method, path, code, st.Raw)
		}
	}
	_, err := a2apb.NewA2AServiceClient(dialGRPC(t, g.addr)).GetTask(context.Background(), &a2apb.GetTaskRequest{Id: "x"})
	if st, _ := status.FromError(err); st.Code() != codes.Unimplemented || !strings.Contains(st.Message(), "bindings") {
		t.Errorf("gRPC: %v, want Unimplemented naming the bindings setting", err)
	}
	// JSON-RPC is still served.
	if _, r := g.do(t, http.MethodPost, "/", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}`, "A2A-Version", "1.0"); r.Get("error.code").Int() != -32001 {
		t.Errorf("JSON-RPC: %s, want task not found", r.Raw)
	}

	g = newBindingGateway(t, "http_json", "grpc")
	code, r := g.do(t, http.MethodPost, "/", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}`, "A2A-Version", "1.0")
	if code != http.StatusNotFound || r.Get("error.code").Int() != -32601 || !strings.Contains(r.Get("error.message").Str, "bindings") {
		t.Errorf("JSON-RPC: %d %s, want 404 with a method-not-found error naming the bindings setting", code, r.Raw)
	}
	// The other bindings still reach the core.
	if code, st := g.do(t, http.MethodGet, "/tasks/x", ""); code != http.StatusNotFound || st.Get("error.details.0.reason").Str != "TASK_NOT_FOUND" {
		t.Errorf("REST: %d %s, want task not found", code, st.Raw)
	}
	_, err = a2apb.NewA2AServiceClient(dialGRPC(t, g.addr)).GetTask(context.Background(), &a2apb.GetTaskRequest{Id: "x"})
	if st, _ := status.FromError(err); st.Code() != codes.NotFound {
		t.Errorf("gRPC: %v, want NotFound", err)
	}
}

// TestCallsLabelledByBinding: every binding's calls count under their
// binding and the caller's dialect (0.3 REST and gRPC calls reach the core
// as 1.0), and the access log names both.
func TestCallsLabelledByBinding(t *testing.T) {
	g := newBindingGateway(t)
	ctx := context.Background()
	// jsonrpc 1.0 and 0.x.
	g.do(t, http.MethodPost, "/", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}`, "A2A-Version", "1.0")
	g.do(t, http.MethodPost, "/", `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"x"}}`)
	// http_json 1.0 and 0.3.
	g.do(t, http.MethodGet, "/tasks/x", "")
	g.do(t, http.MethodGet, "/v1/tasks/x", "")
	// grpc 1.0 and 0.3.
	conn := dialGRPC(t, g.addr)
	if _, err := a2apb.NewA2AServiceClient(conn).GetTask(ctx, &a2apb.GetTaskRequest{Id: "x"}); status.Code(err) != codes.NotFound {
		t.Fatalf("gRPC 1.0: %v", err)
	}
	v03 := a2aclient03.NewGRPCTransport(conn)
	if _, err := v03.GetTask(ctx, &a2a03.TaskQueryParams{ID: "x"}); err == nil {
		t.Fatal("gRPC 0.3: an unknown task was found")
	}
	for _, want := range []struct{ binding, caller string }{
		{"jsonrpc", "1.0"}, {"jsonrpc", "0.x"}, {"http_json", "1.0"}, {"http_json", "0.x"}, {"grpc", "1.0"}, {"grpc", "0.x"},
	} {
		labels := map[string]string{"binding": want.binding, "caller_dialect": want.caller, "op": "get_task", "code": "-32001"}
		if got := counterValue(t, g.reg, "a2a_gateway_requests_total", labels); got != 1 {
			t.Errorf("requests_total%v = %v, want 1", labels, got)
		}
		n := 0
		for _, rec := range accessLogCalls(t, g.log) {
			if rec["binding"] == want.binding && rec["caller_dialect"] == want.caller {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%d access log lines with binding %s caller_dialect %s, want 1", n, want.binding, want.caller)
		}
	}
}

// TestSDKDefaultClientPicksJSONRPC: a2a-go v2's default client, reading a
// card that lists every binding, picks JSON-RPC, as it would in front of a
// native JSON-RPC agent; configured to prefer REST or gRPC, it uses those.
func TestSDKDefaultClientPicksJSONRPC(t *testing.T) {
	g := newBindingGateway(t)
	ctx := context.Background()
	card, err := agentcard.DefaultResolver.Resolve(ctx, g.url)
	if err != nil {
		t.Fatal(err)
	}
	client, err := a2aclient.NewFromCard(ctx, card)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Destroy()
	res, err := client.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hello"))})
	if err != nil {
		t.Fatal(err)
	}
	if task, ok := res.(*a2a.Task); !ok || task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("send: %#v", res)
	}
	rest, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []a2a.TransportProtocol{a2a.TransportProtocolHTTPJSON}}))
	if err != nil {
		t.Fatal(err)
	}
	defer rest.Destroy()
	if _, err := rest.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hello"))}); err != nil {
		t.Fatal(err)
	}
	for binding, want := range map[string]float64{"jsonrpc": 1, "http_json": 1, "grpc": 0} {
		if got := counterValue(t, g.reg, "a2a_gateway_requests_total", map[string]string{"binding": binding, "op": "send_message"}); got != want {
			t.Errorf("send_message through %s: %v, want %v", binding, got, want)
		}
	}
}

// TestBindingsConfig: bindings defaults to all three and is a closed set
// without duplicates, never empty.
func TestBindingsConfig(t *testing.T) {
	valid := func(bindings []string) error {
		cfg := AgentConfig{Name: "a", PublicURL: "http://gw.test/", Backend: BackendConfig{URL: "http://b.test/"}, Bindings: bindings}
		cfg.SetDefaults()
		return cfg.Validate()
	}
	cfg := AgentConfig{}
	cfg.SetDefaults()
	if strings.Join(cfg.Bindings, ",") != "jsonrpc,http_json,grpc" {
		t.Errorf("default bindings %v", cfg.Bindings)
	}
	for _, ok := range [][]string{{"jsonrpc"}, {"http_json"}, {"grpc", "jsonrpc"}} {
		if err := valid(ok); err != nil {
			t.Errorf("bindings %v: %v", ok, err)
		}
	}
	for bad, want := range map[string][]string{
		"is empty":          {},
		"is not a binding":  {"JSONRPC"},
		"is listed twice":   {"grpc", "grpc"},
		"is not a binding:": {"rest"},
	} {
		if err := valid(want); err == nil || !strings.Contains(err.Error(), strings.TrimSuffix(bad, ":")) {
			t.Errorf("bindings %q: %v, want an error saying it %s", want, err, bad)
		}
	}
}

// TestGRPCEventBytesCoversTheAgentsLimits: the gRPC binding's bound on an
// event of the core's stream grows with the agent's max_event_bytes and
// max_reply_bytes, translated (twice as long, and more), so that an event
// the agent relays is not refused by the binding.
func TestGRPCEventBytesCoversTheAgentsLimits(t *testing.T) {
	for _, c := range []AgentConfig{{MaxEventBytes: 24 << 20, MaxReplyBytes: 1 << 20}, {MaxEventBytes: 1 << 20, MaxReplyBytes: 64 << 20}} {
		if got, need := grpcEventBytes(c), 2*max(int64(c.MaxEventBytes), c.MaxReplyBytes); got <= need {
			t.Errorf("max_event_bytes %d, max_reply_bytes %d: the binding holds events up to %d bytes, want more than %d", c.MaxEventBytes, c.MaxReplyBytes, got, need)
		}
	}
}
