package legacyagent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a2agate/gateway/internal/agentcore"
)

// The tests read the wire as generic JSON, never through the agent's own
// structs, so that a misspelled tag cannot pass unnoticed.

// testTimeout bounds every request, so that a hung stream fails the test
// instead of stalling it.
const testTimeout = 10 * time.Second

// question is the status message of an input-required task.
const question = agentcore.Question

// JSON-RPC and A2A 0.2.5 error codes (specification §8).
const (
	codeParseError        = agentcore.CodeParseError
	codeInvalidRequest    = agentcore.CodeInvalidRequest
	codeMethodNotFound    = agentcore.CodeMethodNotFound
	codeInvalidParams     = agentcore.CodeInvalidParams
	codeTaskNotFound      = agentcore.CodeTaskNotFound
	codeTaskNotCancelable = agentcore.CodeTaskNotCancelable
)

type obj = map[string]any

func startAgent(t *testing.T, opts Options) (*Agent, *httptest.Server) {
	t.Helper()
	a := New(opts)
	srv := httptest.NewServer(a)
	t.Cleanup(srv.Close)
	t.Cleanup(a.Close) // runs first: ends open streams so srv.Close can return
	return a, srv
}

func post(t *testing.T, srv *httptest.Server, body string) *http.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func rpcRequest(method string, params any) string {
	b, err := json.Marshal(obj{"jsonrpc": "2.0", "id": "req-1", "method": method, "params": params})
	if err != nil {
		panic(err)
	}
	return string(b)
}

// rpcRaw posts body and decodes the whole JSON-RPC response.
func rpcRaw(t *testing.T, srv *httptest.Server, body string) obj {
	t.Helper()
	resp := post(t, srv, body)
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type = %q, want application/json", ct)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("HTTP status = %d, want 200", resp.StatusCode)
	}
	var out obj
	dec := json.NewDecoder(resp.Body)
	dec.UseNumber() // numbers are compared exactly, never rounded through float64
	if err := dec.Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// call invokes method and returns its result, failing on a JSON-RPC error.
func call(t *testing.T, srv *httptest.Server, method string, params any) any {
	t.Helper()
	out := rpcRaw(t, srv, rpcRequest(method, params))
	if e, ok := out["error"]; ok {
		t.Fatalf("%s: unexpected error %v", method, e)
	}
	if out["jsonrpc"] != "2.0" || out["id"] != "req-1" {
		t.Fatalf("%s: bad envelope %v", method, out)
	}
	res, ok := out["result"]
	if !ok {
		t.Fatalf("%s: no result in %v", method, out)
	}
	return res
}

// callErr invokes method and returns its JSON-RPC error object.
func callErr(t *testing.T, srv *httptest.Server, method string, params any) obj {
	t.Helper()
	out := rpcRaw(t, srv, rpcRequest(method, params))
	e, ok := out["error"].(obj)
	if !ok {
		t.Fatalf("%s: want an error, got %v", method, out)
	}
	if _, has := out["result"]; has {
		t.Fatalf("%s: error response also has a result: %v", method, out)
	}
	return e
}

func wantCode(t *testing.T, e obj, code int) {
	t.Helper()
	if got := e["code"]; got != json.Number(strconv.Itoa(code)) {
		t.Fatalf("error code = %v, want %d (error %v)", got, code, e)
	}
	if m, _ := e["message"].(string); m == "" {
		t.Fatalf("error without a message: %v", e)
	}
}

// sse reads a text/event-stream response one event at a time.
type sse struct {
	t  *testing.T
	r  *bufio.Reader
	id any
}

func openStream(t *testing.T, srv *httptest.Server, method string, params any) *sse {
	t.Helper()
	resp := post(t, srv, rpcRequest(method, params))
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("Content-Type = %q, want text/event-stream; body %s", ct, body)
	}
	if cc := resp.Header.Get("Cache-Control"); cc != "no-cache" {
		t.Errorf("Cache-Control = %q, want no-cache", cc)
	}
	return &sse{t: t, r: bufio.NewReader(resp.Body), id: "req-1"}
}

// next returns the result of the next event, or ok=false at the end of the
// stream.
func (s *sse) next() (result obj, ok bool) {
	s.t.Helper()
	var data []string
	for {
		line, err := s.r.ReadString('\n')
		if err == io.EOF && line == "" && len(data) == 0 {
			return nil, false
		}
		if err != nil {
			s.t.Fatalf("reading stream: %v (partial line %q)", err, line)
		}
		line = strings.TrimSuffix(line, "\n")
		if line == "" {
			break
		}
		v, found := strings.CutPrefix(line, "data: ")
		if !found {
			s.t.Fatalf("unexpected stream line %q", line)
		}
		data = append(data, v)
	}
	var env obj
	dec := json.NewDecoder(strings.NewReader(strings.Join(data, "\n")))
	dec.UseNumber()
	if err := dec.Decode(&env); err != nil {
		s.t.Fatalf("event is not JSON: %v", err)
	}
	if env["jsonrpc"] != "2.0" || env["id"] != s.id {
		s.t.Fatalf("bad event envelope %v", env)
	}
	res, isObj := env["result"].(obj)
	if !isObj {
		s.t.Fatalf("event without a result object: %v", env)
	}
	return res, true
}

func (s *sse) mustNext() obj {
	s.t.Helper()
	ev, ok := s.next()
	if !ok {
		s.t.Fatal("stream ended early")
	}
	return ev
}

func (s *sse) wantEnd() {
	s.t.Helper()
	if ev, ok := s.next(); ok {
		s.t.Fatalf("stream goes on with %v, want its end", ev)
	}
}

// userMessage is a 0.2.5 user message whose first part is text.
func userMessage(text string, more ...obj) obj {
	parts := []any{obj{"kind": "text", "text": text}}
	for _, p := range more {
		parts = append(parts, p)
	}
	return obj{"kind": "message", "messageId": "m-" + text, "role": "user", "parts": parts}
}

func send(text string) obj { return obj{"message": userMessage(text)} }

// path walks v along keys and indexes, failing when one is missing.
func path(t *testing.T, v any, steps ...any) any {
	t.Helper()
	for _, s := range steps {
		switch k := s.(type) {
		case string:
			m, ok := v.(obj)
			if !ok {
				t.Fatalf("%v: not an object at %q", v, k)
			}
			if v, ok = m[k]; !ok {
				t.Fatalf("key %q missing in %v", k, m)
			}
		case int:
			a, ok := v.([]any)
			if !ok || k >= len(a) {
				t.Fatalf("%v: no index %d", v, k)
			}
			v = a[k]
		}
	}
	return v
}

func str(t *testing.T, v any, steps ...any) string {
	t.Helper()
	s, ok := path(t, v, steps...).(string)
	if !ok {
		t.Fatalf("%v at %v is not a string", path(t, v, steps...), steps)
	}
	return s
}

// jsonEqual reports whether a and b encode the same JSON value.
func jsonEqual(t *testing.T, a, b any) bool {
	t.Helper()
	norm := func(v any) any {
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var out any
		if err := dec.Decode(&out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	return reflect.DeepEqual(norm(a), norm(b))
}

func wantJSON(t *testing.T, what string, got, want any) {
	t.Helper()
	if !jsonEqual(t, got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Fatalf("%s mismatch:\n got  %s\n want %s", what, g, w)
	}
}

func keys(m obj) string { return fmt.Sprint(slices.Sorted(maps.Keys(m))) }
