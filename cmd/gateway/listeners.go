package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/proxy"
)

// serverTLS is the tls.Config of a listener with certificate c: TLS 1.2 or
// later, the protocols (h2, http/1.1) added by the server that serves it,
// and the certificate of files, which reload renews.
func serverTLS(c *proxy.ListenerTLS) (*tls.Config, *certFiles, error) {
	f := &certFiles{cert: c.CertFile, key: c.KeyFile}
	if _, err := f.reload(); err != nil {
		return nil, nil, err
	}
	return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: f.get}, f, nil
}

// certFiles is a listener's certificate, read again when its files
// change: cert-manager and the like renew a certificate in place, well
// before it expires, and one read only at start would be served until
// it has expired.
type certFiles struct {
	cert, key string
	current   atomic.Pointer[tls.Certificate]
	// read is the content current was made from; failed the last content
	// that did not make a certificate, logged once.
	read, failed []byte
}

func (f *certFiles) get(*tls.ClientHelloInfo) (*tls.Certificate, error) { return f.current.Load(), nil }

// certExpiry reports when each served certificate expires, so that a
// renewal that did not happen (or whose files do not load) can be alerted
// on before callers see it.
type certExpiry struct {
	desc  *prometheus.Desc
	files []*certFiles
}

func newCertExpiry(files []*certFiles) *certExpiry {
	return &certExpiry{files: files, desc: prometheus.NewDesc("a2a_gateway_tls_certificate_expiry_timestamp_seconds",
		"When each listener's certificate being served expires (its NotAfter), by cert_file as configured.", []string{"cert_file"}, nil)}
}

func (c *certExpiry) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *certExpiry) Collect(ch chan<- prometheus.Metric) {
	seen := map[string]bool{}
	for _, f := range c.files {
		cert := f.current.Load()
		if cert == nil || cert.Leaf == nil || seen[f.cert] {
			continue
		}
		seen[f.cert] = true
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(cert.Leaf.NotAfter.Unix()), f.cert)
	}
}

// reload reads the files again and, when they changed and hold a valid
// pair, serves it to new connections; a pair that does not load (a key
// renewed before its certificate) leaves the previous one served. changed
// reports a new certificate; err a new content that does not load.
func (f *certFiles) reload() (changed bool, err error) {
	certPEM, err := os.ReadFile(f.cert)
	if err != nil {
		return false, fmt.Errorf("loading the certificate %s and key %s: %w", f.cert, f.key, err)
	}
	keyPEM, err := os.ReadFile(f.key)
	if err != nil {
		return false, fmt.Errorf("loading the certificate %s and key %s: %w", f.cert, f.key, err)
	}
	content := append(certPEM, keyPEM...)
	if bytes.Equal(content, f.read) || bytes.Equal(content, f.failed) {
		return false, nil
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		f.failed = content
		return false, fmt.Errorf("loading the certificate %s and key %s: %w", f.cert, f.key, err)
	}
	f.read, f.failed = content, nil
	f.current.Store(&cert)
	return true, nil
}

// grpcListener is an agent's grpc_listen: grpc-go's own server on a
// listener of its own, for the life of the process. Each call is served by
// the agent of that name in the generation current when it starts, as the
// traffic listener's calls are.
type grpcListener struct {
	agent string
	ln    net.Listener
	cfg   proxy.AgentConfig
	creds []grpc.ServerOption
	// streams is server.max_concurrent_streams.
	streams uint32
	// readTimeout is server.read_timeout, idleTimeout server.idle_timeout.
	readTimeout, idleTimeout time.Duration
	server                   *grpc.Server
}

type grpcSettings struct {
	listen       string
	tls          *proxy.ListenerTLS
	path         string
	maxBodyBytes int64
}

// grpcSettingsOf are the settings of every agent with a grpc_listen that
// its server is made with, by agent name: a reload that changes them is
// refused (they change only with a restart).
func grpcSettingsOf(cfg *Config) map[string]grpcSettings {
	m := map[string]grpcSettings{}
	for _, a := range cfg.Agents {
		if a.GRPCListen != "" {
			m[a.Name] = grpcSettings{listen: a.GRPCListen, tls: a.GRPCTLS, path: a.Path, maxBodyBytes: a.MaxBodyBytes}
		}
	}
	return m
}

// sameGRPCListeners reports whether next has the grpc_listen settings of
// old; max_body_bytes and path are in them, since the server applies them.
func sameGRPCListeners(old, next *Config) bool {
	return reflect.DeepEqual(grpcSettingsOf(old), grpcSettingsOf(next)) && reflect.DeepEqual(old.TLS, next.TLS)
}

// openGRPCListeners listens on every agent's grpc_listen, before the first
// generation is built: the cards list the bound port. creds is each one's
// TLS, by agent name (loadListenerTLS).
func openGRPCListeners(cfg *Config, creds map[string]*tls.Config) (_ []*grpcListener, err error) {
	var out []*grpcListener
	defer func() {
		if err != nil {
			for _, l := range out {
				_ = l.ln.Close()
			}
		}
	}()
	for _, a := range cfg.Agents {
		if a.GRPCListen == "" {
			continue
		}
		ln, err := net.Listen("tcp", a.GRPCListen)
		if err != nil {
			return nil, fmt.Errorf("agent %q grpc_listen: %w", a.Name, err)
		}
		l := &grpcListener{agent: a.Name, ln: ln, cfg: a, streams: uint32(cfg.Server.MaxConcurrentStreams), readTimeout: cfg.Server.ReadTimeout, idleTimeout: cfg.Server.IdleTimeout}
		if c := creds[a.Name]; c != nil {
			l.creds = []grpc.ServerOption{grpc.Creds(credentials.NewTLS(c))}
		}
		out = append(out, l)
	}
	return out, nil
}

// grpcAddrs are the bound addresses of the listeners, by agent name.
func grpcAddrs(ls []*grpcListener) map[string]string {
	m := map[string]string{}
	for _, l := range ls {
		m[l.agent] = l.ln.Addr().String()
	}
	return m
}

// start serves each listener's gRPC server; calls is the context every
// call's own ends with, as the traffic listener's do at the shutdown
// timeout.
func (rt *runtime) startGRPC(ls []*grpcListener, calls context.Context) {
	for _, l := range ls {
		l.server = proxy.NewGRPCListenerServer(rt.agentHandler(l.agent, calls, (*proxy.Agent).ServeRPC),
			rt.agentHandler(l.agent, calls, (*proxy.Agent).RefuseUnauthenticated), rt.agentAdmit(l.agent), rt.agentRefused(l.agent), l.cfg, l.streams, l.readTimeout, l.idleTimeout, l.creds...)
		go func() { _ = l.server.Serve(l.ln) }()
		rt.log.Info("gRPC listening", "agent", l.agent, "addr", l.ln.Addr().String())
	}
}

// agentHandler serves a request of the gRPC front end of the agent named
// name with serve (its JSON-RPC endpoint, its check of a caller) and that
// agent in the current generation.
func (rt *runtime) agentHandler(name string, calls context.Context, serve func(*proxy.Agent, http.ResponseWriter, *http.Request)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g := rt.enter()
		defer g.inflight.Done()
		ctx, cancel := context.WithCancelCause(r.Context())
		defer cancel(nil)
		stop := context.AfterFunc(calls, func() { cancel(context.Cause(calls)) })
		defer stop()
		if a := g.agent(name); a != nil {
			serve(a, w, r.WithContext(ctx))
			return
		}
		// A reload that drops the agent is refused while its listener runs.
		http.Error(w, "agent "+name+" is not in the running config", http.StatusServiceUnavailable)
	})
}

// agent is the generation's agent named name, nil when it has none.
func (g *generation) agent(name string) *proxy.Agent {
	for _, a := range g.agents {
		if a.Config().Name == name {
			return a
		}
	}
	return nil
}

// agentAdmit counts a call of the gRPC front end of the agent named name
// against its caller's bound (Agent.AdmitEarly) in the current generation,
// which serves until the call is released: a generation a reload retires
// meanwhile keeps the count it holds.
func (rt *runtime) agentAdmit(name string) func(*http.Request) (*http.Request, func(), bool) {
	return func(r *http.Request) (*http.Request, func(), bool) {
		g := rt.enter()
		a := g.agent(name)
		if a == nil {
			g.inflight.Done()
			return r, func() {}, false
		}
		r, release, over := a.AdmitEarly(r)
		return r, func() { release(); g.inflight.Done() }, over
	}
}

// agentRefused counts and logs a call the gRPC front end of the agent
// named name refused (Agent.GRPCRefused) in the current generation.
func (rt *runtime) agentRefused(name string) proxy.FrontEndRefusals {
	return func(ctx context.Context, start time.Time, caller dialect.ID, op dialect.Op, kind dialect.ErrorKind) {
		g := rt.enter()
		defer g.inflight.Done()
		if a := g.agent(name); a != nil {
			a.GRPCRefused(ctx, start, caller, op, kind)
		}
	}
}

// stopGRPC stops the gRPC servers gracefully: done is closed once every
// call has ended. Stop them at once with stopGRPCNow.
func stopGRPC(ls []*grpcListener) (done <-chan struct{}) {
	c := make(chan struct{})
	var wg sync.WaitGroup
	for _, l := range ls {
		wg.Go(l.server.GracefulStop)
	}
	go func() { wg.Wait(); close(c) }()
	return c
}

func stopGRPCNow(ls []*grpcListener) {
	for _, l := range ls {
		l.server.Stop()
	}
}

// listenerTLS is the TLS of the traffic listener (nil: plain HTTP) and of
// each agent's grpc_listen, by agent name (nil: plain gRPC).
type listenerTLS struct {
	traffic *tls.Config
	grpc    map[string]*tls.Config
	// files are the certificates of them all, for the watcher to renew.
	files []*certFiles
}

// loadListenerTLS reads the certificates and keys of the traffic listener
// and of every grpc_listen, reporting every problem at once. A grpc_listen
// without grpc_tls shares the traffic listener's.
func loadListenerTLS(cfg *Config) (listenerTLS, error) {
	var errs []error
	l := listenerTLS{grpc: map[string]*tls.Config{}}
	if cfg.TLS != nil {
		c, f, err := serverTLS(cfg.TLS)
		if err != nil {
			errs = append(errs, fmt.Errorf("tls: %w", err))
		} else {
			l.files = append(l.files, f)
		}
		l.traffic = c
	}
	for _, a := range cfg.Agents {
		switch {
		case a.GRPCListen == "":
		case a.GRPCTLS != nil:
			c, f, err := serverTLS(a.GRPCTLS)
			if err != nil {
				errs = append(errs, fmt.Errorf("agent %q grpc_tls: %w", a.Name, err))
			} else {
				l.files = append(l.files, f)
			}
			l.grpc[a.Name] = c
		default:
			l.grpc[a.Name] = l.traffic
		}
	}
	return l, errors.Join(errs...)
}
