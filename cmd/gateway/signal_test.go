package main

import (
	"bufio"
	"errors"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/internal/testfiles"
	"github.com/a2agate/gateway/legacyagent"
)

// TestSecondSignalEndsTheDrain runs the gateway process with a stream held
// open and a long shutdown timeout: a first SIGINT starts the drain, a
// second one ends the process at once instead of waiting out the timeout.
func TestSecondSignalEndsTheDrain(t *testing.T) {
	hold := make(chan struct{})
	agent := legacyagent.New(legacyagent.Options{Hold: hold})
	defer agent.Close()
	backend := httptest.NewServer(agent)
	defer backend.Close()
	defer close(hold)
	config := strings.Replace(gatewayConfig(backend.URL+"/", "Signals"), "agents:", "server:\n  shutdown_timeout: 5m\nagents:", 1)
	cmd := exec.Command(os.Args[0], "-config", testfiles.Write(t, "gateway.yaml", []byte(config)))
	cmd.Env = append(os.Environ(), runMainEnv+"=1", "GORACE=atexit_sleep_ms=0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	lines := make(chan gjson.Result, 1024)
	exited := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- gjson.Parse(sc.Text())
		}
		exited <- cmd.Wait()
	}()
	waitFor := func(msg string) gjson.Result {
		t.Helper()
		timeout := time.After(30 * time.Second)
		for {
			select {
			case l := <-lines:
				if l.Get("msg").Str == msg {
					return l
				}
			case <-timeout:
				t.Fatalf("no %q log line in 30s", msg)
			}
		}
	}
	addr := waitFor("listening").Get("addr").Str
	res := openHeldStream(t, "http://"+addr)
	defer res.Body.Close()

	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	waitFor("shutting down: finishing in-flight calls")
	second := time.Now()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() == 0 {
			t.Errorf("after a second signal the process exited with %v, want a non-zero status", err)
		}
		t.Logf("exited %s after the second signal: %v", time.Since(second).Round(time.Millisecond), err)
	case <-time.After(10 * time.Second):
		t.Fatal("a second signal did not end the process: it waits out its 5m shutdown timeout")
	}
}
