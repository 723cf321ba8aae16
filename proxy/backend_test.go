package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestDescribeTransportError holds the words a caller gets for each way a
// backend call fails at the transport, which go straight to the transport
// and so see its errors unwrapped.
func TestDescribeTransportError(t *testing.T) {
	cfg := BackendConfig{ConnectTimeout: 3 * time.Second, ResponseHeaderTimeout: 7 * time.Second}
	cases := []struct {
		err  error
		want string
	}{
		{&net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", Name: "agent.invalid", IsNotFound: true}}, "is unreachable: unknown host"},
		{&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, "is unreachable: connection refused"},
		{&net.OpError{Op: "dial", Err: timeoutErr{}}, "could not be reached within agents[].backend.connect_timeout (3s)"},
		{&net.OpError{Op: "read", Err: syscall.ECONNRESET}, "closed the connection"},
		{timeoutErr{}, "did not answer within agents[].backend.response_header_timeout (7s)"},
		{fmt.Errorf("x: %w", &responseTimeoutError{limit: 9 * time.Second}), "did not finish its reply within agents[].backend.response_timeout (9s)"},
		{fmt.Errorf("%w: x", context.DeadlineExceeded), "did not answer in time"},
		{fmt.Errorf("%w: x", ErrShuttingDown), "did not answer before the gateway shut down"},
		{fmt.Errorf("read: %w", io.ErrUnexpectedEOF), "closed the connection before answering"},
		{errors.New("net/http: server response headers exceeded 1048576 bytes; aborted"), "sent a reply that is not valid HTTP: net/http: server response headers exceeded 1048576 bytes; aborted"},
	}
	for _, c := range cases {
		if got := describeTransportError(c.err, cfg); got != c.want {
			t.Errorf("describeTransportError(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}

// timeoutErr is a net.Error that timed out, as net/http's wait for a
// response head reports it.
type timeoutErr struct{}

func (timeoutErr) Error() string   { return "timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

// TestBackendRequestInOneWrite holds newTransport's write buffer and
// requestBody to their purpose: a send of a typical size (a 1 KiB body and
// the head a call sends) reaches the backend in one write system call, not
// a full buffer and then the rest, for which the backend wakes twice.
func TestBackendRequestInOneWrite(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	tr := newTransport(BackendConfig{MaxIdleConns: 1, ResponseHeaderTimeout: 10 * time.Second})
	defer tr.CloseIdleConnections()
	var writes atomic.Int32
	dial := tr.DialContext
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return writeCounter{Conn: c, writes: &writes}, nil
	}
	target, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	body := bytes.Repeat([]byte("x"), 1<<10)
	for i := range 2 { // a fresh connection, then the reused one
		writes.Store(0)
		req := &http.Request{Method: http.MethodPost, URL: target, Host: target.Host, ProtoMajor: 1, ProtoMinor: 1,
			Header: http.Header{
				"Content-Type":    headerJSON,
				"Accept":          headerJSON,
				"Traceparent":     {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
				"X-Forwarded-For": {"203.0.113.7"},
			},
			Body: requestBody(body), ContentLength: int64(len(body))}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		res, err := tr.RoundTrip(req.WithContext(ctx))
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		_ = res.Body.Close()
		cancel()
		if n := writes.Load(); n != 1 {
			t.Errorf("request %d: %d writes to the backend for a %d-byte body; want 1", i, n, len(body))
		}
	}
}

// writeCounter counts its connection's Write calls.
type writeCounter struct {
	net.Conn
	writes *atomic.Int32
}

func (c writeCounter) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}
