package proxy

import (
	"errors"
	"io"
)

// maxPresize caps the buffer sized from a declared length: a caller may
// declare a large body and send nothing, and must not make the gateway
// allocate for it up front.
const maxPresize = 64 << 10

// readSized reads r to its end. With the length the sender declared it
// reads into one buffer of that size, where io.ReadAll would start at 512
// bytes and copy the body several times as it grows; a body longer than
// declared still reads in full.
func readSized(r io.Reader, declared int64) ([]byte, error) {
	if declared <= 0 {
		return io.ReadAll(r)
	}
	// One byte more than declared, so that the read which sees the end
	// does not grow the buffer.
	buf := make([]byte, 0, min(declared, maxPresize)+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}
