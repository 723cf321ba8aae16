package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A CPU profile by default, with -gateway-trace a runtime execution trace,
// over the measurement's window, saved under the case's name.
func TestProfileGatewayWritesWhatTheAdminListenerAnswers(t *testing.T) {
	for _, c := range []struct {
		trace           bool
		path, url, file string
	}{
		{false, "/debug/pprof/profile", "/debug/pprof/profile?seconds=3", "001-gateway_0.3_1.0_32_conns.pprof"},
		{true, "/debug/pprof/trace", "/debug/pprof/trace?seconds=3", "001-gateway_0.3_1.0_32_conns.trace"},
	} {
		asked := make(chan string, 1)
		admin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			asked <- r.URL.String()
			if r.URL.Path != c.path {
				http.NotFound(w, r)
				return
			}
			io.WriteString(w, "profile bytes")
		}))
		dir := t.TempDir()
		b := &bench{opt: options{gatewayProfiles: dir, gatewayTrace: c.trace}, progress: io.Discard}
		gw := &process{admin: strings.TrimPrefix(admin.URL, "http://")}

		b.profileGateway(gw, "gateway 0.3→1.0 32 conns", 2600*time.Millisecond)()
		admin.Close()

		if len(b.failures) > 0 {
			t.Fatalf("trace %t: failures: %v", c.trace, b.failures)
		}
		if url := <-asked; url != c.url {
			t.Errorf("trace %t: asked for %q, want %q", c.trace, url, c.url)
		}
		got, err := os.ReadFile(filepath.Join(dir, c.file))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != "profile bytes" {
			t.Errorf("trace %t: file holds %q", c.trace, got)
		}
	}
}

func TestProfileGatewayReportsAFailedProfile(t *testing.T) {
	admin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "profiling is off", http.StatusNotFound)
	}))
	defer admin.Close()
	b := &bench{opt: options{gatewayProfiles: t.TempDir()}, progress: io.Discard}
	b.profileGateway(&process{admin: strings.TrimPrefix(admin.URL, "http://")}, "gateway", time.Second)()
	if len(b.failures) != 1 || !strings.Contains(b.failures[0], "404") {
		t.Errorf("failures: %v; want the 404 reported", b.failures)
	}
}

func TestProfileGatewayDoesNothingWithoutADirectoryOrAnAdminListener(t *testing.T) {
	b := &bench{progress: io.Discard}
	b.profileGateway(&process{admin: "127.0.0.1:1"}, "gateway", time.Second)()
	b.opt.gatewayProfiles = t.TempDir()
	b.profileGateway(&process{}, "nginx", time.Second)()
	if len(b.failures) > 0 || b.profiles != 0 {
		t.Errorf("failures %v, profiles %d; want nothing done", b.failures, b.profiles)
	}
}
