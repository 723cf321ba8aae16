package rest

import (
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/a2agate/gateway/internal/jsontest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

type requestCase struct {
	Name        string          `json:"name"`
	Method      string          `json:"method"`
	Path        string          `json:"path"`
	ContentType string          `json:"contentType"`
	Body        json.RawMessage `json:"body"`
	RawBody     string          `json:"rawBody"`
}

type errorCase struct {
	Name       string          `json:"name"`
	CoreStatus int             `json:"coreStatus"`
	Error      json.RawMessage `json:"error"`
}

// recorder is a stand-in for the core: it keeps the JSON-RPC request it is
// handed and answers with a canned reply.
type recorder struct {
	got    []byte
	header http.Header
	status int
	reply  string
	setup  func(http.Header)
}

func (c *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.got, _ = io.ReadAll(r.Body)
	c.header = r.Header.Clone()
	if c.setup != nil {
		c.setup(w.Header())
	}
	w.Header().Set("Content-Type", "application/json")
	status := c.status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, c.reply)
}

func loadJSON[T any](t *testing.T, name string) []T {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var v []T
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return v
}

// checkGolden compares got, a map from case name to JSON, with the golden file.
func checkGolden(t *testing.T, name string, got map[string]json.RawMessage) {
	t.Helper()
	out, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, '\n')
	path := "testdata/" + name
	if *update {
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	var w, g map[string]json.RawMessage
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	_ = json.Unmarshal(out, &g)
	for k := range w {
		if _, ok := g[k]; !ok {
			t.Errorf("%s: case %q is gone", name, k)
		}
	}
	for k, v := range g {
		if !jsontest.Equal(v, w[k]) {
			t.Errorf("%s: case %q:\n got  %s\n want %s", name, k, jsontest.Compact(v), jsontest.Compact(w[k]))
		}
	}
}

// TestRequestGolden: each REST request of testdata/requests.json becomes the
// canonical 1.0 JSON-RPC request of requests.golden.json, or the REST error
// recorded there, the core never called.
func TestRequestGolden(t *testing.T) {
	got := map[string]json.RawMessage{}
	for _, tc := range loadJSON[requestCase](t, "requests.json") {
		core := &recorder{reply: `{"jsonrpc":"2.0","id":1,"result":{}}`}
		h := NewHandler(core, Options{Prefix: "/agent"})
		body := tc.RawBody
		if tc.Body != nil {
			body = string(tc.Body)
		}
		req := httptest.NewRequest(tc.Method, "/agent"+tc.Path, strings.NewReader(body))
		ct := tc.ContentType
		if ct == "" && body != "" {
			ct = "application/json"
		}
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		req.Header.Set("Authorization", "Bearer tok")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		var out any
		if core.got != nil {
			if v := core.header.Get("A2A-Version"); v != "1.0" {
				t.Errorf("%s: A2A-Version %q", tc.Name, v)
			}
			if v := core.header.Get("Authorization"); v != "Bearer tok" {
				t.Errorf("%s: Authorization %q not passed on", tc.Name, v)
			}
			if v := core.header.Get("Content-Type"); v != "application/json" {
				t.Errorf("%s: Content-Type %q", tc.Name, v)
			}
			out = map[string]any{"rpc": json.RawMessage(core.got)}
		} else {
			if ct := w.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("%s: error Content-Type %q", tc.Name, ct)
			}
			e := map[string]any{"status": w.Code, "body": json.RawMessage(w.Body.Bytes())}
			if a := w.Header().Get("Allow"); a != "" {
				e["allow"] = a
			}
			out = e
		}
		b, _ := json.Marshal(out)
		got[tc.Name] = b
	}
	checkGolden(t, "requests.golden.json", got)
}

// TestErrorGolden: each JSON-RPC error the core can answer becomes the
// google.rpc.Status and HTTP status of errors.golden.json on the 1.0 routes,
// and the 0.3 body ({code,message,data}) and HTTP status of
// v03_errors.golden.json on the 0.3 ones; headers the core set (the
// challenge) are kept.
func TestErrorGolden(t *testing.T) {
	for _, g := range []struct{ path, golden string }{
		{"/tasks/t-1", "errors.golden.json"},
		{"/v1/tasks/t-1", "v03_errors.golden.json"},
	} {
		got := map[string]json.RawMessage{}
		for _, tc := range loadJSON[errorCase](t, "errors.json") {
			core := &recorder{status: tc.CoreStatus, reply: `{"jsonrpc":"2.0","id":1,"error":` + string(tc.Error) + `}`}
			if tc.CoreStatus == http.StatusUnauthorized {
				core.setup = func(h http.Header) { h.Set("WWW-Authenticate", `Bearer realm="http://gateway.test/"`) }
			}
			h := NewHandler(core, Options{})
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest("GET", g.path, nil))
			if ct := w.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("%s %s: Content-Type %q", g.path, tc.Name, ct)
			}
			if tc.CoreStatus == http.StatusUnauthorized && w.Header().Get("WWW-Authenticate") == "" {
				t.Errorf("%s %s: the challenge was dropped", g.path, tc.Name)
			}
			b, _ := json.Marshal(map[string]any{"status": w.Code, "body": json.RawMessage(w.Body.Bytes())})
			got[tc.Name] = b
		}
		checkGolden(t, g.golden, got)
	}
}

type v03ResultCase struct {
	Name   string          `json:"name"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
}

// TestV03ResultGolden: each canonical 1.0 result of v03_results.json
// reaches a 0.3 REST caller as the 0.3 proto's ProtoJSON of
// v03_results.golden.json, unary and as a stream event alike.
func TestV03ResultGolden(t *testing.T) {
	got := map[string]json.RawMessage{}
	for _, tc := range loadJSON[v03ResultCase](t, "v03_results.json") {
		in, err := decodeObject(tc.Result)
		if err != nil {
			t.Fatal(err)
		}
		got[tc.Name] = encode(v03Result(tc.Method, in))
	}
	checkGolden(t, "v03_results.golden.json", got)
}
