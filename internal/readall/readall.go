// Package readall reads a request body: to its end into a caller's
// buffer, so that a buffer sized (or reused) for the usual body is filled
// without growing (io.ReadAll always starts a new 512-byte buffer and grows
// it), and within a deadline of its own; and says whether it is sent
// uncompressed (IdentityEncoding) and in UTF-8 (UTF8Charset).
package readall

import (
	"errors"
	"io"
	"strings"
)

// Append reads r to its end, appending to dst, and returns dst grown. It
// grows dst only when dst is full; an io.EOF ends the read without an error.
func Append(dst []byte, r io.Reader) ([]byte, error) {
	for {
		if len(dst) == cap(dst) {
			dst = append(dst, 0)[:len(dst)]
		}
		n, err := r.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+n]
		if errors.Is(err, io.EOF) {
			return dst, nil
		}
		if err != nil {
			return dst, err
		}
	}
}

// IdentityEncoding reports whether a request's Content-Encoding values say
// its body is sent as it is. The gateway reads no compressed request body:
// one said to be compressed is refused, not read as JSON, and the caller's
// coding never reaches a backend with the body the gateway writes.
func IdentityEncoding(values []string) bool {
	for _, v := range values {
		for c := range strings.SplitSeq(v, ",") {
			if c = strings.TrimSpace(c); c != "" && !strings.EqualFold(c, "identity") {
				return false
			}
		}
	}
	return true
}

// UTF8Charset reports whether a JSON body's media type parameters allow it
// to be read as JSON: JSON is UTF-8 (RFC 8259 §8.1), so a charset other
// than utf-8 is refused rather than read as if it were.
func UTF8Charset(params map[string]string) bool {
	cs, ok := params["charset"]
	return !ok || strings.EqualFold(cs, "utf-8")
}
