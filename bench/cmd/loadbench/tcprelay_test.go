package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/a2agate/gateway/bench/canned"
	"github.com/a2agate/gateway/internal/testnet"
)

// TestTCPRelayCarriesStreams: streams and keep-alive calls pass through the
// relay byte for byte, and it stops when told to.
func TestTCPRelayCarriesStreams(t *testing.T) {
	backend := httptest.NewServer(canned.New())
	t.Cleanup(backend.Close)
	ln := testnet.Listen(t)
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- relayTCP(ctx, ln, strings.TrimPrefix(backend.URL, "http://")) }()

	warmedUp := false
	res, err := runStreams(streamSpec{
		url: "http://" + ln.Addr().String() + backendPath(canned.V10), streams: 6, header: http.Header{"Content-Type": {"application/json"}},
		request:      canned.Request{Dialect: canned.V10, Op: canned.Stream, Stream: canned.StreamShape{Events: 7, IntervalMicros: 100}},
		stagger:      time.Millisecond,
		warmupEvents: 2,
		afterWarmup:  func() { warmedUp = true },
	}, os.Getpid(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.events != 42 || res.errors != 0 || len(res.lat) != 30 {
		t.Fatalf("through the relay: %d events, %d errors (%s), %d latencies after the warm-up", res.events, res.errors, res.firstErr, len(res.lat))
	}
	if !warmedUp {
		t.Fatal("runStreams returned before calling afterWarmup")
	}
	cancel()
	if err := <-stopped; err != nil {
		t.Fatalf("relay stopped with %v", err)
	}
}
