package proxy

import (
	"bufio"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// A second response follows each one, so that a test sees whether the body
// ended where net/http ends it and left the connection at the next head.
const nextResponse = "HTTP/1.1 204 No Content\r\n\r\n"

var responseSamples = map[string]string{
	"length":             "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 7\r\nDate: Sun, 29 Nov 2026 22:00:00 GMT\r\n\r\n{\"a\":1}",
	"chunked":            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n5\r\ndata:\r\n6\r\n x\n\n\n\r\n0\r\n\r\n",
	"chunked, trailer":   "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nX-Sum: 1\r\nX-Other: 2\r\n\r\n",
	"lower-case names":   "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\nx-custom-thing: a\r\nx-custom-thing: b\r\n\r\n{}",
	"no reason":          "HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n",
	"error status":       "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\nConnection: keep-alive, close\r\n\r\nbusy",
	"connection close":   "HTTP/1.1 200 OK\r\nConnection: Close\r\nContent-Length: 2\r\n\r\n{}",
	"until close":        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{\"whole\":true}",
	"padded values":      "HTTP/1.1 200 OK\r\nX-A:   spaced \t\r\nX-B:\r\nContent-Length: 1\r\n\r\nz",
	"interim first":      "HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nz",
	"HTTP/1.0":           "HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nz",
	"no content":         "HTTP/1.1 204 No Content\r\nX-A: 1\r\n\r\n",
	"two lengths":        "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nzz",
	"length and chunked": "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nz\r\n0\r\n\r\n",
	"folded line":        "HTTP/1.1 200 OK\r\nX-A: one\r\n two\r\nContent-Length: 1\r\n\r\nz",
	"bare LF":            "HTTP/1.1 200 OK\nContent-Length: 1\n\nz",
	"space before colon": "HTTP/1.1 200 OK\r\nContent-Length : 1\r\n\r\nz",
	"signed length":      "HTTP/1.1 200 OK\r\nContent-Length: +1\r\n\r\nz",
	"gzip encoding":      "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
	"short body":         "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc",
	"cut head":           "HTTP/1.1 200 OK\r\nContent-Len",
	"empty":              "",
}

// TestReadResponseAgreesWithNetHTTP holds the gateway's response reader to
// http.ReadResponse: the same head, the same body, the same error, and the
// connection left at the same place.
func TestReadResponseAgreesWithNetHTTP(t *testing.T) {
	for name, raw := range responseSamples {
		t.Run(name, func(t *testing.T) {
			compareResponseReaders(t, raw+nextResponse)
			compareResponseReaders(t, raw) // and when the connection ends there
		})
	}
}

// TestReadResponseFastPath makes sure the plain heads take the fast path,
// which the comparison alone would not tell.
func TestReadResponseFastPath(t *testing.T) {
	for _, name := range []string{"length", "chunked", "lower-case names", "until close", "connection close"} {
		if res, _ := parsePlainHead([]byte(responseSamples[name]), nil); res == nil {
			t.Errorf("%s: left to net/http", name)
		}
	}
	for _, name := range []string{"HTTP/1.0", "no content", "two lengths", "folded line", "bare LF", "interim first", "gzip encoding", "cut head"} {
		if res, _ := parsePlainHead([]byte(responseSamples[name]), nil); res != nil {
			t.Errorf("%s: read by the fast path", name)
		}
	}
}

type readOutcome struct {
	Status           string
	StatusCode       int
	Proto            string
	Header           http.Header
	ContentLength    int64
	TransferEncoding []string
	Close            bool
	Body             string
	BodyErr          string
	Rest             string
	Err              string
}

func outcomeOf(read func(*bufio.Reader, *http.Request) (*http.Response, error), raw string) readOutcome {
	br := bufio.NewReaderSize(strings.NewReader(raw), h1ReadBufferSize)
	req, _ := http.NewRequest(http.MethodPost, "http://backend/", nil)
	res, err := read(br, req)
	for err == nil && res.StatusCode >= 100 && res.StatusCode < 200 {
		res, err = read(br, req)
	}
	if err != nil {
		return readOutcome{Err: err.Error()}
	}
	body, berr := io.ReadAll(res.Body)
	o := readOutcome{Status: res.Status, StatusCode: res.StatusCode, Proto: res.Proto, Header: res.Header,
		ContentLength: res.ContentLength, TransferEncoding: res.TransferEncoding, Close: res.Close, Body: string(body)}
	if berr != nil {
		// A connection whose body failed is closed, never read again:
		// what is left on it does not matter.
		o.BodyErr = berr.Error()
		return o
	}
	rest, _ := io.ReadAll(br)
	o.Rest = string(rest)
	return o
}

func compareResponseReaders(t *testing.T, raw string) {
	t.Helper()
	ours, theirs := outcomeOf(readResponse, raw), outcomeOf(http.ReadResponse, raw)
	if !reflect.DeepEqual(ours, theirs) {
		t.Fatalf("reading %q\nthe gateway: %+v\nnet/http:    %+v", raw, ours, theirs)
	}
}

// FuzzReadResponse: whatever the backend sends, the gateway reads it as
// net/http would.
func FuzzReadResponse(f *testing.F) {
	for _, raw := range responseSamples {
		f.Add(raw + nextResponse)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if len(raw) > h1ReadBufferSize {
			t.Skip() // a head past the buffer is net/http's anyway
		}
		compareResponseReaders(t, raw)
	})
}
