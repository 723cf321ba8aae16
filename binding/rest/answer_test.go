package rest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"testing"
)

// bareCore answers as proxy's core does a successful unary call to a
// ResponseWriter with WriteResult: the result without its envelope, from a
// buffer it reuses as soon as WriteResult returns.
type bareCore struct {
	result string
	header http.Header // the request's, as the core saw it
}

func (c *bareCore) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.header = r.Header.Clone()
	_, _ = io.Copy(io.Discard, r.Body)
	rw, ok := w.(interface{ WriteResult([]byte) })
	if !ok {
		panic("the REST answer takes no bare result")
	}
	buf := []byte(c.result)
	rw.WriteResult(buf)
	for i := range buf {
		buf[i] = 'x' // the core's buffer goes back to its pool
	}
}

func TestBareResult(t *testing.T) {
	for _, tc := range []struct{ name, path, result, want string }{
		{"task", "/tasks/t-1", `{"id":"t-1","status":{"state":"TASK_STATE_WORKING"}}`, `{"id":"t-1","status":{"state":"TASK_STATE_WORKING"}}`},
		{"empty", "/tasks/t-1/pushNotificationConfigs/c-1", " null ", `{}`},
		{"0.3 task", "/v1/tasks/t-1", `{"id":"t-1","status":{"state":"TASK_STATE_CANCELED"}}`, `{"id":"t-1","status":{"state":"TASK_STATE_CANCELLED"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			method := http.MethodGet
			if tc.name == "empty" {
				method = http.MethodDelete
			}
			h := NewHandler(&bareCore{result: tc.result}, Options{})
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest(method, tc.path, nil))
			if w.Code != http.StatusOK || w.Body.String() != tc.want {
				t.Fatalf("HTTP %d %s, want 200 %s", w.Code, w.Body, tc.want)
			}
			if ct, cl := w.Header().Get("Content-Type"), w.Header().Get("Content-Length"); ct != "application/json" || cl != strconv.Itoa(len(tc.want)) {
				t.Errorf("Content-Type %q, Content-Length %q", ct, cl)
			}
		})
	}
}

// TestCallerRequestUntouched: the core gets the JSON-RPC request's own
// header, URL and body; the caller's request stays as it came.
func TestCallerRequestUntouched(t *testing.T) {
	core := &bareCore{result: `{"id":"t-1"}`}
	h := NewHandler(core, Options{Prefix: "/agent"})
	r := httptest.NewRequest(http.MethodGet, "/agent/tasks/t-1?historyLength=2", nil)
	r.Header["Accept"] = []string{"application/a2a+json", "*/*"}
	r.Header.Set("Authorization", "Bearer tok")
	r.Header.Set("Content-Length", "0")
	header, url := r.Header.Clone(), *r.URL
	h.ServeHTTP(httptest.NewRecorder(), r)
	if !reflect.DeepEqual(r.Header, header) || *r.URL != url || r.Method != http.MethodGet {
		t.Errorf("the caller's request changed: %s %v %v", r.Method, r.URL, r.Header)
	}
	want := http.Header{
		"Accept":        {"application/json"},
		"Authorization": {"Bearer tok"},
		"Content-Type":  {"application/json"},
		"A2a-Version":   {"1.0"},
	}
	if !reflect.DeepEqual(core.header, want) {
		t.Errorf("the core's request header %v, want %v", core.header, want)
	}
}
