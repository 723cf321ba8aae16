package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a2agate/gateway/bench/canned"
)

// loads counts the loads and stream sets a run has made: their request ids
// are numbered by it.
var loads atomic.Int64

// loadSpec is one closed-loop load: conns connections, each sending the
// next request as soon as the previous answer is read in full.
type loadSpec struct {
	url     string
	conns   int
	warmup  time.Duration // not measured: connections open, caches warm
	measure time.Duration
	request canned.Request
	header  http.Header
	// services are the processes, besides the backend, that the system
	// under test calls (Redis), whose CPU is not another user's.
	services []int
}

// loadResult is what one load measured in its window.
type loadResult struct {
	requests int // answered in the window
	errors   int
	firstErr string
	lat      latencies
	// start and end are the samples at the window's edges.
	start, end sample
}

// newLoadTransport is the load generator's client pool: one keep-alive
// connection per simulated caller, never more.
func newLoadTransport(conns int) *http.Transport {
	return &http.Transport{
		Proxy:               nil,
		MaxConnsPerHost:     conns,
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
}

// resultMarker is how an answer shows it is a JSON-RPC success: every
// success the gateway and the canned agent write has it near the start.
var resultMarker = []byte(`"result":`)

// runLoad drives spec against url and samples the processes at the edges of
// the measurement window.
func runLoad(spec loadSpec, sutPID int, backendPIDs []int) (loadResult, error) {
	tr := newLoadTransport(spec.conns)
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	begin := time.Now()
	windowStart := begin.Add(spec.warmup)
	windowEnd := windowStart.Add(spec.measure)

	var res loadResult
	var sampleErr error
	var sampled sync.WaitGroup
	sampled.Go(func() {
		time.Sleep(time.Until(windowStart))
		var err1, err2 error
		res.start, err1 = takeSample(sutPID, backendPIDs, spec.services...)
		time.Sleep(time.Until(windowEnd))
		res.end, err2 = takeSample(sutPID, backendPIDs, spec.services...)
		if err1 != nil || err2 != nil {
			sampleErr = fmt.Errorf("sampling /proc: %v %v", err1, err2)
		}
	})

	type workerResult struct {
		lat      []int64
		errors   int
		firstErr string
	}
	out := make([]workerResult, spec.conns)
	// Request ids, and so message ids, are unique across the whole run: a
	// message id seen before is a retry, which the gateway answers from the
	// first call (and a Redis index outlives a measurement).
	run := loads.Add(1)
	var wg sync.WaitGroup
	for w := range spec.conns {
		wg.Go(func() {
			r := &out[w]
			r.lat = make([]int64, 0, 4096)
			body := make([]byte, 0, 2048)
			buf := bytes.NewBuffer(make([]byte, 0, 8192))
			req := spec.request
			prefix := "l" + strconv.FormatInt(run, 10) + "w" + strconv.Itoa(w) + "-"
			for seq := 0; ; seq++ {
				start := time.Now()
				if !start.Before(windowEnd) {
					return
				}
				req.ID = prefix + strconv.Itoa(seq)
				body = req.Append(body[:0])
				err := post(client, spec.url, spec.header, body, buf)
				done := time.Now()
				if start.Before(windowStart) || done.After(windowEnd) {
					continue
				}
				if err != nil {
					r.errors++
					if r.firstErr == "" {
						r.firstErr = err.Error()
					}
					continue
				}
				r.lat = append(r.lat, int64(done.Sub(start)))
			}
		})
	}
	wg.Wait()
	sampled.Wait()
	parts := make([][]int64, len(out))
	for i, r := range out {
		parts[i] = r.lat
		res.errors += r.errors
		if res.firstErr == "" {
			res.firstErr = r.firstErr
		}
	}
	res.lat = merge(parts)
	res.requests = len(res.lat)
	return res, sampleErr
}

// post sends one request and reads the answer in full into buf.
func post(client *http.Client, url string, header http.Header, body []byte, buf *bytes.Buffer) error {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header = header
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	buf.Reset()
	_, err = buf.ReadFrom(res.Body)
	res.Body.Close()
	if err != nil {
		return err
	}
	head := buf.Bytes()[:min(buf.Len(), 160)]
	if res.StatusCode != http.StatusOK || !bytes.Contains(head, resultMarker) {
		return fmt.Errorf("HTTP %d: %.200s", res.StatusCode, buf.Bytes())
	}
	return nil
}
