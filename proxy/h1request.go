package proxy

import (
	"bufio"
	"bytes"
	"net/http"
	"strconv"
	"strings"
)

// memoryBody is a request body the gateway built in memory. The gateway's
// connection pool writes its bytes straight after the request head, and
// sends them again as they are when it retries on a new connection.
type memoryBody struct {
	bytes.Reader
	data []byte
}

func newMemoryBody(data []byte) *memoryBody {
	b := &memoryBody{data: data}
	b.Reset(data)
	return b
}

func (*memoryBody) Close() error { return nil }

// writeRequest writes req to bw as HTTP/1.1, as req.Write would. A request
// with its body in memory, plain headers and a plain host is written here
// without net/http's header sorting and copying (a few percent of the
// gateway's CPU under load); anything else goes through req.Write.
func writeRequest(bw *bufio.Writer, req *http.Request) error {
	body, ok := req.Body.(*memoryBody)
	if !ok || req.Close || req.ContentLength != int64(len(body.data)) || len(req.TransferEncoding) > 0 || req.Trailer != nil || req.Method == "" {
		return req.Write(bw)
	}
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	uri := req.URL.RequestURI()
	if !plainHost(host) || hasControlByte(uri) || !plainHeaderValues(req.Header) {
		return req.Write(bw)
	}
	bw.WriteString(req.Method)
	bw.WriteByte(' ')
	bw.WriteString(uri)
	bw.WriteString(" HTTP/1.1\r\nHost: ")
	bw.WriteString(host)
	// As net/http: the first User-Agent value, none when it is empty, Go's
	// own when the request names none.
	userAgent := "Go-http-client/1.1"
	if vv, ok := req.Header["User-Agent"]; ok {
		userAgent = ""
		if len(vv) > 0 {
			userAgent = vv[0]
		}
	}
	if userAgent != "" {
		bw.WriteString("\r\nUser-Agent: ")
		bw.WriteString(strings.Trim(userAgent, " \t"))
	}
	bw.WriteString("\r\nContent-Length: ")
	var n [20]byte
	bw.Write(strconv.AppendInt(n[:0], req.ContentLength, 10))
	bw.WriteString("\r\n")
	for k, vv := range req.Header {
		switch k {
		case "Host", "User-Agent", "Content-Length", "Transfer-Encoding", "Trailer":
			continue
		}
		for _, v := range vv {
			bw.WriteString(k)
			bw.WriteString(": ")
			bw.WriteString(strings.Trim(v, " \t"))
			bw.WriteString("\r\n")
		}
	}
	bw.WriteString("\r\n")
	_, err := bw.Write(body.data)
	return err
}

// plainHost tells whether host is a name or address and port that needs no
// IDNA conversion, zone removal or validation that req.Write would do.
func plainHost(host string) bool {
	if host == "" {
		return false
	}
	for i := 0; i < len(host); i++ {
		c := host[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '-' || c == ':' || c == '[' || c == ']' || c == '_') {
			return false
		}
	}
	return true
}

func hasControlByte(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] == 0x7f {
			return true
		}
	}
	return false
}

// plainHeaderValues tells whether no header value holds a line break,
// which req.Write turns into a space.
func plainHeaderValues(h http.Header) bool {
	for _, vv := range h {
		for _, v := range vv {
			if strings.ContainsAny(v, "\r\n") {
				return false
			}
		}
	}
	return true
}
