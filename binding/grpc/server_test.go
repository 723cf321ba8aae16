package grpcbind

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"golang.org/x/net/http2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/a2agate/gateway/internal/testnet"
)

// onWorker answers GetTask and records whether the core was called on one
// of grpc-go's stream workers.
type onWorker struct {
	core
	worker chan bool
}

func (c *onWorker) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	buf := make([]byte, 64<<10)
	c.worker <- strings.Contains(string(buf[:runtime.Stack(buf, false)]), "grpc.(*Server).serverWorker")
	c.core.ServeHTTP(w, r)
}

// bothTransports serves New's server in front of c on a listener of its own
// (Serve, as grpc_listen does) and beside HTTP/1.1 on an h2c listener
// (ServeHTTP, as the traffic listener does), and returns a connection to
// each.
func bothTransports(t *testing.T, c http.Handler) map[string]*grpc.ClientConn {
	t.Helper()
	s := New(c, Options{})
	t.Cleanup(s.Stop)
	ln := testnet.Listen(t)
	go func() { _ = s.Serve(ln) }()
	h2c := httptest.NewUnstartedServer(s)
	h2c.Config.Protocols = new(http.Protocols)
	h2c.Config.Protocols.SetUnencryptedHTTP2(true)
	h2c.Start()
	t.Cleanup(h2c.Close)
	conns := map[string]*grpc.ClientConn{}
	for name, addr := range map[string]string{"Serve": ln.Addr().String(), "ServeHTTP": strings.TrimPrefix(h2c.URL, "http://")} {
		conns[name] = dial(t, addr)
	}
	return conns
}

// TestCallsRunOnStreamWorkers: a call runs on a goroutine the server keeps
// between calls, whose stack has grown to what a call needs, both on a
// listener of its own (Serve) and beside HTTP/1.1 on an h2c listener
// (ServeHTTP), where net/http's goroutine for the stream only relays the
// writes: a fresh goroutine per call would grow its stack by copying on
// every call.
func TestCallsRunOnStreamWorkers(t *testing.T) {
	c := &onWorker{core: core{answer: `{"jsonrpc":"2.0","id":1,"result":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING"}}}`},
		worker: make(chan bool, 1)}
	for name, conn := range bothTransports(t, c) {
		if _, err := a2apb.NewA2AServiceClient(conn).GetTask(context.Background(), &a2apb.GetTaskRequest{Id: "t1"}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !<-c.worker {
			t.Errorf("%s: the call ran on a goroutine of its own, not on one of the server's stream workers", name)
		}
	}
}

// TestMaxConcurrentStreams: on a listener of its own, the server bounds
// the calls a connection has open at once as net/http's HTTP/2 server
// bounds those beside HTTP/1.1 (ServeHTTP), or as Options say.
func TestMaxConcurrentStreams(t *testing.T) {
	h2c := httptest.NewUnstartedServer(http.NotFoundHandler())
	h2c.Config.Protocols = new(http.Protocols)
	h2c.Config.Protocols.SetUnencryptedHTTP2(true)
	h2c.Start()
	t.Cleanup(h2c.Close)
	want := testnet.AdvertisedStreams(t, strings.TrimPrefix(h2c.URL, "http://"))
	if want != DefaultMaxConcurrentStreams {
		t.Errorf("net/http's HTTP/2 server allows %d streams a connection, DefaultMaxConcurrentStreams is %d", want, DefaultMaxConcurrentStreams)
	}
	for _, tc := range []struct {
		opts Options
		want uint32
	}{{Options{}, want}, {Options{MaxConcurrentStreams: 3}, 3}} {
		s := New(&core{}, tc.opts)
		ln := testnet.Listen(t)
		go func() { _ = s.Serve(ln) }()
		if got := testnet.AdvertisedStreams(t, ln.Addr().String()); got != tc.want {
			t.Errorf("MaxConcurrentStreams %d: the server allows %d streams a connection, want %d", tc.opts.MaxConcurrentStreams, got, tc.want)
		}
		s.Stop()
	}
}

// TestIdleConnectionClosed: on a listener of its own, a connection that
// holds no call for Options.IdleTimeout (server.idle_timeout) is closed,
// as net/http closes an idle one beside HTTP/1.1. Before, grpc-go kept it
// for as long as its peer answered keepalive pings: a caller could hold
// any number of connections open, each with its goroutines and buffers.
func TestIdleConnectionClosed(t *testing.T) {
	s := New(&core{}, Options{IdleTimeout: 50 * time.Millisecond})
	t.Cleanup(s.Stop)
	ln := testnet.Listen(t)
	go func() { _ = s.Serve(ln) }()
	// Its reads' deadline is far past the timeout: only a connection never
	// closed reaches it.
	fr := testnet.H2Client(t, ln.Addr().String())
	goAway := false
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) || !goAway {
				t.Fatalf("an idle connection: %v after GOAWAY %v, want it closed after a GOAWAY", err, goAway)
			}
			return
		}
		switch f := f.(type) {
		case *http2.GoAwayFrame:
			goAway = true
		case *http2.PingFrame:
			if !f.IsAck() {
				_ = fr.WritePing(true, f.Data)
			}
		case *http2.SettingsFrame:
			if !f.IsAck() {
				_ = fr.WriteSettingsAck()
			}
		}
	}
}

// TestUnknownMethodHasErrorInfo: a method or service the binding does not
// serve gets UNIMPLEMENTED with the binding's ErrorInfo (METHOD_NOT_FOUND),
// naming the services it does serve, on either transport.
func TestUnknownMethodHasErrorInfo(t *testing.T) {
	for name, conn := range bothTransports(t, &core{}) {
		for _, method := range []string{"/lf.a2a.v1.A2AService/Nope", "/a2a.v1.A2AService/Nope", "/x.Y/Z"} {
			err := invokeRaw(conn, method, false, wireBytes{})
			st, _ := status.FromError(err)
			if st.Code() != codes.Unimplemented || !strings.Contains(st.Message(), "lf.a2a.v1.A2AService") || errorInfo(t, st).Reason != "METHOD_NOT_FOUND" {
				t.Errorf("%s %s: %v", name, method, err)
			}
		}
	}
}

// TestMetadataBound: a call's metadata is bounded alike on both
// transports, at net/http's bound on a request's headers, which the
// traffic listener's HTTP/2 server advertises: grpc-go's own transport
// would otherwise take far more a call, each call's metadata becoming the
// core's request's headers.
func TestMetadataBound(t *testing.T) {
	c := &core{answer: `{"jsonrpc":"2.0","id":1,"result":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}`}
	for name, conn := range bothTransports(t, c) {
		for _, tc := range []struct {
			size   int
			served bool
		}{{http.DefaultMaxHeaderBytes / 2, true}, {2 * http.DefaultMaxHeaderBytes, false}} {
			c.req = nil
			ctx := metadata.AppendToOutgoingContext(context.Background(), "big", strings.Repeat("b", tc.size))
			_, err := a2apb.NewA2AServiceClient(conn).GetTask(ctx, &a2apb.GetTaskRequest{Id: "t"})
			if served := err == nil && c.req != nil; served != tc.served {
				t.Errorf("%s: %d bytes of metadata: served %v (%v), want %v", name, tc.size, served, err, tc.served)
			}
		}
	}
}

// TestIsGRPC: a gRPC call is told by its Content-Type alone, whatever its
// case, codec or parameters; gRPC-Web and other types are not.
func TestIsGRPC(t *testing.T) {
	for _, tc := range []struct {
		types []string // the header's values; nil for none
		want  bool
	}{
		{[]string{"application/grpc"}, true},
		{[]string{"application/grpc+proto"}, true},
		{[]string{"application/grpc+json"}, true},
		{[]string{"application/grpc;charset=utf-8"}, true},
		{[]string{"Application/GRPC+Proto"}, true},
		{[]string{"application/grpc", "application/json"}, true}, // the first counts
		{[]string{"application/json", "application/grpc"}, false},
		{[]string{"application/grpc-web"}, false},
		{[]string{"application/grpc-web+proto"}, false},
		{[]string{"application/grpcx"}, false},
		{[]string{"application/grp"}, false},
		{[]string{"application/json"}, false},
		{[]string{""}, false},
		{nil, false},
	} {
		r := httptest.NewRequest(http.MethodPost, "/", nil)
		for _, v := range tc.types {
			r.Header.Add("content-type", v) // canonicalized, as net/http reads a request
		}
		if got := IsGRPC(r); got != tc.want {
			t.Errorf("Content-Type %q: IsGRPC = %v, want %v", tc.types, got, tc.want)
		}
	}
}
