package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
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
