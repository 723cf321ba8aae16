package proxy

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/a2agate/gateway/dialect"
)

// TestHeadersTowardBackend: the version header only toward 1.0 backends,
// the extensions header renamed for the backend's dialect, the caller's
// Authorization kept back unless configured, the backend's own credentials
// added, hop-by-hop headers dropped.
func TestHeadersTowardBackend(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(secret, []byte("backend-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, b := range []dialect.Version{dialect.Version03, dialect.Version10} {
		for _, forward := range []bool{false, true} {
			got := make(chan http.Header, 1)
			g := newGateway(t, scripted(func(w http.ResponseWriter, r *http.Request, id string) {
				got <- r.Header.Clone()
				w.Write([]byte(`{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32001,"message":"Task not found"}}`))
			}), b, func(a *AgentConfig) {
				a.Tasks.AllowUnknown = true
				a.Backend.ForwardAuthorization = forward
				a.Backend.Headers = []HeaderConfig{{Name: "X-Api-Key", ValueFile: secret}}
			})
			g.post(rpc("GetTask", `{"id":"t"}`), "A2A-Version", "1.0", "A2A-Extensions", "https://ext.test/a", "Authorization", "Bearer caller", "Connection", "X-Hop", "X-Hop", "1", "Traceparent", "00-abc-def-01")
			h := <-got
			wantVersion := map[dialect.Version]string{dialect.Version03: "", dialect.Version10: "1.0"}[b]
			if v := h.Get("A2A-Version"); v != wantVersion {
				t.Errorf("%s backend: A2A-Version %q, want %q", b, v, wantVersion)
			}
			extHeader := dialect.ExtensionsHeader(b.ID())
			other := dialect.HeaderExtensionsV03
			if b.ID() == dialect.V03 {
				other = dialect.HeaderExtensionsV10
			}
			if h.Get(extHeader) != "https://ext.test/a" || h.Get(other) != "" {
				t.Errorf("%s backend: extensions header %q=%q, %q=%q", b, extHeader, h.Get(extHeader), other, h.Get(other))
			}
			if (h.Get("Authorization") != "") != forward {
				t.Errorf("%s backend, forward_authorization=%v: Authorization %q", b, forward, h.Get("Authorization"))
			}
			if h.Get("X-Api-Key") != "backend-secret" {
				t.Errorf("backend credential header %q", h.Get("X-Api-Key"))
			}
			if h.Get("X-Hop") != "" {
				t.Errorf("a header named in Connection must not be forwarded")
			}
			if h.Get("Traceparent") != "00-abc-def-01" || h.Get("X-Forwarded-For") == "" {
				t.Errorf("end-to-end headers: traceparent %q, X-Forwarded-For %q", h.Get("Traceparent"), h.Get("X-Forwarded-For"))
			}
		}
	}
}

func TestEqualFoldASCII(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"Connection", "connection", true},
		{"KEEP-ALIVE", "keep-alive", true},
		{"Keep-Alive", "Keep-Alive", true},
		{"", "", true},
		{"Te", "Tea", false},
		{"Upgrade", "Upgrades", false},
		{"A-b", "a_B", false},
		{"\u212Aeep-Alive", "Keep-Alive", false}, // the Kelvin sign is not a letter k of a field name
		{"[", "{", false},                        // 0x5b and 0x7b differ by the case bit but are not letters
	} {
		if got := equalFoldASCII(tc.a, tc.b); got != tc.want {
			t.Errorf("equalFoldASCII(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestAnswerContentLength: a unary answer, a result or an error, goes out
// with its own length declared, never chunked, over plain HTTP.
func TestAnswerContentLength(t *testing.T) {
	g := newGateway(t, backends[1].handler(t, nil), backends[1].version)
	for _, c := range callers {
		for name, body := range map[string]string{
			"result": rpc(c.method(dialect.SendMessage), c.send("m-"+c.d.String(), c.text("hi"), "")),
			"error":  rpc(c.method(dialect.GetTask), `{"id":"no-such-task"}`),
		} {
			res, out, err := g.postCtx(t.Context(), body, g.hdr(c.d)...)
			if err != nil {
				t.Fatal(err)
			}
			if res.ContentLength != int64(len(out)) || len(res.TransferEncoding) != 0 {
				t.Errorf("%s, %s: Content-Length %d, Transfer-Encoding %v, for %d bytes: %s", c.d, name, res.ContentLength, res.TransferEncoding, len(out), out)
			}
		}
	}
}
