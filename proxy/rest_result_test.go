package proxy

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/bench/canned"
	"github.com/a2agate/gateway/dialect"
)

// bareWriter is a front end's ResponseWriter that takes the bare result
// (resultWriter), as binding/rest's answer does.
type bareWriter struct {
	benchWriter
	results [][]byte
}

func (w *bareWriter) WriteResult(result []byte) {
	w.results = append(w.results, bytes.Clone(result))
}

// TestResultWriterGetsBareResult: a successful unary call's result reaches
// a resultWriter as it is, the same bytes the JSON-RPC answer wraps, and
// nothing else is written; an error still comes as a JSON-RPC answer.
func TestResultWriterGetsBareResult(t *testing.T) {
	for _, op := range []canned.Op{canned.Get, canned.Send} {
		for _, backend := range []canned.Dialect{canned.V03, canned.V10} {
			bc := benchCase{op: op, caller: canned.V10, backend: backend}
			t.Run(bc.name(), func(t *testing.T) {
				h := newBenchHarness(t, bc)
				h.check(t)
				want := gjson.GetBytes(h.w.body, "result").Raw

				bw := &bareWriter{benchWriter: benchWriter{h: http.Header{}}}
				if h.msgID != nil {
					copy(h.msgID, "9") // a send of its own, not a retry of the check's
				}
				h.rd.Reset(h.body)
				h.req.Body, h.req.ContentLength = h.rc, int64(len(h.body))
				h.gw.ServeHTTP(bw, h.req)
				if len(bw.results) != 1 || bw.status != 0 || len(bw.body) != 0 {
					t.Fatalf("%d results, HTTP %d %s: want one result and nothing written", len(bw.results), bw.status, bw.body)
				}
				if op == canned.Get && string(bw.results[0]) != want {
					t.Errorf("result\n%s\nwant the JSON-RPC answer's\n%s", bw.results[0], want)
				}
				if !gjson.ValidBytes(bw.results[0]) || gjson.GetBytes(bw.results[0], "jsonrpc").Exists() {
					t.Errorf("not a bare result: %s", bw.results[0])
				}

				bad := &bareWriter{benchWriter: benchWriter{h: http.Header{}}}
				h.rd.Reset([]byte(`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{}}`))
				h.req.Body, h.req.ContentLength = h.rc, -1
				h.gw.ServeHTTP(bad, h.req)
				if len(bad.results) != 0 || !gjson.GetBytes(bad.body, "error.code").Exists() {
					t.Errorf("an error: %d results, HTTP %d %s", len(bad.results), bad.status, bad.body)
				}
			})
		}
	}
}

// TestRESTRoutesLeaveNestedAgents: the REST routes' own patterns, which the
// mux prefers to an agent's subtree, are left out for an agent with another
// one below its path on those routes, which they would otherwise take; an
// agent below it elsewhere keeps its own.
func TestRESTRoutesLeaveNestedAgents(t *testing.T) {
	newAgent := func(name, path string) *Agent {
		cfg := AgentConfig{Name: name, Path: path, PublicURL: "http://gateway.test" + path,
			Backend: BackendConfig{URL: "http://backend.test/", Dialect: dialect.Version10}}
		return newValidAgent(t, cfg, Options{Transport: canned.New(), Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	}
	for _, tc := range []struct {
		name   string
		agents []*Agent
		path   string
		route  string // the unknown route the answering agent names
	}{
		{"nested below the root", []*Agent{newAgent("root", "/"), newAgent("tasks", "/tasks")}, "/tasks/x", "/x"},
		{"nested below a path", []*Agent{newAgent("a", "/a"), newAgent("tasks", "/a/tasks")}, "/a/tasks/x", "/x"},
		{"alone", []*Agent{newAgent("root", "/")}, "/tasks/x/y", "/tasks/x/y"},
		{"beside one below elsewhere", []*Agent{newAgent("root", "/"), newAgent("b", "/b")}, "/b/tasks/x/y", "/tasks/x/y"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gw, err := NewGateway(tc.agents)
			if err != nil {
				t.Fatal(err)
			}
			defer gw.Close()
			w := httptest.NewRecorder()
			gw.ServeHTTP(w, httptest.NewRequest(http.MethodGet, tc.path, nil))
			if msg := gjson.Get(w.Body.String(), "error.message").Str; w.Code != http.StatusNotFound || msg != "no A2A HTTP+JSON route at "+tc.route {
				t.Errorf("HTTP %d %s: want the unknown route %s", w.Code, w.Body, tc.route)
			}
		})
	}
}
