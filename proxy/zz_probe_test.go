package proxy

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/a2agate/gateway/dialect"
)

func gz(s string) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return b.Bytes()
}

func TestZZProbeCompression(t *testing.T) {
	bomb := func(id string) []byte {
		var b bytes.Buffer
		w, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
		w.Write([]byte(`{"jsonrpc":"2.0","id":` + id + `,"result":{"kind":"task","id":"t1","contextId":"c1","status":{"state":"working"},"metadata":{"x":"`))
		chunk := bytes.Repeat([]byte("a"), 1<<20)
		for i := 0; i < 200; i++ {
			w.Write(chunk)
		}
		w.Write([]byte(`"}}}`))
		w.Close()
		return b.Bytes()
	}
	for _, tc := range []struct {
		name string
		h    func(w http.ResponseWriter, r *http.Request, id string)
	}{
		{"unary gzip ok", func(w http.ResponseWriter, r *http.Request, id string) {
			t.Logf("accept-encoding %q", r.Header.Get("Accept-Encoding"))
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(gz(`{"jsonrpc":"2.0","id":` + id + `,"result":{"kind":"task","id":"t1","contextId":"c1","status":{"state":"working"}}}`))
		}},
		{"unary gzip bomb", func(w http.ResponseWriter, r *http.Request, id string) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(bomb(id))
		}},
		{"unary br", func(w http.ResponseWriter, r *http.Request, id string) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Encoding", "br")
			w.Write([]byte{0x1b, 0x2, 0x3})
		}},
		{"unary corrupt gzip", func(w http.ResponseWriter, r *http.Request, id string) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Encoding", "gzip")
			w.Write([]byte("not gzip at all"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGateway(t, scripted(tc.h), dialect.Version03, func(a *AgentConfig) { a.Tasks.AllowUnknown = true })
			var m runtime.MemStats
			r := g.call("1", "tasks/get", `{"id":"t1"}`)
			runtime.ReadMemStats(&m)
			t.Logf("%s: %.300s (total alloc %d MB)", tc.name, r.Raw, m.TotalAlloc>>20)
		})
	}
	for _, tc := range []struct {
		name string
		h    func(w http.ResponseWriter, r *http.Request, id string)
	}{
		{"stream gzip sse", func(w http.ResponseWriter, r *http.Request, id string) {
			t.Logf("stream accept-encoding %q", r.Header.Get("Accept-Encoding"))
			w.Header().Set("Content-Type", "text/event-stream")
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(gz(working(id) + `data: {"jsonrpc":"2.0","id":` + id + `,"result":{"kind":"status-update","taskId":"t1","contextId":"c1","status":{"state":"completed"},"final":true}}` + "\n\n"))
		}},
		{"stream gzip json", func(w http.ResponseWriter, r *http.Request, id string) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(gz(`{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32001,"message":"nope"}}`))
		}},
		{"stream 500 sse", func(w http.ResponseWriter, r *http.Request, id string) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(500)
			w.Write([]byte(working(id)))
		}},
		{"stream bom+spaces", func(w http.ResponseWriter, r *http.Request, id string) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write([]byte("\xEF\xBB\xBF   \n" + working(id) + "retry: 99999999999999999999999\nid: a\x00b\ndata: " + `{"jsonrpc":"2.0","id":` + id + `,"result":{"kind":"status-update","taskId":"t1","contextId":"c1","status":{"state":"completed"},"final":true}}` + "\n\n"))
		}},
		{"stream event:error", func(w http.ResponseWriter, r *http.Request, id string) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write([]byte(working(id) + "event: error\ndata: {\"message\":\"boom\"}\n\n"))
		}},
	} {
		for _, c := range callers {
			t.Run(tc.name+"/"+c.d.String(), func(t *testing.T) {
				g := newGateway(t, scripted(tc.h), dialect.Version03)
				res, body := g.request(t, http.MethodPost, "/", `{"jsonrpc":"2.0","id":9,"method":"`+c.method(dialect.SendStreamingMessage)+`","params":`+c.send("m", c.text("hi"), "")+`}`, "Content-Type", "application/json", "Accept", "text/event-stream", "A2A-Version", map[bool]string{true: "1.0"}[c.d == dialect.V10])
				t.Logf("%s %s: HTTP %d %s\n%s", tc.name, c.d, res.StatusCode, res.Header.Get("Content-Type"), strings.TrimSpace(string(body)))
			})
		}
	}
}
