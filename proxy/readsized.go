package proxy

import (
	"io"

	"github.com/a2agate/gateway/internal/readall"
)

// maxPresize caps the room made from a declared length: a caller may
// declare a large body and send nothing, and must not make the gateway
// allocate for it up front.
const maxPresize = 64 << 10

// readSized appends r, read to its end, to buf. With the length the sender
// declared it makes room for that once, where io.ReadAll would start at
// 512 bytes and copy the body several times as it grows; a body longer
// than declared still reads in full.
func readSized(buf []byte, r io.Reader, declared int64) ([]byte, error) {
	// One byte more than declared, so that the read which sees the end
	// does not grow the buffer.
	if want := len(buf) + int(min(max(declared, 0), maxPresize)) + 1; cap(buf) < want {
		grown := make([]byte, len(buf), want)
		copy(grown, buf)
		buf = grown
	}
	return readall.Append(buf, r)
}
