package proxy

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"testing"
)

// TestWriteRequestReadsAsReqWrite holds the gateway's own request writer to
// net/http's: a server reads the same request from either.
func TestWriteRequestReadsAsReqWrite(t *testing.T) {
	target, _ := url.Parse("http://127.0.0.1:8080/a2a/v1?x=1")
	cases := map[string]func(*http.Request){
		"plain": func(*http.Request) {},
		"several values and padding": func(r *http.Request) {
			r.Header["X-Multi"] = []string{"one", " two\t", ""}
			r.Header["Authorization"] = []string{"Bearer abc"}
		},
		"caller's user agent":      func(r *http.Request) { r.Header["User-Agent"] = []string{"sdk/1.0", "second"} },
		"empty user agent":         func(r *http.Request) { r.Header["User-Agent"] = []string{""} },
		"user agent key, no value": func(r *http.Request) { r.Header["User-Agent"] = nil },
		"line break in a value":    func(r *http.Request) { r.Header["X-Evil"] = []string{"a\r\nInjected: yes"} },
		"host to convert":          func(r *http.Request) { r.Host = "bücher.example:80" },
		"no host header value":     func(r *http.Request) { r.Host = "" },
		"header the writer sets": func(r *http.Request) {
			r.Header["Content-Length"] = []string{"999"}
			r.Header["Host"] = []string{"elsewhere"}
		},
	}
	for name, edit := range cases {
		t.Run(name, func(t *testing.T) {
			build := func() *http.Request {
				body := []byte(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{}}`)
				r := &http.Request{Method: http.MethodPost, URL: target, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
					Header: http.Header{"Content-Type": {"application/json"}, "A2a-Version": {"1.0"}},
					Body:   newMemoryBody(body), ContentLength: int64(len(body)), Host: target.Host}
				edit(r)
				return r
			}
			var ours, theirs bytes.Buffer
			bw := bufio.NewWriter(&ours)
			if err := writeRequest(bw, build()); err != nil {
				t.Fatal(err)
			}
			bw.Flush()
			want := build()
			want.Body = io.NopCloser(bytes.NewReader(want.Body.(*memoryBody).data)) // net/http's path
			if err := want.Write(&theirs); err != nil {
				t.Fatal(err)
			}
			a, b := readBack(t, ours.Bytes()), readBack(t, theirs.Bytes())
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("the gateway wrote\n%q\nnet/http writes\n%q", ours.Bytes(), theirs.Bytes())
			}
		})
	}
}

type readRequest struct {
	Method, URI, Host string
	Header            http.Header
	Body              string
}

func readBack(t *testing.T, raw []byte) readRequest {
	t.Helper()
	r, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(raw)))
	if err != nil {
		t.Fatalf("%v in\n%q", err, raw)
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return readRequest{r.Method, r.RequestURI, r.Host, r.Header, string(body)}
}

func TestWriteRequestLeavesOtherBodiesToNetHTTP(t *testing.T) {
	target, _ := url.Parse("http://127.0.0.1:8080/")
	r := &http.Request{Method: http.MethodPost, URL: target, Header: http.Header{}, Host: target.Host,
		Body: io.NopCloser(bytes.NewReader([]byte("abc"))), ContentLength: -1}
	var buf bytes.Buffer
	bw := bufio.NewWriter(&buf)
	if err := writeRequest(bw, r); err != nil {
		t.Fatal(err)
	}
	bw.Flush()
	if !bytes.Contains(buf.Bytes(), []byte("Transfer-Encoding: chunked")) {
		t.Fatalf("a body of unknown length is not sent chunked:\n%q", buf.Bytes())
	}
}
