package proxy

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/auth"
	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/agent10"
	"github.com/a2agate/gateway/internal/testnet"
	"github.com/a2agate/gateway/legacyagent"
	"github.com/a2agate/gateway/store"
)

// backendKind is one kind of backend the end-to-end tests run against.
type backendKind struct {
	name    string
	version dialect.Version
	handler func(t *testing.T, hold chan struct{}) http.Handler
}

var backends = []backendKind{
	{"legacy-0.2.5", dialect.Version025, func(t *testing.T, hold chan struct{}) http.Handler {
		a := legacyagent.New(legacyagent.Options{Hold: hold})
		t.Cleanup(a.Close)
		return a
	}},
	{"agent-1.0", dialect.Version10, func(t *testing.T, hold chan struct{}) http.Handler {
		a := agent10.New(agent10.Options{Hold: hold})
		t.Cleanup(a.Close)
		return a
	}},
}

// testGateway is a gateway in front of one backend, both on loopback.
type testGateway struct {
	t       *testing.T
	url     string
	agent   *Agent
	backend *httptest.Server
	token   string // sent as a Bearer token when set
}

func newGateway(t *testing.T, backend http.Handler, version dialect.Version, edit ...func(*AgentConfig)) *testGateway {
	t.Helper()
	return newGatewayOpts(t, backend, version, Options{}, edit...)
}

func newGatewayWithStore(t *testing.T, backend http.Handler, tasks store.Store, edit ...func(*AgentConfig)) *testGateway {
	t.Helper()
	return newGatewayOpts(t, backend, dialect.Version025, Options{Tasks: tasks}, edit...)
}

func httptestServer(t *testing.T, h http.Handler) string {
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s.URL
}

func newGatewayOpts(t *testing.T, backend http.Handler, version dialect.Version, opts Options, edit ...func(*AgentConfig)) *testGateway {
	t.Helper()
	bs := httptest.NewServer(backend)
	t.Cleanup(bs.Close)
	// The test agents list two skills; standard clients name none.
	cfg := AgentConfig{Name: "test", Path: "/", PublicURL: "http://gateway.test/", Backend: BackendConfig{URL: bs.URL + "/", Dialect: version},
		Skills: SkillsConfig{Default: "work"}}
	for _, e := range edit {
		e(&cfg)
	}
	cfg.SetDefaults()
	if cfg.Auth != nil {
		opts.Verifier = verifierOf(t, cfg)
	}
	a := newValidAgent(t, cfg, opts)
	_ = a.RefreshCard(context.Background()) // a scripted backend may have no card
	gs := httptest.NewServer(soleGateway(t, a))
	t.Cleanup(gs.Close)
	return &testGateway{t: t, url: gs.URL + "/", agent: a, backend: bs}
}

// post sends a raw body and returns the status and body of the answer.
func (g *testGateway) post(body string, header ...string) (int, http.Header, []byte) {
	g.t.Helper()
	res, b, err := g.postCtx(context.Background(), body, header...)
	if err != nil {
		g.t.Fatal(err)
	}
	return res.StatusCode, res.Header, b
}

// postCtx sends a raw body within ctx, as the holder of the gateway's
// token, with header's name and value pairs, and reads the answer.
func (g *testGateway) postCtx(ctx context.Context, body string, header ...string) (*http.Response, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.url, strings.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if g.token != "" {
		req.Header.Set("Authorization", "Bearer "+g.token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res, b, err
}

// request sends body to path under the gateway with method and header's
// name and value pairs, leaving out a pair whose value is empty, and reads
// the whole answer; a transport error fails t.
func (g *testGateway) request(t *testing.T, method, path, body string, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, strings.TrimSuffix(g.url, "/")+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i+1] != "" {
			req.Header.Set(header[i], header[i+1])
		}
	}
	return roundTrip(t, req)
}

// bearerOf is the Authorization value that presents tok, none for none.
func bearerOf(tok string) string {
	if tok == "" {
		return ""
	}
	return "Bearer " + tok
}

// roundTrip sends req and reads the whole answer; a transport error
// fails t.
func roundTrip(t *testing.T, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	return testnet.RoundTrip(t, http.DefaultClient, req)
}

// call sends one JSON-RPC request in the dialect its method names and
// returns the reply, checking the envelope.
func (g *testGateway) call(id, method, params string) gjson.Result {
	g.t.Helper()
	body := `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":` + params + `}`
	d, _, _ := dialect.Lookup(method)
	status, h, b := g.post(body, g.hdr(d)...)
	if status != http.StatusOK {
		g.t.Fatalf("%s: HTTP %d: %s", method, status, b)
	}
	if ct := h.Get("Content-Type"); ct != "application/json" {
		g.t.Fatalf("%s: Content-Type %q", method, ct)
	}
	r := gjson.ParseBytes(b)
	if r.Get("jsonrpc").Str != "2.0" || r.Get("id").Raw != id {
		g.t.Fatalf("%s: envelope does not echo id %s: %s", method, id, b)
	}
	return r
}

// hdr returns the headers a caller of dialect d sends.
func (g *testGateway) hdr(d dialect.ID) []string {
	if d == dialect.V10 {
		return []string{"A2A-Version", "1.0"}
	}
	return nil
}

// get fetches a path of the gateway.
func (g *testGateway) get(path string) []byte {
	g.t.Helper()
	res, err := http.Get(strings.TrimSuffix(g.url, "/") + path)
	if err != nil {
		g.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		g.t.Fatalf("GET %s: HTTP %d: %s", path, res.StatusCode, b)
	}
	return b
}

// mustResult returns the result of a successful reply.
func mustResult(t *testing.T, r gjson.Result) gjson.Result {
	t.Helper()
	if e := r.Get("error"); e.Exists() {
		t.Fatalf("unexpected error: %s", e.Raw)
	}
	return r.Get("result")
}

// wantErrorSaying is wantError for an error whose message says says.
func wantErrorSaying(t *testing.T, r gjson.Result, d dialect.ID, code int, says string) gjson.Result {
	t.Helper()
	e := wantError(t, r, d, code)
	if msg := e.Get("message").Str; !strings.Contains(msg, says) {
		t.Fatalf("message %q does not say %q", msg, says)
	}
	return e
}

// wantError checks a reply is an error with code, in dialect d's shape.
func wantError(t *testing.T, r gjson.Result, d dialect.ID, code int) gjson.Result {
	t.Helper()
	e := r.Get("error")
	if !e.Exists() {
		t.Fatalf("want error %d, got %s", code, r.Raw)
	}
	if got := int(e.Get("code").Int()); got != code {
		t.Fatalf("want error code %d, got %s", code, e.Raw)
	}
	if e.Get("message").Str == "" {
		t.Fatalf("error without a message: %s", e.Raw)
	}
	data := e.Get("data")
	switch {
	case d == dialect.V10 && data.Exists() && !data.IsArray():
		t.Fatalf("1.0 error data must be an array of details: %s", e.Raw)
	case d == dialect.V03 && data.IsArray():
		t.Fatalf("0.x error data must not be the 1.0 details array: %s", e.Raw)
	}
	return e
}

// noForeignKeys fails when a payload in dialect d carries the other
// dialect's keys anywhere.
func noForeignKeys(t *testing.T, d dialect.ID, payload string) {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(payload), &v); err != nil {
		t.Fatal(err)
	}
	foreign := []string{"kind", "final", "blocking", "file", "mimeType", "pushNotificationConfig", "pushNotificationConfigId"}
	if d == dialect.V03 {
		foreign = []string{"raw", "url", "mediaType", "filename", "returnImmediately", "taskPushNotificationConfig", "statusUpdate", "artifactUpdate", "tenant"}
	}
	var walk func(v any, path string)
	walk = func(v any, path string) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if path != "metadata" && !strings.HasSuffix(path, ".metadata") && !strings.HasSuffix(path, ".data") {
					for _, f := range foreign {
						partOnly := d == dialect.V03 && (f == "raw" || f == "url" || f == "mediaType" || f == "filename")
						if k == f && (!partOnly || strings.HasSuffix(path, "parts[]")) {
							t.Errorf("%s payload has %s key %q at %s: %s", d, map[dialect.ID]string{dialect.V03: "1.0", dialect.V10: "0.x"}[d], k, path, payload)
						}
					}
				}
				walk(e, strings.TrimPrefix(path+"."+k, "."))
			}
		case []any:
			for _, e := range x {
				walk(e, path+"[]")
			}
		}
	}
	walk(v, "")
}

// newValidAgent is the agent of cfg, with defaults, which must be valid;
// closed when tb ends.
func newValidAgent(tb testing.TB, cfg AgentConfig, opts Options) *Agent {
	tb.Helper()
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		tb.Fatal(err)
	}
	a, err := NewAgent(context.Background(), cfg, opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(a.Close)
	return a
}

// verifierOf is the verifier of cfg's auth, closed when tb ends.
func verifierOf(tb testing.TB, cfg AgentConfig) *auth.Verifier {
	tb.Helper()
	v, err := auth.New(context.Background(), *cfg.Auth, cfg.PublicURL, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(v.Close)
	return v
}

// soleGateway is the gateway of a alone, closed when tb ends.
func soleGateway(tb testing.TB, a *Agent) *Gateway {
	tb.Helper()
	gw, err := NewGateway([]*Agent{a})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(gw.Close)
	return gw
}

// idleAgent is an agent at path whose backend nothing listens for, for
// tests of what is answered before any backend is called.
func idleAgent(t *testing.T, name, path string) *Agent {
	t.Helper()
	cfg := AgentConfig{Name: name, Path: path, PublicURL: "http://gateway.test" + path, Backend: BackendConfig{URL: "http://127.0.0.1:1/", Dialect: dialect.Version10}}
	return newValidAgent(t, cfg, Options{})
}
