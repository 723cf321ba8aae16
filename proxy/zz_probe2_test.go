package proxy

import (
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a2agate/gateway/dialect"
)

func TestZZProbeHTTP(t *testing.T) {
	okBody := func(id string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"result":{"kind":"task","id":"t1","contextId":"c1","status":{"state":"working"}}}`
	}
	resp := func(head, body string) string {
		return head + "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
	}
	cases := []struct {
		name string
		raw  func(id string) string
	}{
		{"103 then 200", func(id string) string {
			return "HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\nHTTP/1.1 100 Continue\r\n\r\n" + resp("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n", okBody(id))
		}},
		{"many 103", func(id string) string {
			return strings.Repeat("HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n", 1000) + resp("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n", okBody(id))
		}},
		{"204", func(id string) string { return "HTTP/1.1 204 No Content\r\n\r\n" }},
		{"304", func(id string) string { return "HTTP/1.1 304 Not Modified\r\nContent-Length: 50\r\n\r\n" }},
		{"200 CL no body", func(id string) string { return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n" }},
		{"chunked + trailer", func(id string) string {
			b := okBody(id)
			return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nTrailer: X-Result\r\n\r\n" + strconv.FormatInt(int64(len(b)), 16) + "\r\n" + b + "\r\n0\r\nX-Result: evil\r\n\r\n"
		}},
		{"TE and CL", func(id string) string {
			b := okBody(id)
			return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n" + strconv.FormatInt(int64(len(b)), 16) + "\r\n" + b + "\r\n0\r\n\r\n"
		}},
		{"TE gzip,chunked", func(id string) string {
			b := okBody(id)
			return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: gzip, chunked\r\n\r\n" + strconv.FormatInt(int64(len(b)), 16) + "\r\n" + b + "\r\n0\r\n\r\n"
		}},
		{"101", func(id string) string {
			return "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: x\r\n\r\n" + okBody(id)
		}},
		{"HTTP/1.0 no length", func(id string) string {
			return "HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n" + okBody(id)
		}},
		{"id string", func(id string) string {
			return resp("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n", okBody(`"`+id+`"`))
		}},
		{"id float", func(id string) string {
			return resp("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n", okBody(id+".0"))
		}},
		{"id exp", func(id string) string {
			return resp("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n", okBody(id+"e0"))
		}},
		{"id null result", func(id string) string {
			return resp("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n", okBody("null"))
		}},
		{"error null id", func(id string) string {
			return resp("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n", `{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"nope"}}`)
		}},
		{"batch", func(id string) string {
			return resp("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n", "["+okBody(id)+"]")
		}},
		{"no result no error", func(id string) string {
			return resp("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n", `{"jsonrpc":"2.0","id":`+id+`}`)
		}},
		{"unknown code", func(id string) string {
			return resp("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n", `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":-32099,"message":"weird"}}`)
		}},
		{"positive code", func(id string) string {
			return resp("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n", `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":404,"message":"weird"}}`)
		}},
		{"trailing garbage", func(id string) string {
			return resp("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n", okBody(id)+`{"jsonrpc":"2.0","id":`+id+`,"result":{"kind":"task","id":"t2"}}`)
		}},
	}
	for _, tc := range cases {
		for _, c := range callers {
			t.Run(tc.name+"/"+c.d.String(), func(t *testing.T) {
				g := newGateway(t, scripted(func(w http.ResponseWriter, r *http.Request, id string) {
					rawReply(w, func(conn net.Conn) {
						_, _ = io.WriteString(conn, tc.raw(id))
						conn.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
						_, _ = io.Copy(io.Discard, conn)
					})
				}), dialect.Version03, func(a *AgentConfig) {
					a.Tasks.AllowUnknown = true
					a.Backend.ResponseTimeout = time.Second
					a.Backend.ResponseHeaderTimeout = time.Second
				})
				start := time.Now()
				r := g.call("1", c.method(dialect.GetTask), `{"id":"t1"}`)
				t.Logf("%s %s (%v): %.400s", tc.name, c.d, time.Since(start).Round(time.Millisecond), r.Raw)
			})
		}
	}
}
