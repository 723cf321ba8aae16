// Package agenttest is the wire-level test client of the test agents'
// suites: it posts JSON-RPC requests and reads the answers and SSE streams
// as generic JSON, never through an agent's own structs, so that a
// misspelled tag cannot pass unnoticed. Only tests import it.
package agenttest

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
)

// Timeout bounds every request, so that a hung stream fails the test
// instead of stalling it.
const Timeout = 10 * time.Second

// Obj is a decoded JSON object.
type Obj = map[string]any

// Agent is a test agent.
type Agent interface {
	http.Handler
	Close()
}

// Start serves a on a test server until the test ends.
func Start(t *testing.T, a Agent) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(a)
	t.Cleanup(srv.Close)
	t.Cleanup(a.Close) // runs first: ends open streams so srv.Close can return
	return srv
}

// Post sends body to srv's JSON-RPC endpoint with A2A-Version: version, or
// no such header when version is "".
func Post(t *testing.T, srv *httptest.Server, body, version string) *http.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), Timeout)
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if version != "" {
		req.Header.Set("A2A-Version", version)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// RPCRequest is a JSON-RPC request of id "req-1".
func RPCRequest(method string, params any) string {
	b, err := json.Marshal(Obj{"jsonrpc": "2.0", "id": "req-1", "method": method, "params": params})
	if err != nil {
		panic(err)
	}
	return string(b)
}

// DecodeResponse decodes a whole JSON-RPC response, which must be JSON
// with HTTP status 200.
func DecodeResponse(t *testing.T, resp *http.Response) Obj {
	t.Helper()
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type = %q, want application/json", ct)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("HTTP status = %d, want 200", resp.StatusCode)
	}
	var out Obj
	dec := json.NewDecoder(resp.Body)
	dec.UseNumber() // numbers are compared exactly, never rounded through float64
	if err := dec.Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// Result returns the result of the response out to method, failing on a
// JSON-RPC error.
func Result(t *testing.T, out Obj, method string) any {
	t.Helper()
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

// ErrorOf returns the JSON-RPC error object of the response out to method.
func ErrorOf(t *testing.T, out Obj, method string) Obj {
	t.Helper()
	e, ok := out["error"].(Obj)
	if !ok {
		t.Fatalf("%s: want an error, got %v", method, out)
	}
	if _, has := out["result"]; has {
		t.Fatalf("%s: error response also has a result: %v", method, out)
	}
	return e
}

// WantCode checks the error's code and that it has a message.
func WantCode(t *testing.T, e Obj, code int) {
	t.Helper()
	if got := e["code"]; got != json.Number(strconv.Itoa(code)) {
		t.Fatalf("error code = %v, want %d (error %v)", got, code, e)
	}
	if m, _ := e["message"].(string); m == "" {
		t.Fatalf("error without a message: %v", e)
	}
}

// SSE reads a text/event-stream response one event at a time.
type SSE struct {
	t  *testing.T
	r  *bufio.Reader
	id any
	// oneKey requires every result to be a one-key wrapper, as 1.0's
	// StreamResponse is.
	oneKey bool
}

// OpenStream checks that resp is an event stream and reads it. With
// oneKey, every event's result must be an object of one key.
func OpenStream(t *testing.T, resp *http.Response, oneKey bool) *SSE {
	t.Helper()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("Content-Type = %q, want text/event-stream; body %s", ct, body)
	}
	if cc := resp.Header.Get("Cache-Control"); cc != "no-cache" {
		t.Errorf("Cache-Control = %q, want no-cache", cc)
	}
	return &SSE{t: t, r: bufio.NewReader(resp.Body), id: "req-1", oneKey: oneKey}
}

// Next returns the result of the next event, or ok=false at the end of the
// stream.
func (s *SSE) Next() (result Obj, ok bool) {
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
	var env Obj
	dec := json.NewDecoder(strings.NewReader(strings.Join(data, "\n")))
	dec.UseNumber()
	if err := dec.Decode(&env); err != nil {
		s.t.Fatalf("event is not JSON: %v", err)
	}
	if env["jsonrpc"] != "2.0" || env["id"] != s.id {
		s.t.Fatalf("bad event envelope %v", env)
	}
	res, isObj := env["result"].(Obj)
	if !isObj {
		s.t.Fatalf("event without a result object: %v", env)
	}
	if s.oneKey && len(res) != 1 {
		s.t.Fatalf("event result is not a one-key StreamResponse: %v", env)
	}
	return res, true
}

// MustNext returns the next event's result, failing at the end.
func (s *SSE) MustNext() Obj {
	s.t.Helper()
	ev, ok := s.Next()
	if !ok {
		s.t.Fatal("stream ended early")
	}
	return ev
}

// NextOf returns the next event, which must be wrapped in key, unwrapped.
func (s *SSE) NextOf(key string) Obj {
	s.t.Helper()
	ev := s.MustNext()
	inner, ok := ev[key].(Obj)
	if !ok {
		s.t.Fatalf("event = %v, want a %q event", ev, key)
	}
	return inner
}

// WantEnd fails unless the stream ends.
func (s *SSE) WantEnd() {
	s.t.Helper()
	if ev, ok := s.Next(); ok {
		s.t.Fatalf("stream goes on with %v, want its end", ev)
	}
}

// Path walks v along keys and indexes, failing when one is missing.
func Path(t *testing.T, v any, steps ...any) any {
	t.Helper()
	for _, s := range steps {
		switch k := s.(type) {
		case string:
			m, ok := v.(Obj)
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

// Str is the string at Path(v, steps).
func Str(t *testing.T, v any, steps ...any) string {
	t.Helper()
	s, ok := Path(t, v, steps...).(string)
	if !ok {
		t.Fatalf("%v at %v is not a string", Path(t, v, steps...), steps)
	}
	return s
}

// FirstTexts lists the text of each message's first part, the messages
// being a decoded JSON array (a task's history).
func FirstTexts(t *testing.T, messages any) []any {
	t.Helper()
	var texts []any
	for _, m := range messages.([]any) {
		texts = append(texts, Str(t, m, "parts", 0, "text"))
	}
	return texts
}

// JSONEqual reports whether a and b encode the same JSON value.
func JSONEqual(t *testing.T, a, b any) bool {
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

// WantJSON fails unless got and want encode the same JSON value.
func WantJSON(t *testing.T, what string, got, want any) {
	t.Helper()
	if !JSONEqual(t, got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Fatalf("%s mismatch:\n got  %s\n want %s", what, g, w)
	}
}

// Keys lists m's keys, sorted.
func Keys(m Obj) string { return fmt.Sprint(slices.Sorted(maps.Keys(m))) }

// Serve runs one JSON-RPC call straight through h.ServeHTTP, with
// A2A-Version: version unless it is "", so that it can run inside a
// synctest bubble, and returns the response body.
func Serve(t *testing.T, h http.Handler, version, method string, params any) string {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(RPCRequest(method, params)))
	if version != "" {
		req.Header.Set("A2A-Version", version)
	}
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("%s: status %d", method, rec.Code)
	}
	return rec.Body.String()
}

// ServeResult is the result of Serve, failing on a JSON-RPC error.
func ServeResult(t *testing.T, h http.Handler, version, method string, params any) Obj {
	t.Helper()
	var out struct {
		Result Obj
		Error  Obj
	}
	if err := json.Unmarshal([]byte(Serve(t, h, version, method, params)), &out); err != nil {
		t.Fatal(err)
	}
	if out.Error != nil {
		t.Fatalf("%s: %v", method, out.Error)
	}
	return out.Result
}

// GetJSON fetches url, which must answer 200 with a JSON object.
func GetJSON(t *testing.T, url string) Obj {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: status %d", url, resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("GET %s: Content-Type %q", url, ct)
	}
	var v Obj
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// SkillIDs lists the ids of an agent card's skills.
func SkillIDs(t *testing.T, card Obj) []any {
	t.Helper()
	var ids []any
	for _, s := range Path(t, card, "skills").([]any) {
		ids = append(ids, Path(t, s, "id"))
	}
	return ids
}

// Wire is how a dialect's clients call: the A2A-Version header they send
// ("" for none), and whether every stream result is a one-key wrapper (1.0's
// StreamResponse).
type Wire struct {
	Version string
	OneKey  bool
}

// Post sends body to srv's JSON-RPC endpoint.
func (w Wire) Post(t *testing.T, srv *httptest.Server, body string) *http.Response {
	t.Helper()
	return Post(t, srv, body, w.Version)
}

// RPCRaw posts body and decodes the whole JSON-RPC response.
func (w Wire) RPCRaw(t *testing.T, srv *httptest.Server, body string) Obj {
	t.Helper()
	return DecodeResponse(t, w.Post(t, srv, body))
}

// Call invokes method and returns its result, failing on a JSON-RPC error.
func (w Wire) Call(t *testing.T, srv *httptest.Server, method string, params any) any {
	t.Helper()
	return Result(t, w.RPCRaw(t, srv, RPCRequest(method, params)), method)
}

// CallErr invokes method and returns its JSON-RPC error object.
func (w Wire) CallErr(t *testing.T, srv *httptest.Server, method string, params any) Obj {
	t.Helper()
	return ErrorOf(t, w.RPCRaw(t, srv, RPCRequest(method, params)), method)
}

// OpenStream calls a streaming method and reads its event stream.
func (w Wire) OpenStream(t *testing.T, srv *httptest.Server, method string, params any) *SSE {
	t.Helper()
	return OpenStream(t, w.Post(t, srv, RPCRequest(method, params)), w.OneKey)
}

// Serve runs one call straight through h.ServeHTTP; see Serve.
func (w Wire) Serve(t *testing.T, h http.Handler, method string, params any) string {
	t.Helper()
	return Serve(t, h, w.Version, method, params)
}

// ServeResult is the result of Serve, failing on a JSON-RPC error.
func (w Wire) ServeResult(t *testing.T, h http.Handler, method string, params any) Obj {
	t.Helper()
	return ServeResult(t, h, w.Version, method, params)
}

// WantRefused sends params to every one of methods and checks each
// JSON-RPC error with checkError (the dialect's check of code and data) and
// that its message mentions detail.
func (w Wire) WantRefused(t *testing.T, srv *httptest.Server, methods []string, checkError func(*testing.T, Obj), params Obj, detail string) {
	t.Helper()
	for _, method := range methods {
		e := w.CallErr(t, srv, method, params)
		checkError(t, e)
		if msg := e["message"].(string); !strings.Contains(msg, detail) {
			t.Fatalf("%s: message %q does not mention %q", method, msg, detail)
		}
	}
}
