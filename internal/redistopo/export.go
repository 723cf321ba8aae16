package redistopo

import "testing"

// MakeCerts writes a fresh CA and a server (127.0.0.1, localhost) and a
// client certificate it signs into dir, for tests of other TLS servers.
func MakeCerts(t testing.TB, dir string) TLSFiles { return makeCerts(t, dir) }
