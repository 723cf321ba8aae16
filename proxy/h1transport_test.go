package proxy

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// h1Target is a backend for the transport tests: it answers every POST
// with its body echoed, and counts the connections it accepted.
func h1Target(t testing.TB) (*httptest.Server, *atomic.Int64) {
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &conns
}

func newTestH1(t testing.TB, rawURL string) (*h1Transport, *url.URL) {
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	cfg := BackendConfig{ConnectTimeout: time.Second, ResponseHeaderTimeout: 5 * time.Second, MaxIdleConns: 4}
	tr := newH1Transport(u.Host, hostPort(u), cfg)
	t.Cleanup(tr.CloseIdleConnections)
	return tr, u
}

func h1Post(ctx context.Context, tr http.RoundTripper, u *url.URL, body string) (string, error) {
	// As the gateway sends them: the body in memory.
	req := (&http.Request{Method: http.MethodPost, URL: u, Host: u.Host, Header: http.Header{},
		Body: newMemoryBody([]byte(body)), ContentLength: int64(len(body)),
	}).WithContext(ctx)
	return h1RoundTrip(tr, req)
}

// h1PostStream posts a body that is not in memory: one that only GetBody
// can give again.
func h1PostStream(ctx context.Context, tr http.RoundTripper, u *url.URL, body string) (string, error) {
	req := (&http.Request{Method: http.MethodPost, URL: u, Host: u.Host, Header: http.Header{},
		Body: io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body)),
		GetBody: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(body)), nil },
	}).WithContext(ctx)
	return h1RoundTrip(tr, req)
}

func h1RoundTrip(tr http.RoundTripper, req *http.Request) (string, error) {
	res, err := tr.RoundTrip(req)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	return string(out), err
}

// TestH1TransportReusesConnections: calls in a row share one connection;
// a connection the backend closed while idle is noticed and replaced.
func TestH1TransportReusesConnections(t *testing.T) {
	srv, conns := h1Target(t)
	tr, u := newTestH1(t, srv.URL)
	ctx := context.Background()
	for i := range 5 {
		got, err := h1Post(ctx, tr, u, `{"n":1}`)
		if err != nil || got != `{"n":1}` {
			t.Fatalf("call %d: %q, %v", i, got, err)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("5 calls in a row used %d connections, want 1", n)
	}
	srv.CloseClientConnections() // the backend drops its idle keep-alive connections
	if got, err := h1Post(ctx, tr, u, `{"n":2}`); err != nil || got != `{"n":2}` {
		t.Fatalf("after the backend closed idle connections: %q, %v", got, err)
	}
	if n := conns.Load(); n != 2 {
		t.Errorf("%d connections, want 2 (the closed one replaced)", n)
	}
}

// TestH1TransportStopsWithTheCall: ending the call's context ends a call
// waiting for its answer at once, with the context's cause, and the
// connection is not reused.
func TestH1TransportStopsWithTheCall(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release
	}))
	defer srv.Close()
	defer close(release)
	tr, u := newTestH1(t, srv.URL)
	cause := errors.New("the caller left")
	ctx, cancel := context.WithCancelCause(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := h1Post(ctx, tr, u, `{}`)
		done <- err
	}()
	cancel(cause)
	if err := <-done; !errors.Is(err, cause) {
		t.Fatalf("err = %v, want the cause", err)
	}
	tr.mu.Lock()
	idle := len(tr.idle)
	tr.mu.Unlock()
	if idle != 0 {
		t.Errorf("%d idle connections after a stopped call, want 0", idle)
	}
}

// TestH1TransportHeaderTimeout words a backend that never answers as
// net/http does, so callers read the same message from both transports.
func TestH1TransportHeaderTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	defer srv.Close()
	defer close(release)
	u, _ := url.Parse(srv.URL)
	cfg := BackendConfig{ConnectTimeout: time.Second, ResponseHeaderTimeout: 50 * time.Millisecond, MaxIdleConns: 4}
	tr := newH1Transport(u.Host, hostPort(u), cfg)
	_, err := h1Post(context.Background(), tr, u, `{}`)
	if !errors.Is(err, errHeaderTimeout) || describeTransportError(err, cfg) != "did not answer within 50ms" {
		t.Fatalf("err = %v (%q)", err, describeTransportError(err, cfg))
	}
}

// TestH1TransportRefusesOtherOrigins: the pool serves its backend only.
func TestH1TransportRefusesOtherOrigins(t *testing.T) {
	srv, _ := h1Target(t)
	tr, _ := newTestH1(t, srv.URL)
	other, _ := url.Parse("http://elsewhere.invalid/")
	if _, err := h1Post(context.Background(), tr, other, `{}`); err == nil {
		t.Fatal("a request for another origin was sent")
	}
}

// TestH1TransportClosedPool: after CloseIdleConnections a retired pool
// still answers calls in flight but keeps no connection.
func TestH1TransportClosedPool(t *testing.T) {
	srv, conns := h1Target(t)
	tr, u := newTestH1(t, srv.URL)
	if _, err := h1Post(context.Background(), tr, u, `{}`); err != nil {
		t.Fatal(err)
	}
	tr.CloseIdleConnections()
	if _, err := h1Post(context.Background(), tr, u, `{}`); err != nil {
		t.Fatal(err)
	}
	tr.mu.Lock()
	idle := len(tr.idle)
	tr.mu.Unlock()
	if idle != 0 || conns.Load() != 2 {
		t.Errorf("idle %d, connections %d; want 0 and 2", idle, conns.Load())
	}
}

// BenchmarkBackendTransport is one unary backend call over loopback, with
// the gateway's pool and with net/http's Transport as the gateway had it.
//
//	go test -run '^$' -bench BackendTransport -benchmem ./proxy
func BenchmarkBackendTransport(b *testing.B) {
	srv, _ := h1Target(b)
	body := strings.Repeat("x", 800)
	lean, u := newTestH1(b, srv.URL)
	std := newTransport(BackendConfig{ConnectTimeout: time.Second, ResponseHeaderTimeout: 5 * time.Second, MaxIdleConns: 4})
	b.Cleanup(std.CloseIdleConnections)
	for _, c := range []struct {
		name string
		rt   http.RoundTripper
	}{{"h1Transport", lean}, {"net-http-Transport", std}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if got, err := h1Post(context.Background(), c.rt, u, body); err != nil || len(got) != len(body) {
					b.Fatal(err)
				}
			}
		})
	}
}

// brokenConn is an idle connection the backend has closed in a way the
// liveness check cannot see: writing to it fails.
type brokenConn struct{ net.Conn }

func (brokenConn) Write([]byte) (int, error) { return 0, errors.New("write: broken pipe") }

// TestH1TransportSendsAgainAfterAFailedWrite: a request whose write fails
// on a reused connection never reached the backend, so it goes out once
// more on a new connection.
func TestH1TransportSendsAgainAfterAFailedWrite(t *testing.T) {
	for name, post := range map[string]func(context.Context, http.RoundTripper, *url.URL, string) (string, error){
		"body in memory": h1Post, "body from GetBody": h1PostStream,
	} {
		t.Run(name, func(t *testing.T) {
			srv, conns := h1Target(t)
			tr, u := newTestH1(t, srv.URL)
			client, server := net.Pipe()
			defer server.Close()
			tr.put(&h1Conn{nc: brokenConn{client}, br: bufio.NewReader(client)})
			got, err := post(context.Background(), tr, u, `{"again":true}`)
			if err != nil || got != `{"again":true}` {
				t.Fatalf("after a failed write on a reused connection: %q, %v", got, err)
			}
			if n := conns.Load(); n != 1 {
				t.Errorf("the backend saw %d connections, want 1 (the new one)", n)
			}
		})
	}
}

// cancelingConn ends the call's context at a chosen point of the exchange
// and lets the exchange go on only once the context's end has stopped the
// connection, so the exchange's own deadline changes come after it.
type cancelingConn struct {
	net.Conn
	onWrite, onRead bool
	cancel          context.CancelFunc
	stopped         chan struct{}
	once            sync.Once
}

func (c *cancelingConn) SetDeadline(d time.Time) error {
	err := c.Conn.SetDeadline(d)
	if !d.IsZero() && d.Before(time.Now()) {
		c.once.Do(func() { close(c.stopped) })
	}
	return err
}

func (c *cancelingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	if c.onWrite {
		c.onWrite = false
		c.cancel()
		<-c.stopped
	}
	return n, err
}

func (c *cancelingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if c.onRead && n > 0 {
		c.onRead = false
		c.cancel()
		<-c.stopped
	}
	return n, err
}

// TestH1TransportCallEndWinsOverDeadlines: a call that ends while its
// request is written, or while its response head is read, stops at once.
// The exchange sets and clears the response header deadline itself; that
// must not undo the stop, or the call would wait for the backend (the
// header timeout is minutes) with no caller left.
func TestH1TransportCallEndWinsOverDeadlines(t *testing.T) {
	for _, phase := range []string{"request written", "response head read"} {
		t.Run(phase, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.ReadAll(r.Body)
				w.Header().Set("Content-Length", "10")
				w.WriteHeader(http.StatusOK)
				_, _ = io.WriteString(w, "{")
				w.(http.Flusher).Flush()
				<-r.Context().Done()
			}))
			defer srv.Close()
			u, _ := url.Parse(srv.URL)
			cfg := BackendConfig{ConnectTimeout: time.Second, ResponseHeaderTimeout: time.Hour, MaxIdleConns: 4}
			tr := newH1Transport(u.Host, hostPort(u), cfg)
			defer tr.CloseIdleConnections()
			nc, err := net.Dial("tcp", srv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close() // before the server's Close, which waits for its connections
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			conn := &cancelingConn{Conn: nc, cancel: cancel, stopped: make(chan struct{}),
				onWrite: phase == "request written", onRead: phase == "response head read"}
			tr.put(&h1Conn{nc: conn, br: bufio.NewReaderSize(conn, h1ReadBufferSize)})
			done := make(chan error, 1)
			go func() {
				_, err := h1Post(ctx, tr, u, `{}`)
				done <- err
			}()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("err = %v, want context.Canceled", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the call went on waiting for the backend after it ended")
			}
		})
	}
}
