package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/a2agate/gateway/bench/canned"
	"github.com/a2agate/gateway/internal/testnet"
	"github.com/a2agate/gateway/internal/testrace"
)

// TestConnectionStack logs the goroutine stack a keep-alive connection
// keeps after a call to the gateway as it ships: the calls go through the
// real server, logger and connection pool to a backend over TCP, and this
// package's tests are built as the binary is, with any profile it is given
// (default.pgo), whose inlining merges frames that package proxy's
// BenchmarkCallStack sees apart. Go keeps the size a goroutine's deepest
// call needed, in powers of two: at 256 connections each doubling costs
// 4 MiB of stack, and as much again of heap, since the collector's goal
// counts stacks. A figure to watch, not a budget.
func TestConnectionStack(t *testing.T) {
	if testrace.Enabled {
		t.Skip("the race detector deepens every frame: the figure means nothing under it")
	}
	backend := httptest.NewServer(canned.New())
	defer backend.Close()
	// The canned backend answers in the dialect it is called in.
	for _, c := range []struct{ caller, backend canned.Dialect }{
		{canned.V10, canned.V10},
		{canned.V03, canned.V10},
		{canned.V10, canned.V03},
		{canned.V03, canned.V03},
	} {
		t.Run(string(c.caller)+"-to-"+string(c.backend), func(t *testing.T) {
			r := startGateway(t, `listen: 127.0.0.1:0
agents:
  - name: helpdesk
    public_url: http://gateway.test/
    backend:
      url: `+backend.URL+`/
      dialect: "`+string(c.backend)+`"
`)
			// A send's reply is the deepest document a unary call translates:
			// a task with its history and artifacts.
			body := canned.Request{Dialect: c.caller, Op: canned.Send, ID: "9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d"}.Append(nil)
			header := http.Header{"Content-Type": {"application/json"}}
			if c.caller == canned.V10 {
				header.Set("A2A-Version", "1.0")
			}
			got := testnet.StackPerConnection(t, strings.TrimPrefix(r.url, "http://"), testnet.Post(t, header, body))
			t.Logf("a call leaves its connection goroutine with a %d-byte stack", got)
		})
	}
}
