package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2agate/gateway/bench/canned"
)

func TestRunLoadCountsAnswersAndErrors(t *testing.T) {
	backend := canned.New()
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Every tenth call fails the way a broken proxy would.
		if calls.Add(1)%10 == 0 {
			http.Error(w, "bad gateway", http.StatusBadGateway)
			return
		}
		backend.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	res, err := runLoad(loadSpec{
		url: srv.URL + "/v10/", conns: 4, warmup: 20 * time.Millisecond, measure: 200 * time.Millisecond,
		request: canned.Request{Dialect: canned.V10, Op: canned.Send},
		header:  http.Header{"Content-Type": {"application/json"}},
	}, os.Getpid(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.requests == 0 || res.errors == 0 || res.firstErr == "" {
		t.Fatalf("requests %d errors %d first %q", res.requests, res.errors, res.firstErr)
	}
	if len(res.lat) != res.requests || res.lat.quantile(0.5) <= 0 || !res.end.at.After(res.start.at) {
		t.Fatalf("latencies %d for %d requests, window %s..%s", len(res.lat), res.requests, res.start.at, res.end.at)
	}
}

func TestRunStreamsReadsEveryEvent(t *testing.T) {
	srv := httptest.NewServer(canned.New())
	t.Cleanup(srv.Close)
	for _, d := range []canned.Dialect{canned.V03, canned.V10} {
		res, err := runStreams(streamSpec{
			url: srv.URL + "/", streams: 6, header: http.Header{"Content-Type": {"application/json"}},
			request: canned.Request{Dialect: d, Op: canned.Stream, Stream: canned.StreamShape{Events: 7, IntervalMicros: 100}},
			stagger: time.Millisecond,
		}, os.Getpid(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.events != 42 || res.errors != 0 || len(res.lat) != 42 {
			t.Fatalf("%s: %d events, %d errors (%s), %d latencies", d, res.events, res.errors, res.firstErr, len(res.lat))
		}
	}
}

func TestRunStreamsReportsShortStreams(t *testing.T) {
	backend := canned.New()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Cut") == "" {
			backend.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte("data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"metadata\":{\"ts\":1}}}\n\n"))
	}))
	t.Cleanup(srv.Close)
	res, err := runStreams(streamSpec{
		url: srv.URL + "/", streams: 2, header: http.Header{"X-Cut": {"1"}},
		request: canned.Request{Dialect: canned.V10, Op: canned.Stream, Stream: canned.StreamShape{Events: 5}},
	}, os.Getpid(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.errors != 2 || res.firstErr == "" {
		t.Fatalf("errors %d first %q", res.errors, res.firstErr)
	}
}

func TestHoldStreamsKeepsThemOpenUntilClosed(t *testing.T) {
	var open atomic.Int64
	ended := make(chan struct{}, 5)
	backend := canned.New()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		open.Add(1)
		defer func() { ended <- struct{}{} }()
		backend.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	held, failed, err := holdStreams(srv.URL+"/", http.Header{}, canned.V10, 5)
	if err != nil || failed != 0 {
		t.Fatalf("failed %d: %v", failed, err)
	}
	if n, gone := open.Load(), len(ended); n != 5 || gone != 0 {
		t.Fatalf("%d streams opened and %d ended at the backend, want 5 and 0", n, gone)
	}
	held.close()
	for range 5 {
		<-ended // the test times out if a held stream outlives close
	}
}
