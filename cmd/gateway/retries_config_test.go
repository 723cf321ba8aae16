package main

import (
	"strings"
	"testing"
	"time"
)

const retriesConfig = `listen: ":0"
store:
  memory:
    ttl: 2h
agents:
  - name: a
    public_url: http://gateway.test/
    backend: {url: "http://backend.test/", dialect: "1.0"}
`

// The retry window defaults to the task TTL when that is shorter than 24h,
// and may never be longer.
func TestRetryWindowBoundByTaskTTL(t *testing.T) {
	cfg, err := parseConfig([]byte(retriesConfig))
	if err != nil {
		t.Fatal(err)
	}
	if w := cfg.Agents[0].Retries.Window; w != 2*time.Hour {
		t.Fatalf("default window = %s, want the task ttl 2h", w)
	}
	raw := strings.Replace(retriesConfig, `dialect: "1.0"}`, `dialect: "1.0"}`+"\n    retries: {window: 3h}", 1)
	if _, err := parseConfig([]byte(raw)); err == nil || !strings.Contains(err.Error(), "retries.window (3h0m0s) is longer than the task index's ttl (2h0m0s)") {
		t.Fatalf("a window past the ttl: %v", err)
	}
}
