package agent10

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

// timestampLayout is google.protobuf.Timestamp in ProtoJSON as the 1.0
// specification asks for it (§5.6.1): RFC 3339, UTC with "Z", milliseconds.
const timestampLayout = "2006-01-02T15:04:05.000Z"

func formatTimestamp(t time.Time) string { return t.UTC().Format(timestampLayout) }
