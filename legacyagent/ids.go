package legacyagent

import (
	"crypto/rand"
	"fmt"
	"time"
)

// newID returns a random (version 4) UUID, the id format of the reference
// SDKs.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails since Go 1.24
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// formatTimestamp writes t in UTC the way Python's datetime.isoformat does,
// which is what the Python 0.x SDK puts on the wire: microseconds, a
// "+00:00" offset, and no fraction at all when it is zero.
func formatTimestamp(t time.Time) string {
	t = t.UTC()
	if t.Nanosecond()/1000 == 0 {
		return t.Format("2006-01-02T15:04:05+00:00")
	}
	return t.Format("2006-01-02T15:04:05.000000+00:00")
}
