package testnet

import (
	"io"
	"net"
	"testing"
	"time"

	"golang.org/x/net/http2"
)

// AdvertisedStreams is the SETTINGS_MAX_CONCURRENT_STREAMS that the HTTP/2
// server at addr (prior knowledge, no TLS) sends in its first SETTINGS
// frame, 0 when it sets none.
func AdvertisedStreams(t testing.TB, addr string) uint32 {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, http2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	fr := http2.NewFramer(conn, conn)
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	f, err := fr.ReadFrame()
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
