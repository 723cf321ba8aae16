//go:build unix

package proxy

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/bench/canned"
)

// BenchmarkRESTvsJSONRPC serves the same 1.0 operation as JSON-RPC and as
// HTTP+JSON through the same gateway and canned backend, side by side: the
// REST front end's own cost is the difference (issue 25 allows 1.2x).
//
//	go test -run '^$' -bench RESTvsJSONRPC -benchmem ./proxy
func BenchmarkRESTvsJSONRPC(b *testing.B) {
	for _, op := range []canned.Op{canned.Send, canned.Get} {
		for _, backend := range []canned.Dialect{canned.V03, canned.V10} {
			h := newBenchHarness(b, benchCase{op: op, caller: canned.V10, backend: backend})
			h.check(b)
			name := string(op) + "/1.0-to-" + string(backend)
			b.Run(name+"/jsonrpc", func(b *testing.B) { benchCPU(b, h.serve, 1, "cpu-ns/op") })
			req, body := restBenchRequest(b, h, op)
			b.Run(name+"/rest", func(b *testing.B) {
				rd := bytes.NewReader(nil)
				rc := &benchBody{rd}
				serve := func() {
					h.w.reset()
					rd.Reset(body)
					req.Body, req.ContentLength = rc, int64(len(body))
					h.gw.ServeHTTP(h.w, req)
				}
				serve()
				if h.w.status != http.StatusOK || !gjson.ValidBytes(h.w.body) || gjson.GetBytes(h.w.body, "jsonrpc").Exists() {
					b.Fatalf("REST answer: HTTP %d %s", h.w.status, h.w.body)
				}
				benchCPU(b, serve, 1, "cpu-ns/op")
			})
		}
	}
}

// restBenchRequest is the REST request of the harness's JSON-RPC one.
func restBenchRequest(tb testing.TB, h *benchHarness, op canned.Op) (*http.Request, []byte) {
	tb.Helper()
	params := gjson.GetBytes(h.body, "params")
	method, url, body := http.MethodPost, "http://gateway.bench/message:send", []byte(params.Raw)
	if op == canned.Get {
		// The JSON-RPC call's own params, historyLength included.
		method, url, body = http.MethodGet, "http://gateway.bench/tasks/"+params.Get("id").Str+"?historyLength="+params.Get("historyLength").Raw, nil
	}
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		tb.Fatal(err)
	}
	req.Header = h.req.Header.Clone()
	req.RemoteAddr = h.req.RemoteAddr
	return req, body
}
