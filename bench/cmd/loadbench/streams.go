package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/a2agate/gateway/bench/canned"
)

// streamSpec is a set of concurrent streams, each asking the backend for
// the same shape.
type streamSpec struct {
	url     string
	streams int
	request canned.Request // a stream request
	header  http.Header
	// stagger spreads the first events of the streams evenly over this
	// long, so that paced streams do not all send their events at the same
	// moment. The streams are all opened first (settle), and the backend
	// keeps each one's events on its own schedule from then on.
	stagger time.Duration
	// warmupEvents are the first events of each stream, whose latency is
	// not recorded: the first second of a paced run carries the start-up
	// of every process involved (fresh goroutines, buffers, the first
	// garbage collections), as the warm-up of the request cases does.
	warmupEvents int
	// afterWarmup, when set, is called once every stream is past its
	// warm-up events, and has returned before runStreams does.
	afterWarmup func()
}

// streamResult is what a set of streams measured.
type streamResult struct {
	events   int
	errors   int
	firstErr string
	// lat is, per event, its arrival at the client minus the stamp the
	// backend wrote into it just before writing it.
	lat        latencies
	start, end sample
}

// maxDialsAtOnce bounds how many connections are being opened at the same
// moment, so that thousands of streams do not overflow the listen backlog
// and wait out SYN retries.
const maxDialsAtOnce = 128

func newStreamClient(streams int) *http.Client {
	tr := newLoadTransport(streams)
	tr.MaxResponseHeaderBytes = 64 << 10
	return &http.Client{Transport: tr}
}

// runStreams runs every stream of spec to its end.
func runStreams(spec streamSpec, sutPID int, backendPIDs []int) (streamResult, error) {
	client := newStreamClient(spec.streams)
	defer client.Transport.(*http.Transport).CloseIdleConnections()
	var res streamResult
	var err error
	begin := time.Now()
	// Paced streams are opened during settle and send their first events
	// after it, so what is measured is the events alone.
	var settle time.Duration
	if spec.stagger > 0 {
		settle = time.Second + time.Duration(spec.streams)*time.Millisecond/2
	}
	type one struct {
		lat    []int64
		events int
		err    error
	}
	out := make([]one, spec.streams)
	dials := make(chan struct{}, maxDialsAtOnce)
	// Unique across the run, as a load's are: a stream send with a message id
	// seen before is a retry (or, with another shape, a refused key reuse).
	run := strconv.FormatInt(loads.Add(1), 10)
	var wg sync.WaitGroup
	for i := range spec.streams {
		wg.Go(func() {
			o := &out[i]
			o.lat = make([]int64, 0, max(spec.request.Stream.Events, 1))
			req := spec.request
			req.ID = "s" + run + "-" + strconv.Itoa(i)
			if spec.stagger > 0 {
				req.Stream.StartMicros = begin.Add(settle + spec.stagger*time.Duration(i)/time.Duration(spec.streams)).UnixMicro()
			}
			body, err := openStream(context.Background(), client, spec.url, spec.header, req, dials)
			if err != nil {
				o.err = err
				return
			}
			defer body.Close()
			o.err = readEvents(body, func(data []byte, arrival int64) error {
				ts, ok := canned.EventStamp(data)
				if !ok {
					return fmt.Errorf("event without a stamp: %.200s", data)
				}
				if o.events >= spec.warmupEvents {
					o.lat = append(o.lat, arrival-ts)
				}
				o.events++
				return nil
			})
			if o.err == nil && o.events != req.Stream.Events {
				o.err = fmt.Errorf("the stream ended after %d of %d events", o.events, req.Stream.Events)
			}
		})
	}
	var warmedUp chan struct{}
	if spec.afterWarmup != nil {
		// The last stream's first event is due a stagger after settle.
		interval := time.Duration(spec.request.Stream.IntervalMicros) * time.Microsecond
		warmupEnd := begin.Add(settle + spec.stagger + time.Duration(spec.warmupEvents)*interval)
		warmedUp = make(chan struct{})
		time.AfterFunc(time.Until(warmupEnd), func() {
			spec.afterWarmup()
			close(warmedUp)
		})
	}
	time.Sleep(time.Until(begin.Add(settle)))
	if res.start, err = takeSample(sutPID, backendPIDs); err != nil {
		wg.Wait()
		return res, err
	}
	wg.Wait()
	if warmedUp != nil {
		<-warmedUp
	}
	if res.end, err = takeSample(sutPID, backendPIDs); err != nil {
		return res, err
	}
	parts := make([][]int64, len(out))
	for i, o := range out {
		parts[i] = o.lat
		res.events += o.events
		if o.err != nil {
			res.errors++
			if res.firstErr == "" {
				res.firstErr = o.err.Error()
			}
		}
	}
	res.lat = merge(parts)
	return res, nil
}

// openStream posts a stream request and returns the event stream, once its
// headers say it is one. dials bounds the connections opened at once.
func openStream(ctx context.Context, client *http.Client, url string, header http.Header, r canned.Request, dials chan struct{}) (io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(r.Append(nil)))
	if err != nil {
		return nil, err
	}
	req.Header = header
	dials <- struct{}{}
	res, err := client.Do(req)
	<-dials
	if err != nil {
		return nil, err
	}
	if mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); res.StatusCode != http.StatusOK || mt != "text/event-stream" {
		b, _ := io.ReadAll(io.LimitReader(res.Body, 512))
		res.Body.Close()
		return nil, fmt.Errorf("HTTP %d %s: %s", res.StatusCode, res.Header.Get("Content-Type"), b)
	}
	return res.Body, nil
}

var (
	dataPrefix  = []byte("data:")
	errorMarker = []byte(`"error":`)
)

// readEvents calls onEvent with the data line of each event as it arrives
// and the time it arrived, until the stream ends. The benchmark's events are
// one data line each.
func readEvents(body io.Reader, onEvent func(data []byte, arrival int64) error) error {
	rd := bufio.NewReaderSize(body, 16<<10)
	for {
		line, err := rd.ReadSlice('\n')
		arrival := time.Now().UnixNano()
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case errors.Is(err, bufio.ErrBufferFull):
			return fmt.Errorf("an event line longer than %d bytes", rd.Size())
		case err != nil:
			return err
		}
		if !bytes.HasPrefix(line, dataPrefix) {
			continue
		}
		if bytes.Contains(line, errorMarker) {
			return fmt.Errorf("error event: %.300s", line)
		}
		if err := onEvent(line, arrival); err != nil {
			return err
		}
	}
}

// heldStreams are streams kept open, idle, after their first event.
type heldStreams struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	client *http.Client
}

// holdStreams opens n streams that each receive one event and then stay
// open, and returns once every one has its first event (or failed).
func holdStreams(url string, header http.Header, d canned.Dialect, n int) (*heldStreams, int, error) {
	ctx, cancel := context.WithCancel(context.Background())
	h := &heldStreams{cancel: cancel, client: newStreamClient(n)}
	dials := make(chan struct{}, maxDialsAtOnce)
	var mu sync.Mutex
	var firstErr error
	failed := 0
	var open sync.WaitGroup
	run := strconv.FormatInt(loads.Add(1), 10)
	for i := range n {
		open.Add(1)
		h.wg.Go(func() {
			req := canned.Request{Dialect: d, Op: canned.Stream, ID: "h" + run + "-" + strconv.Itoa(i), Stream: canned.StreamShape{Events: canned.DefaultStreamEvents, Hold: true}}
			body, err := openStream(ctx, h.client, url, header, req, dials)
			if err == nil {
				defer body.Close()
				first := false
				err = readEvents(body, func([]byte, int64) error {
					if !first {
						first = true
						open.Done()
					}
					return nil
				})
				if first {
					return // the benchmark ended the stream
				}
				if err == nil {
					err = errors.New("the held stream ended without an event")
				}
			}
			mu.Lock()
			failed++
			if firstErr == nil {
				firstErr = err
			}
			mu.Unlock()
			open.Done()
		})
	}
	open.Wait()
	return h, failed, firstErr
}

// close ends the held streams and waits for their readers.
func (h *heldStreams) close() {
	h.cancel()
	h.wg.Wait()
	h.client.Transport.(*http.Transport).CloseIdleConnections()
}
