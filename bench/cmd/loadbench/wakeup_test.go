package main

import (
	"testing"
	"time"

	"github.com/a2agate/gateway/internal/testnet"
)

func TestWakeupStampsEveryOneRead(t *testing.T) {
	ln := testnet.Listen(t)
	type result struct {
		lat []int64
		err error
	}
	got := make(chan result, 1)
	go func() {
		lat, err := receiveStamps(ln)
		got <- result{lat, err}
	}()
	before := time.Now()
	if err := sendStamps(ln.Addr().String(), 200*time.Microsecond, 50); err != nil {
		t.Fatal(err)
	}
	r := <-got
	if r.err != nil || len(r.lat) != 50 {
		t.Fatalf("read %d of 50 stamps: %v", len(r.lat), r.err)
	}
	// Each latency lies between the stamp and the end of the run.
	for i, l := range r.lat {
		if l < 0 || time.Duration(l) > time.Since(before) {
			t.Fatalf("stamp %d read %v after it was taken", i, time.Duration(l))
		}
	}
}
