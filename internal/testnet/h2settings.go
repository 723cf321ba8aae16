package testnet

import (
	"io"
	"net"
	"testing"
	"time"

	"golang.org/x/net/http2"
)

// H2Client opens an HTTP/2 connection to addr (prior knowledge, no TLS),
// closed at the test's end, that has sent its preface and empty SETTINGS:
// a framer to read the server's frames with, each read bounded by a
// deadline of 10 s from now.
func H2Client(t testing.TB, addr string) *http2.Framer {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, http2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	fr := http2.NewFramer(conn, conn)
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	return fr
}

// AdvertisedStreams is the SETTINGS_MAX_CONCURRENT_STREAMS that the HTTP/2
// server at addr (prior knowledge, no TLS) sends in its first SETTINGS
// frame, 0 when it sets none.
func AdvertisedStreams(t testing.TB, addr string) uint32 {
	t.Helper()
	f, err := H2Client(t, addr).ReadFrame()
	if err != nil {
		t.Fatal(err)
	}
	sf, ok := f.(*http2.SettingsFrame)
	if !ok || sf.IsAck() {
		t.Fatalf("the server's first frame is %v, not its settings", f)
	}
	v, _ := sf.Value(http2.SettingMaxConcurrentStreams)
	return v
}
