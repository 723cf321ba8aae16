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

func TestProfileGatewayWritesWhatTheAdminListenerAnswers(t *testing.T) {
	asked := make(chan string, 1)
	admin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked <- r.URL.String()
		if r.URL.Path != "/debug/pprof/profile" {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, "profile bytes")
	}))
	defer admin.Close()
	dir := t.TempDir()
	b := &bench{opt: options{gatewayProfiles: dir}, progress: io.Discard}
	gw := &process{admin: strings.TrimPrefix(admin.URL, "http://")}

	b.profileGateway(gw, "gateway 0.3→1.0 32 conns", 2600*time.Millisecond)()

	if len(b.failures) > 0 {
		t.Fatalf("failures: %v", b.failures)
	}
	if url := <-asked; url != "/debug/pprof/profile?seconds=3" {
		t.Errorf("asked for %q, want a 3 s profile", url)
	}
	got, err := os.ReadFile(filepath.Join(dir, "001-gateway_0.3_1.0_32_conns.pprof"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "profile bytes" {
		t.Errorf("profile file holds %q", got)
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

// With -gateway-trace the gateway is asked for a runtime execution trace
// over the same window, saved where go tool trace finds it by its name.
func TestProfileGatewayRecordsAnExecutionTraceWhenAsked(t *testing.T) {
	asked := make(chan string, 1)
	admin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked <- r.URL.String()
		if r.URL.Path != "/debug/pprof/trace" {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, "trace bytes")
	}))
	defer admin.Close()
	dir := t.TempDir()
	b := &bench{opt: options{gatewayProfiles: dir, gatewayTrace: true}, progress: io.Discard}

	b.profileGateway(&process{admin: strings.TrimPrefix(admin.URL, "http://")}, "gateway +Redis index 32 conns", 4*time.Second)()

	if len(b.failures) > 0 {
		t.Fatalf("failures: %v", b.failures)
	}
	if url := <-asked; url != "/debug/pprof/trace?seconds=4" {
		t.Errorf("asked for %q, want a 4 s trace", url)
	}
	got, err := os.ReadFile(filepath.Join(dir, "001-gateway__Redis_index_32_conns.trace"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "trace bytes" {
		t.Errorf("trace file holds %q", got)
	}
}
