// Package readall reads a request body: to its end into a caller's
// buffer, so that a buffer sized (or reused) for the usual body is filled
// without growing (io.ReadAll always starts a new 512-byte buffer and grows
// it), and within a deadline of its own.
package readall

import (
	"errors"
	"io"
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
