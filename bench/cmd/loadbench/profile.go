package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// profileGateway records a CPU profile of the gateway p for d, from its
// admin listener, into the -gateway-profiles directory, under name; with
// -gateway-trace, a runtime execution trace instead, whose scheduler and
// network waits (go tool trace -pprof=sched, -pprof=net) tell where a call
// waits while the gateway's core is not busy, which a CPU profile cannot. It
// returns at once; the returned func waits for the profile and reports a
// failure to take it. Without -gateway-profiles, or for a process that is
// not a gateway, it does nothing.
//
// The profiles are for pprof, and are what a profile-guided build would be
// made from (go tool pprof -proto merges them); see bench/README.md for why
// the gateway is built without one.
func (b *bench) profileGateway(p *process, name string, d time.Duration) (wait func()) {
	if b.opt.gatewayProfiles == "" || p.admin == "" {
		return func() {}
	}
	b.profiles++
	kind, ext := "profile", "pprof"
	if b.opt.gatewayTrace {
		kind, ext = "trace", "trace"
	}
	path := filepath.Join(b.opt.gatewayProfiles, fmt.Sprintf("%03d-%s.%s", b.profiles, fileSafe(name), ext))
	// pprof takes whole seconds.
	seconds := max(1, int(d.Round(time.Second)/time.Second))
	url := "http://" + p.admin + "/debug/pprof/" + kind + "?seconds=" + strconv.Itoa(seconds)
	done := make(chan error, 1)
	go func() { done <- fetchTo(url, path, time.Duration(seconds+30)*time.Second) }()
	return func() {
		if err := <-done; err != nil {
			b.fail("profile of %s: %v", name, err)
		}
	}
}

// fetchTo writes what url answers to path.
func fetchTo(url, path string, timeout time.Duration) error {
	client := &http.Client{Timeout: timeout}
	res, err := client.Get(url)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(res.Body, 512))
		return fmt.Errorf("%s: %s: %s", url, res.Status, msg)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, res.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// fileSafe turns a case name into a file name.
func fileSafe(name string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9', r == '.', r == '-':
			return r
		}
		return '_'
	}, name)
}
