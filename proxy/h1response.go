package proxy

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httputil"
	"net/textproto"
	"strconv"
	"strings"
)

// readResponse reads a response head from br as http.ReadResponse does.
// A head that arrived whole and is plain (HTTP/1.1, a final status, one
// framing: a length, chunked or until close; no folded lines) is read
// here, in one pass over the buffer (http.ReadResponse was a few percent
// of the gateway's CPU under load); anything else is left in the buffer
// for http.ReadResponse, which then reads it from its first byte.
func readResponse(br *bufio.Reader, req *http.Request) (*http.Response, error) {
	if br.Buffered() == 0 {
		if _, err := br.Peek(1); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF // as http.ReadResponse says it
			}
			return nil, err
		}
	}
	buf, _ := br.Peek(br.Buffered())
	if res, n := parsePlainHead(buf, req); res != nil {
		_, _ = br.Discard(n)
		res.Body = plainBody(res, br)
		return res, nil
	}
	return http.ReadResponse(br, req)
}

// maxPlainHeaders bounds the header lines the fast path takes; a longer
// head goes to http.ReadResponse, whose own limits apply.
const maxPlainHeaders = 64

// parsePlainHead parses the head at the start of buf and returns the
// response and the head's length, or nil when the head is not whole in
// buf or not plain.
func parsePlainHead(buf []byte, req *http.Request) (*http.Response, int) {
	if req != nil && req.Method == http.MethodHead {
		return nil, 0 // no body whatever the head says: net/http knows
	}
	end := bytes.Index(buf, []byte("\r\n\r\n"))
	if end < 0 {
		return nil, 0
	}
	head := buf[:end+2] // each line with its CRLF
	if !crlfLines(head) {
		return nil, 0
	}
	line, rest, _ := bytes.Cut(head, []byte("\r\n"))
	if len(line) < len("HTTP/1.1 200") || string(line[:9]) != "HTTP/1.1 " || (len(line) > 12 && line[12] != ' ') {
		return nil, 0
	}
	code, err := strconv.Atoi(string(line[9:12]))
	if err != nil || code < 200 || code == http.StatusNoContent || code == http.StatusNotModified {
		return nil, 0
	}
	fields := bytes.Count(rest, []byte("\r\n"))
	if fields > maxPlainHeaders {
		return nil, 0
	}
	// Every string of the head is a piece of one copy of it, and every
	// value slice a piece of one array, as Header.Clone lays them out: two
	// allocations where a string and a slice per field were 2n.
	text := string(head)
	values := make([]string, fields)
	res := &http.Response{
		Status: text[9:len(line)], StatusCode: code, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: make(http.Header, fields), Request: req, ContentLength: -1,
	}
	lengths, chunked := 0, false
	for n, at := 0, len(line)+2; len(rest) > 0; n++ {
		line, rest, _ = bytes.Cut(rest, []byte("\r\n"))
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 || !tokenBytes(line[:colon]) {
			return nil, 0 // folded line, bad name: net/http decides
		}
		if !fieldValueBytes(line[colon+1:]) {
			return nil, 0
		}
		key := commonHeaderKey(line[:colon])
		value := strings.Trim(text[at+colon+1:at+len(line)], " \t")
		at += len(line) + 2
		switch key {
		case "Content-Length":
			v, err := strconv.ParseInt(value, 10, 64)
			if err != nil || strings.TrimLeft(value, "0123456789") != "" {
				return nil, 0 // a sign, or too long: net/http words it
			}
			lengths++
			res.ContentLength = v
		case "Transfer-Encoding":
			if value != "chunked" || chunked {
				return nil, 0
			}
			chunked = true
		case "Connection":
			if hasConnectionToken(value, "close") {
				res.Close = true
			}
		case "Trailer":
			return nil, 0
		}
		if prior := res.Header[key]; prior != nil {
			res.Header[key] = append(prior, value) // a repeated field: a slice of its own
		} else {
			values[n] = value
			res.Header[key] = values[n : n+1 : n+1]
		}
	}
	if res.Close {
		delete(res.Header, "Connection") // as net/http does when it says close
	}
	switch {
	case lengths > 1 || lengths == 1 && chunked:
		return nil, 0 // conflicting framing: net/http refuses it in its words
	case chunked:
		res.TransferEncoding = []string{"chunked"}
		delete(res.Header, "Transfer-Encoding") // as net/http: framing is in TransferEncoding
	case lengths == 0:
		res.Close = true // the body runs until the backend closes
	}
	return res, end + 4
}

func plainBody(res *http.Response, br *bufio.Reader) io.ReadCloser {
	switch {
	case res.TransferEncoding != nil:
		return &chunkedBody{chunks: httputil.NewChunkedReader(br), br: br}
	case res.ContentLength >= 0:
		if res.ContentLength == 0 {
			return http.NoBody
		}
		return &lengthBody{r: br, left: res.ContentLength}
	default:
		return io.NopCloser(br)
	}
}

// lengthBody is a body of a declared length: a connection that ends before
// it is a truncated reply, not a complete one.
type lengthBody struct {
	r    io.Reader
	left int64
}

func (b *lengthBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	switch {
	case b.left == 0:
		return n, io.EOF
	case errors.Is(err, io.EOF):
		return n, io.ErrUnexpectedEOF
	}
	return n, err
}

func (*lengthBody) Close() error { return nil }

// chunkedBody decodes a chunked body and reads the trailer section after its
// last chunk, so that the connection is at the next response when it ends.
type chunkedBody struct {
	chunks io.Reader
	br     *bufio.Reader
	err    error
}

// errTrailerEOF is worded as net/http words it.
var errTrailerEOF = errors.New("http: unexpected EOF reading trailer")

func (b *chunkedBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.chunks.Read(p)
	if errors.Is(err, io.EOF) {
		err = b.skipTrailer()
	}
	b.err = err
	return n, err
}

// skipTrailer reads the trailer section as net/http does, with its limit
// (what fits in the read buffer) and its errors; the gateway uses no
// trailer field.
func (b *chunkedBody) skipTrailer() error {
	buf, err := b.br.Peek(2)
	switch {
	case bytes.Equal(buf, []byte("\r\n")):
		_, _ = b.br.Discard(2)
		return io.EOF
	case len(buf) < 2:
		return errTrailerEOF
	case err != nil:
		return err
	}
	if !upcomingDoubleCRLF(b.br) {
		return errors.New("http: suspiciously long trailer after chunked body")
	}
	if _, err := textproto.NewReader(b.br).ReadMIMEHeader(); err != nil {
		if err == io.EOF {
			return errTrailerEOF
		}
		return err
	}
	return io.EOF
}

func upcomingDoubleCRLF(r *bufio.Reader) bool {
	for size := 4; ; size++ {
		buf, err := r.Peek(size)
		if bytes.HasSuffix(buf, []byte("\r\n\r\n")) {
			return true
		}
		if err != nil {
			return false
		}
	}
}

func (*chunkedBody) Close() error { return nil }

func tokenBytes(b []byte) bool {
	for _, c := range b {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// fieldValueBytes tells whether b holds no control bytes but tabs.
func fieldValueBytes(b []byte) bool {
	for _, c := range b {
		if c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// commonHeaderKey is the canonical form of a header name, without an
// allocation for the names every response carries.
func commonHeaderKey(b []byte) string {
	switch string(b) {
	case "Content-Type", "content-type":
		return "Content-Type"
	case "Content-Length", "content-length":
		return "Content-Length"
	case "Transfer-Encoding", "transfer-encoding":
		return "Transfer-Encoding"
	case "Connection", "connection":
		return "Connection"
	case "Date", "date":
		return "Date"
	case "Server", "server":
		return "Server"
	case "Cache-Control", "cache-control":
		return "Cache-Control"
	case "Trailer", "trailer":
		return "Trailer"
	}
	return textproto.CanonicalMIMEHeaderKey(string(b))
}

// crlfLines tells whether every line break in head is a CRLF and no NUL
// is in it: bare CRs and LFs are net/http's to judge.
func crlfLines(head []byte) bool {
	for i, c := range head {
		switch {
		case c == 0:
			return false
		case c == '\r' && (i+1 == len(head) || head[i+1] != '\n'):
			return false
		case c == '\n' && (i == 0 || head[i-1] != '\r'):
			return false
		}
	}
	return true
}
