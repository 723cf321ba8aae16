package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/internal/testfiles"
)

// TestNoLogLineLostAtSIGTERM runs the gateway process, keeps calls going
// while it gets SIGTERM, and reads its stderr to the end: every line is
// whole JSON, every call that got an answer has its access line, and the
// last line says the gateway stopped.
func TestNoLogLineLostAtSIGTERM(t *testing.T) {
	backend := startLegacyBackend(t)
	path := testfiles.Write(t, "gateway.yaml", []byte(gatewayConfig(backend.URL+"/", "Logged")))
	cmd := exec.Command(os.Args[0], "-config", path)
	cmd.Env = append(os.Environ(), runMainEnv+"=1", "GORACE=atexit_sleep_ms=0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	lines := make(chan string, 1<<16)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	var log []string
	next := func() gjson.Result {
		t.Helper()
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the gateway's log ended:\n%s", strings.Join(log, "\n"))
			}
			log = append(log, l)
			return gjson.Parse(l)
		case <-time.After(30 * time.Second):
			t.Fatalf("no log line for 30s:\n%s", strings.Join(log, "\n"))
		}
		return gjson.Result{}
	}
	var addr, admin string
	for addr == "" {
		switch l := next(); l.Get("msg").Str {
		case "admin listening":
			admin = l.Get("addr").Str
		case "listening":
			addr = l.Get("addr").Str
		}
	}
	eventually(t, "the gateway to be ready", func() bool {
		code, _ := httpGet(t, "http://"+admin+"/readyz")
		return code == http.StatusOK
	})

	// Workers call until the gateway stops answering; SIGTERM comes once
	// some calls are through, so that others are in flight when it does.
	var attempted, answered atomic.Int64
	enough := make(chan struct{})
	var once sync.Once
	var workers sync.WaitGroup
	client := &http.Client{Timeout: 10 * time.Second}
	for w := range 4 {
		workers.Go(func() {
			for i := 0; ; i++ {
				attempted.Add(1)
				if err := sendOnce(client, "http://"+addr+"/", fmt.Sprintf("w%d-%d", w, i)); err != nil {
					return // the gateway has stopped answering
				}
				if answered.Add(1) >= 200 {
					once.Do(func() { close(enough) })
				}
			}
		})
	}
	select {
	case <-enough:
	case <-time.After(60 * time.Second):
		t.Fatalf("only %d calls answered in 60s", answered.Load())
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	workers.Wait()
	logged := 0
	for {
		l, ok := <-lines
		if !ok {
			break
		}
		log = append(log, l)
	}
	if err := <-exited; err != nil {
		t.Fatalf("the gateway exited with %v", err)
	}
	for i, l := range log {
		j := gjson.Parse(l)
		if !gjson.Valid(l) || !j.IsObject() {
			t.Fatalf("log line %d is not a JSON object: %q", i+1, l)
		}
		if j.Get("msg").Str == "call" {
			logged++
		}
	}
	if got := gjson.Parse(log[len(log)-1]).Get("msg").Str; got != "stopped" {
		t.Errorf("the last log line says %q, want \"stopped\"", got)
	}
	t.Logf("%d calls answered, %d attempted, %d logged", answered.Load(), attempted.Load(), logged)
	if int64(logged) < answered.Load() || int64(logged) > attempted.Load() {
		t.Errorf("%d access lines for %d answered calls (%d attempted): lines were lost", logged, answered.Load(), attempted.Load())
	}
}

// sendOnce makes one message/send call and checks it has a result.
func sendOnce(client *http.Client, url, id string) error {
	body := `{"jsonrpc":"2.0","id":"` + id + `","method":"message/send","params":{"message":{"kind":"message","messageId":"` + id + `","role":"user","parts":[{"kind":"text","text":"what is A2A?"}]}}}`
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	if res.StatusCode != http.StatusOK || !gjson.GetBytes(b, "result").Exists() {
		return fmt.Errorf("HTTP %d: %.200s", res.StatusCode, b)
	}
	return nil
}
