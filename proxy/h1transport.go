package proxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// h1Transport is the connection pool to a backend reached over plain
// HTTP/1.1, which is what a sidecar's neighbour is. It does per call what
// net/http's Transport does with two goroutines per connection and
// channels between them: the calling goroutine writes the request and
// reads the response itself. Under load that was a fifth of the gateway's
// CPU; it also makes an idle open stream cost one buffered reader and no
// goroutines. Backends reached over TLS keep net/http's Transport (HTTP/2,
// session resumption).
type h1Transport struct {
	host          string // as the backend's URL spells it
	addr          string // host:port
	dialer        net.Dialer
	headerTimeout time.Duration
	maxIdle       int
	idleTimeout   time.Duration

	mu      sync.Mutex
	idle    []*h1Conn // most recently used last
	sweeper *time.Timer
	closed  bool
}

type h1Conn struct {
	nc        net.Conn
	br        *bufio.Reader
	idleSince time.Time
}

// h1ReadBufferSize is what a connection holds while a response is read,
// as net/http's Transport does by default.
const h1ReadBufferSize = 4 << 10

func newH1Transport(host, addr string, cfg BackendConfig) *h1Transport {
	return &h1Transport{
		host:          host,
		addr:          addr,
		dialer:        net.Dialer{Timeout: cfg.ConnectTimeout, KeepAlive: 30 * time.Second},
		headerTimeout: cfg.ResponseHeaderTimeout,
		maxIdle:       cfg.MaxIdleConns,
		idleTimeout:   90 * time.Second,
	}
}

// errHeaderTimeout words a response header timeout as net/http does, so
// callers describe both transports' failures alike.
var errHeaderTimeout = errors.New("timeout awaiting response headers")

// requestWriters are shared: a connection needs a write buffer only while
// it writes a request.
var requestWriters = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 4<<10) }}

// RoundTrip implements http.RoundTripper for requests with a known length.
func (t *h1Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	if req.URL.Scheme != "http" || req.URL.Host != t.host {
		closeRequestBody(req)
		return nil, fmt.Errorf("the connection pool to %s cannot send a request to %s://%s", t.host, req.URL.Scheme, req.URL.Host)
	}
	if ctx.Err() != nil {
		closeRequestBody(req)
		return nil, context.Cause(ctx)
	}
	c, reused, err := t.conn(ctx)
	if err != nil {
		closeRequestBody(req)
		return nil, err
	}
	res, err := t.send(c, req)
	if err != nil && reused && isWriteFailure(err) {
		// The backend had closed the idle connection: it never saw the
		// request, so it is safe to send it once more on a new one.
		return t.retry(req)
	}
	return res, err
}

// send exchanges req on c. Ending the call's context stops whatever the
// connection is doing; a connection it stopped, or whose exchange failed,
// is closed and never reused.
func (t *h1Transport) send(c *h1Conn, req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	stop := context.AfterFunc(ctx, c.stop)
	res, err := t.exchange(c, req)
	if err != nil {
		stop()
		c.nc.Close()
		if ctx.Err() != nil {
			// The deadline that stopped the exchange is not the backend's.
			return nil, context.Cause(ctx)
		}
		return nil, err
	}
	res.Body = &h1Body{rc: res.Body, ctx: ctx, t: t, c: c, stop: stop, reuse: !res.Close && !req.Close}
	return res, nil
}

// retry sends req again on a new connection, when it can be sent again.
func (t *h1Transport) retry(req *http.Request) (*http.Response, error) {
	var body io.ReadCloser
	switch b, ok := req.Body.(*memoryBody); {
	case ok:
		body = newMemoryBody(b.data)
	case req.GetBody != nil:
		var err error
		if body, err = req.GetBody(); err != nil {
			return nil, err
		}
	default:
		return nil, errors.New("backend closed an idle connection as the request was sent")
	}
	again := *req
	again.Body = body
	c, err := t.dial(req.Context())
	if err != nil {
		body.Close()
		return nil, err
	}
	return t.send(c, &again)
}

// writeFailure marks an error from writing the request.
type writeFailure struct{ err error }

func (w writeFailure) Error() string { return w.err.Error() }
func (w writeFailure) Unwrap() error { return w.err }

func isWriteFailure(err error) bool {
	var wf writeFailure
	return errors.As(err, &wf)
}

// exchange writes req on c and reads the response's head.
func (t *h1Transport) exchange(c *h1Conn, req *http.Request) (*http.Response, error) {
	bw := requestWriters.Get().(*bufio.Writer)
	bw.Reset(c.nc)
	err := writeRequest(bw, req)
	if err == nil {
		err = bw.Flush()
	}
	bw.Reset(nil)
	requestWriters.Put(bw)
	if err != nil {
		return nil, writeFailure{err}
	}
	ctx := req.Context()
	if t.headerTimeout > 0 {
		c.setReadDeadline(ctx, time.Now().Add(t.headerTimeout))
	}
	res, err := readResponse(c.br, req)
	// Informational answers (103 Early Hints) come before the real one.
	for err == nil && res.StatusCode >= 100 && res.StatusCode < 200 && res.StatusCode != http.StatusSwitchingProtocols {
		res, err = readResponse(c.br, req)
	}
	if err != nil {
		var ne net.Error
		if t.headerTimeout > 0 && errors.As(err, &ne) && ne.Timeout() && !errors.Is(err, context.Canceled) {
			return nil, fmt.Errorf("%w: %w", errHeaderTimeout, err)
		}
		return nil, err
	}
	if t.headerTimeout > 0 {
		c.setReadDeadline(ctx, time.Time{})
	}
	return res, nil
}

func closeRequestBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// conn returns an idle connection that is still open, or a new one.
func (t *h1Transport) conn(ctx context.Context) (*h1Conn, bool, error) {
	now := time.Now()
	for {
		t.mu.Lock()
		n := len(t.idle)
		if n == 0 {
			t.mu.Unlock()
			c, err := t.dial(ctx)
			return c, false, err
		}
		c := t.idle[n-1]
		t.idle[n-1] = nil
		t.idle = t.idle[:n-1]
		t.mu.Unlock()
		if now.Sub(c.idleSince) < t.idleTimeout && c.open() {
			return c, true, nil
		}
		c.nc.Close()
	}
}

func (t *h1Transport) dial(ctx context.Context) (*h1Conn, error) {
	nc, err := t.dialer.DialContext(ctx, "tcp", t.addr)
	if err != nil {
		return nil, err
	}
	return &h1Conn{nc: nc, br: bufio.NewReaderSize(nc, h1ReadBufferSize)}, nil
}

// stop ends whatever the connection is doing, from any goroutine.
func (c *h1Conn) stop() { _ = c.nc.SetDeadline(time.Unix(1, 0)) }

// setReadDeadline moves the read deadline of a call's connection. The
// call's end stops the connection from another goroutine (stop); when it
// came first, the deadline set here would undo it, so it is stopped again.
// When the end comes later, its stop runs after this check.
func (c *h1Conn) setReadDeadline(ctx context.Context, d time.Time) {
	_ = c.nc.SetReadDeadline(d)
	if ctx.Err() != nil {
		c.stop()
	}
}

// open tells whether the backend has kept an idle connection open: it has
// neither closed it nor sent anything unasked. One non-blocking peek.
func (c *h1Conn) open() bool {
	if c.br.Buffered() > 0 {
		return false
	}
	sc, ok := c.nc.(syscall.Conn)
	if !ok {
		return true
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	alive := false
	var b [1]byte
	_ = raw.Read(func(fd uintptr) bool {
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		alive = n < 0 && (errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EWOULDBLOCK))
		return true // never wait for readiness
	})
	return alive
}

// put gives a connection whose exchange ended cleanly back to the pool.
func (t *h1Transport) put(c *h1Conn) {
	c.idleSince = time.Now()
	t.mu.Lock()
	if t.closed || len(t.idle) >= t.maxIdle {
		t.mu.Unlock()
		c.nc.Close()
		return
	}
	t.idle = append(t.idle, c)
	if t.sweeper == nil {
		t.sweeper = time.AfterFunc(t.idleTimeout, t.sweep)
	}
	t.mu.Unlock()
}

// sweep closes connections idle past the timeout, so a pool that traffic
// left does not hold them open.
func (t *h1Transport) sweep() {
	t.mu.Lock()
	defer t.mu.Unlock()
	cutoff := time.Now().Add(-t.idleTimeout)
	kept := t.idle[:0]
	for _, c := range t.idle {
		if c.idleSince.After(cutoff) {
			kept = append(kept, c)
		} else {
			c.nc.Close()
		}
	}
	clear(t.idle[len(kept):])
	t.idle = kept
	if len(t.idle) > 0 && !t.closed {
		t.sweeper.Reset(t.idle[0].idleSince.Sub(cutoff))
	} else {
		t.sweeper = nil
	}
}

// CloseIdleConnections closes the pool's idle connections and keeps any
// from joining it later: the agent that used the transport is retired, and
// its calls close their connections as they end.
func (t *h1Transport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle, t.closed = nil, true
	t.mu.Unlock()
	for _, c := range idle {
		c.nc.Close()
	}
}

// h1Body gives the connection back once the response has been read to its
// end, and closes it when the reader stops before. Close may come from
// another goroutine while a Read waits (a stream's idle timer): it closes
// the connection, which ends the Read.
type h1Body struct {
	rc       io.ReadCloser
	ctx      context.Context
	t        *h1Transport
	c        *h1Conn
	stop     func() bool
	reuse    bool
	finished atomic.Bool
}

func (b *h1Body) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	switch {
	case errors.Is(err, io.EOF):
		b.finish(true)
	case err != nil && b.ctx.Err() != nil:
		// The deadline that stopped the read is not the backend's.
		err = context.Cause(b.ctx)
	}
	return n, err
}

func (b *h1Body) Close() error {
	b.finish(false)
	return nil
}

func (b *h1Body) finish(atEnd bool) {
	if !b.finished.CompareAndSwap(false, true) {
		return
	}
	if stopped := b.stop(); stopped && atEnd && b.reuse && b.c.br.Buffered() == 0 {
		b.t.put(b.c)
		return
	}
	b.c.nc.Close()
}
