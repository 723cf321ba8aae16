package proxy

import (
	"context"
	"errors"
	"fmt"
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
		{&net.OpError{Op: "read", Err: syscall.ECONNRESET}, "closed the connection"},
		{errors.New("net/http: timeout awaiting response headers"), "did not answer within 7s"},
		{fmt.Errorf("%w: x", context.DeadlineExceeded), "did not answer in time"},
		{fmt.Errorf("%w: x", ErrShuttingDown), "did not answer before the gateway shut down"},
		{errors.New("unexpected EOF"), "closed the connection before answering"},
		{errors.New("something else"), "is unreachable"},
	}
	for _, c := range cases {
		if got := describeTransportError(c.err, cfg); got != c.want {
			t.Errorf("describeTransportError(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}
