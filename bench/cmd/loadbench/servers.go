package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/a2agate/gateway/bench/canned"
)

// serveBackend runs the canned A2A agent: `loadbench backend -listen ADDR`.
func serveBackend(args []string, stderr io.Writer) error {
	fs := newFlagSet("backend", stderr)
	listen := fs.String("listen", "127.0.0.1:0", "address to serve on")
	if err := fs.Parse(args); err != nil {
		return err
	}
	return serveUntilSignal(*listen, canned.New())
}

// serveRevProxy runs the plain Go pass-through proxy the gateway is
// compared with: `loadbench revproxy -listen ADDR -upstream URL`. It is
// httputil.ReverseProxy as a careful operator would set it up: a keep-alive
// pool large enough for every connection, pooled copy buffers, events
// flushed at once.
func serveRevProxy(args []string, stderr io.Writer) error {
	listen, upstream, err := parseRelayFlags("revproxy", args, stderr, "the backend's base URL")
	if err != nil {
		return err
	}
	target, err := url.Parse(upstream)
	if err != nil || target.Host == "" {
		return fmt.Errorf("revproxy: -upstream %q is not a URL", upstream)
	}
	return serveUntilSignal(listen, newRevProxy(target))
}

// newFlagSet is a subcommand's flag set, which reports its errors and usage
// on stderr.
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parseRelayFlags reads the -listen and -upstream flags of a command that
// serves on one address and relays to another.
func parseRelayFlags(name string, args []string, stderr io.Writer, upstreamUsage string) (listen, upstream string, err error) {
	fs := newFlagSet(name, stderr)
	l := fs.String("listen", "127.0.0.1:0", "address to serve on")
	u := fs.String("upstream", "", upstreamUsage)
	if err := fs.Parse(args); err != nil {
		return "", "", err
	}
	return *l, *u, nil
}

func newRevProxy(target *url.URL) *httputil.ReverseProxy {
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        4096,
		MaxIdleConnsPerHost: 4096,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.SetXForwarded()
		},
		Transport:     tr,
		FlushInterval: -1,
		BufferPool:    &bufferPool{pool: sync.Pool{New: func() any { return make([]byte, 32<<10) }}},
	}
}

type bufferPool struct{ pool sync.Pool }

func (b *bufferPool) Get() []byte  { return b.pool.Get().([]byte) }
func (b *bufferPool) Put(p []byte) { b.pool.Put(p) } //nolint:staticcheck // a slice header per Put is the BufferPool API

// serveUntilSignal serves h on addr until SIGTERM or SIGINT.
func serveUntilSignal(addr string, h http.Handler) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}
