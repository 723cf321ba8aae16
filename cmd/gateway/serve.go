package main

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"reflect"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redis/go-redis/v9"

	"github.com/a2agate/gateway/proxy"
	"github.com/a2agate/gateway/store"
	"github.com/a2agate/gateway/telemetry"
)

// endCallsGrace is how long the calls canceled at the shutdown timeout get
// to end their answers before their connections are closed.
const endCallsGrace = time.Second

// configPollInterval is how often the config file is checked for changes.
var configPollInterval = 2 * time.Second

// newLogger writes JSON lines to w, each in one write as it is logged, so
// that no line waits in the process to be lost at exit or on a crash.
// Its level is level's, which a reload changes.
func newLogger(w io.Writer, level *slog.LevelVar) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level}))
}

// setLevel sets v to a config's log.level, validated with the config.
func setLevel(v *slog.LevelVar, level string) {
	var l slog.Level
	_ = l.UnmarshalText([]byte(level))
	v.Set(l)
}

// runtime is what lives for the whole process: listeners, the task index
// and the metrics. Agents live in generations, replaced on reload.
type runtime struct {
	log *slog.Logger
	// level is log.level, the one setting of the process a reload
	// changes.
	level    *slog.LevelVar
	addr     string
	tasks    store.Store
	metrics  *proxy.Metrics
	reloads  *prometheus.CounterVec
	registry *prometheus.Registry
	pprof    bool
	// tracing is process-wide, like the task index.
	tracing *telemetry.Tracing
	// certs are the listeners' certificates, read again by the watcher;
	// renewals counts the watcher's results by cert_file: a failed one
	// leaves the expiry metric unchanged, which alerts only days later.
	certs    []*certFiles
	renewals *prometheus.CounterVec
	// scheme is the traffic listener's, for the public URLs it defaults;
	// grpcAddrs are the agents' grpc_listen addresses, bound.
	scheme    string
	grpcAddrs map[string]string

	// draining is set at SIGTERM: /readyz answers 503 from then on, while
	// the admin listener still serves, so that a load balancer that
	// probes it stops sending calls the traffic listener no longer takes.
	draining atomic.Bool

	// retiring counts the generations a reload replaced that are still
	// finishing their calls and draining their push queues; drains ends
	// their drains at the process's exit, which waits for them.
	retiring  sync.WaitGroup
	drains    context.Context
	endDrains context.CancelFunc

	mu  sync.RWMutex
	cur *generation
}

// generation is one loaded config's agents. Calls hold the generation they
// started on, so a reload never cuts an in-flight call or open stream.
type generation struct {
	cfg      *Config
	gw       *proxy.Gateway
	agents   []*proxy.Agent
	closers  []func()
	stop     context.CancelFunc
	refresh  sync.WaitGroup
	inflight sync.WaitGroup
}

func (rt *runtime) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g := rt.enter()
	defer g.inflight.Done()
	g.gw.ServeHTTP(w, r)
}

// enter is the serving generation, counted in flight until the caller's
// inflight.Done, so that a swap retires it only once the call is over.
func (rt *runtime) enter() *generation {
	rt.mu.RLock()
	g := rt.cur
	g.inflight.Add(1)
	rt.mu.RUnlock()
	return g
}

// swap makes next the serving generation and retires the previous one once
// its calls have finished.
func (rt *runtime) swap(next *generation) {
	rt.mu.Lock()
	prev := rt.cur
	rt.cur = next
	rt.mu.Unlock()
	if prev != nil {
		rt.retiring.Go(func() { prev.retire(rt.drains, rt.log) })
	}
}

// retire ends g once its calls have: its push queues are drained within
// the shutdown timeout, or until drains ends (the process's exit), what
// is left abandoned and logged to log.
func (g *generation) retire(drains context.Context, log *slog.Logger) {
	g.inflight.Wait()
	g.stop()
	g.refresh.Wait()
	dctx, dcancel := context.WithTimeout(drains, g.cfg.Server.ShutdownTimeout)
	drainPush(dctx, g.agents, log)
	dcancel()
	for _, c := range g.closers {
		c()
	}
	g.gw.Close()
	for _, a := range g.agents {
		a.Close()
	}
}

// build makes a generation from cfg: verifiers, backends (resolving "auto"
// dialects from their cards) and first cards. The agents are built at once,
// each within its card.fetch_timeout, so that backends that hang or
// dribble their cards hold the start (or a reload) for the longest of those
// bounds, not for their sum; an agent whose card did not arrive starts
// unready, and its refresher keeps trying.
func (rt *runtime) build(ctx context.Context, cfg *Config) (*generation, error) {
	gctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	g := &generation{cfg: cfg, stop: stop}
	fail := func(err error) (*generation, error) {
		stop()
		for _, c := range g.closers {
			c()
		}
		for _, a := range g.agents {
			a.Close()
		}
		return nil, err
	}
	defer func() {
		if p := recover(); p != nil {
			_, _ = fail(nil) // what was made so far, then on to buildRecovered
			panic(p)
		}
	}()
	built := make([]builtAgent, len(cfg.Agents))
	var wg sync.WaitGroup
	for i, ac := range cfg.Agents {
		wg.Go(func() { built[i] = rt.buildAgent(ctx, gctx, cfg, ac) })
	}
	wg.Wait()
	var errs []error
	var panicked *agentPanic
	for _, b := range built {
		if b.closeVerifier != nil {
			g.closers = append(g.closers, b.closeVerifier)
		}
		if b.agent != nil {
			g.agents = append(g.agents, b.agent)
		}
		if b.err != nil {
			errs = append(errs, b.err)
		}
		if b.panicked != nil && panicked == nil {
			panicked = b.panicked
		}
	}
	if panicked != nil {
		panic(panicked)
	}
	if err := errors.Join(errs...); err != nil {
		return fail(err)
	}
	gw, err := proxy.NewGateway(g.agents)
	if err != nil {
		return fail(err)
	}
	g.gw = gw
	for _, a := range g.agents {
		g.refresh.Go(func() { a.RunCardRefresh(gctx) })
	}
	return g, nil
}

// newAgent is proxy.NewAgent; a test replaces it to make building an agent
// panic.
var newAgent = proxy.NewAgent

// builtAgent is what building one agent made: its agent and its verifier's
// Close, each nil when not made, or why it failed.
type builtAgent struct {
	agent         *proxy.Agent
	closeVerifier func()
	err           error
	panicked      *agentPanic
}

// agentPanic is a panic while building one agent, carried to build's
// goroutine (where buildRecovered can recover it) with the stack it
// happened on.
type agentPanic struct {
	agent string
	value any
	stack []byte
}

func (p *agentPanic) String() string { return fmt.Sprintf("agent %q: %v", p.agent, p.value) }

// buildAgent makes one agent of a generation of cfg whose refreshers run on
// gctx, and reads its first card. The reads at start (an "auto" dialect's,
// the first card) are bounded together by the agent's card.fetch_timeout;
// a first card that could not be read is logged, not an error.
func (rt *runtime) buildAgent(ctx, gctx context.Context, cfg *Config, ac proxy.AgentConfig) (b builtAgent) {
	defer func() {
		if p := recover(); p != nil {
			b.panicked = &agentPanic{agent: ac.Name, value: p, stack: debug.Stack()}
		}
	}()
	if ac.PublicURL == "" {
		ac.PublicURL = rt.scheme + "://" + advertised(rt.addr) + ac.Path
	}
	if ac.GRPCListen != "" {
		ac.GRPCPublicAddress = proxy.GRPCPublicAddress(ac, rt.grpcAddrs[ac.Name])
	}
	opts := proxy.Options{Logger: rt.log, Tasks: rt.tasks, Metrics: rt.metrics, Tracing: rt.tracing,
		ReadTimeout: cfg.Server.ReadTimeout, StreamWriteTimeout: cfg.Server.StreamWriteTimeout}
	if ac.Auth != nil {
		v, err := newVerifier(gctx, ac, jwksClient)
		if err != nil {
			b.err = err
			return b
		}
		opts.Verifier = v
		b.closeVerifier = v.Close
	}
	fetch, cancel := context.WithTimeout(ctx, ac.Card.FetchTimeout)
	defer cancel()
	a, err := newAgent(fetch, ac, opts)
	if err != nil {
		b.err = err
		return b
	}
	b.agent = a
	_ = a.RefreshCard(fetch) // logged inside; retried until a card arrives
	return b
}

// buildRecovered is build for a reload: a panic while building, a defect
// the config's validation missed, refuses the new config instead of ending
// the process that serves the old one.
func (rt *runtime) buildRecovered(ctx context.Context, cfg *Config) (g *generation, err error) {
	defer func() {
		if p := recover(); p != nil {
			g, err = nil, fmt.Errorf("building the new config panicked: %v", p)
			stack := debug.Stack()
			if ap, ok := p.(*agentPanic); ok {
				stack = ap.stack
			}
			rt.log.Error("panic while building a reloaded config", "panic", fmt.Sprint(p), "stack", string(stack))
		}
	}()
	return buildGeneration(rt, ctx, cfg)
}

// buildGeneration is build; a test replaces it to make a build panic.
var buildGeneration = (*runtime).build

// reload loads the config file again. A valid config takes over for new
// calls; an invalid one is refused, logged and counted, and the running
// one keeps serving.
func (rt *runtime) reload(ctx context.Context, path string) {
	err := func() error {
		cfg, err := loadConfig(path)
		if err != nil {
			return err
		}
		rt.mu.RLock()
		old := rt.cur.cfg
		rt.mu.RUnlock()
		if cfg.Listen != old.Listen || cfg.Admin != old.Admin || cfg.Server != old.Server || !reflect.DeepEqual(cfg.Store, old.Store) || !reflect.DeepEqual(cfg.Tracing, old.Tracing) {
			return errors.New("listen, admin, server, store and tracing settings change only with a restart")
		}
		if !sameGRPCListeners(old, cfg) {
			return errors.New("tls and the agents' grpc_listen settings (grpc_listen, grpc_tls, and path and max_body_bytes of an agent with grpc_listen) change only with a restart")
		}
		g, err := rt.buildRecovered(ctx, cfg)
		if err != nil {
			return err
		}
		rt.swap(g)
		if cfg.Log.Level != old.Log.Level {
			was := rt.level.Level()
			setLevel(rt.level, cfg.Log.Level)
			// At the higher of the two levels: shown whichever is set.
			rt.log.Log(ctx, max(was, rt.level.Level()), "log level changed", "from", old.Log.Level, "to", cfg.Log.Level)
		}
		return nil
	}()
	if err != nil {
		rt.reloads.WithLabelValues("failure").Inc()
		rt.log.Error("config reload refused; the running config keeps serving", "config", path, "error", err)
		return
	}
	rt.reloads.WithLabelValues("success").Inc()
	rt.log.Info("config reloaded", "config", path)
}

// watch reloads on SIGHUP and when the config file changes (Kubernetes
// swaps a ConfigMap's files by symlink, which changes what the path reads),
// or one of the secret files an agent is built with (secretFiles): a
// rotated Secret is taken up as an edited config is. last is the content
// the running config was read from: a change made after that read, even
// before watch runs, is a change.
func (rt *runtime) watch(ctx context.Context, path string, last []byte, hup <-chan os.Signal) {
	tick := time.NewTicker(configPollInterval)
	defer tick.Stop()
	rt.mu.RLock()
	secrets := readSecretFiles(rt.cur.cfg)
	rt.mu.RUnlock()
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			last, _ = readConfigFile(path)
			rt.reload(ctx, path)
			rt.renewCerts()
		case <-tick.C:
			rt.renewCerts()
			// A file too large to be a config is a change too, refused
			// and counted by the reload; one that cannot be read at all
			// (being replaced) is looked at again at the next tick.
			now, err := readConfigFile(path)
			if err != nil && now == nil {
				continue
			}
			rt.mu.RLock()
			nowSecrets := readSecretFiles(rt.cur.cfg)
			rt.mu.RUnlock()
			if string(now) == string(last) && maps.Equal(nowSecrets, secrets) {
				continue
			}
			last, secrets = now, nowSecrets
			rt.reload(ctx, path)
		}
	}
}

// secretFiles are the files the agents of cfg read secrets from when they
// are built: backend headers (their own and their skill routes') and
// JWT keys. Listener certificates are renewed apart (renewCerts), the
// Redis password is read at each connection, and tracing's headers change
// only with a restart.
func secretFiles(cfg *Config) []string {
	var files []string
	headers := func(hs []proxy.HeaderConfig) {
		for _, h := range hs {
			if h.ValueFile != "" {
				files = append(files, h.ValueFile)
			}
		}
	}
	for _, a := range cfg.Agents {
		headers(a.Backend.Headers)
		for _, r := range a.Skills.Routes {
			headers(r.Backend.Headers)
		}
		if a.Auth != nil {
			if a.Auth.HMACSecretFile != "" {
				files = append(files, a.Auth.HMACSecretFile)
			}
			files = append(files, a.Auth.PublicKeyFiles...)
		}
	}
	return files
}

// readSecretFiles is a digest of each secret file of cfg, by path (the
// watcher keeps no copy of a secret); a file that cannot be read maps to
// its error's text, so that its going and coming back are changes too.
func readSecretFiles(cfg *Config) map[string]string {
	m := map[string]string{}
	for _, f := range secretFiles(cfg) {
		b, err := os.ReadFile(f)
		if err != nil {
			m[f] = "error: " + err.Error()
			continue
		}
		sum := sha256.Sum256(b)
		m[f] = string(sum[:])
	}
	return m
}

// renewCerts serves the listeners' certificates anew where their files
// changed (new connections get them; open ones keep theirs).
func (rt *runtime) renewCerts() {
	for _, f := range rt.certs {
		switch changed, err := f.reload(); {
		case err != nil:
			rt.renewals.WithLabelValues(f.cert, "failure").Inc()
			rt.log.Error("a TLS certificate's files changed but do not load; the previous certificate is served", "error", err)
		case changed:
			rt.renewals.WithLabelValues(f.cert, "success").Inc()
			rt.log.Info("TLS certificate renewed from its files", "cert_file", f.cert, "key_file", f.key)
		}
	}
}

// serve runs the gateway until ctx ends, then shuts down gracefully: it stops
// accepting, lets in-flight calls finish (up to the shutdown timeout), and
// returns. path, when set, is the config file to watch for reloads. ready,
// when set, is told the traffic and admin addresses once they accept.
func serve(ctx context.Context, cfg *Config, path string, logOut io.Writer, ready func(addr, admin string)) error {
	level := new(slog.LevelVar)
	setLevel(level, cfg.Log.Level)
	log := slog.New(telemetry.LogHandler(newLogger(logOut, level).Handler()))
	redis.SetLogger(redisLogger{log})
	tracing, err := telemetry.Setup(ctx, cfg.Tracing, log)
	if err != nil {
		return err
	}
	// exitBy, once ctx has ended, is when the process is to be gone: the
	// shutdown timeout and the grace of the calls it ends. The spans'
	// last export keeps to it (what the drain left of it), so that a slow
	// collector cannot hold the exit past the bound an orchestrator's
	// grace period is sized from.
	var exitBy time.Time
	defer func() {
		tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.Server.ShutdownTimeout)
		if !exitBy.IsZero() {
			cancel()
			tctx, cancel = context.WithDeadline(context.WithoutCancel(ctx), exitBy)
		}
		defer cancel()
		if err := tracing.Shutdown(tctx); err != nil {
			log.Warn("tracing shutdown: spans not exported before the exit", "error", err)
		}
	}()
	listenerCreds, err := loadListenerTLS(cfg)
	if err != nil {
		return err
	}
	trafficTLS := listenerCreds.traffic
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return err
	}
	defer ln.Close()
	grpcListeners, err := openGRPCListeners(cfg, listenerCreds.grpc)
	if err != nil {
		return err
	}
	for _, l := range grpcListeners {
		defer l.ln.Close()
	}
	tasks, err := openStore(cfg.Store)
	if err != nil {
		return err
	}
	defer tasks.Close()
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	rt := &runtime{log: log, level: level, addr: ln.Addr().String(), tasks: tasks, registry: reg, metrics: proxy.NewMetrics(reg, tasks), pprof: cfg.Admin.Pprof,
		scheme: "http", grpcAddrs: grpcAddrs(grpcListeners), certs: listenerCreds.files}
	if trafficTLS != nil {
		rt.scheme = "https"
	}
	rt.reloads = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "a2a_gateway", Name: "config_reloads_total",
		Help: "Config reloads, by result (success, failure).",
	}, []string{"result"})
	rt.reloads.WithLabelValues("success")
	rt.reloads.WithLabelValues("failure")
	reg.MustRegister(rt.reloads)
	rt.tracing = tracing
	reg.MustRegister(tracing.Collector())
	rt.renewals = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "a2a_gateway", Name: "tls_certificate_renewals_total",
		Help: "Listener certificates read again after their files changed, by cert_file as configured and result (success, failure: the previous certificate is served on).",
	}, []string{"cert_file", "result"})
	for _, f := range rt.certs {
		rt.renewals.WithLabelValues(f.cert, "success")
		rt.renewals.WithLabelValues(f.cert, "failure")
	}
	if len(rt.certs) > 0 {
		reg.MustRegister(newCertExpiry(rt.certs), rt.renewals)
	}

	// The admin listener comes first: while the first config is built (its
	// backends' cards read, up to card.fetch_timeout) /healthz says the
	// process is alive and /readyz that it is starting, so that a liveness
	// probe does not kill a gateway waiting for a slow backend.
	var admin *http.Server
	adminAddr := ""
	if cfg.Admin.Listen != "" {
		aln, err := net.Listen("tcp", cfg.Admin.Listen)
		if err != nil {
			return fmt.Errorf("admin listener: %w", err)
		}
		admin = &http.Server{Handler: rt.adminHandler(), ReadHeaderTimeout: cfg.Server.ReadHeaderTimeout}
		go func() { _ = admin.Serve(aln) }()
		defer admin.Close() // when serving fails; an orderly stop shuts it down first
		adminAddr = aln.Addr().String()
		log.Info("admin listening", "addr", adminAddr)
	}

	rt.drains, rt.endDrains = context.WithCancel(context.WithoutCancel(ctx))
	defer rt.endDrains()
	g, err := rt.build(ctx, cfg)
	if err != nil {
		return err
	}
	rt.swap(g)
	stopped := false
	defer func() {
		rt.mu.RLock()
		cur := rt.cur
		rt.mu.RUnlock()
		cur.retire(rt.drains, log)
		by := exitBy
		if by.IsZero() { // serving failed: no drain had begun
			by = time.Now().Add(cfg.Server.ShutdownTimeout)
		}
		rt.awaitRetiring(by)
		// Logged after the card refreshers and push queues have ended, so that
		// it is the last line an orderly stop writes.
		if stopped {
			log.Info("stopped")
		}
	}()
	if path != "" {
		wctx, stopWatch := context.WithCancel(ctx)
		defer stopWatch()
		// Registered before serving, so a SIGHUP never meets the default
		// action (exit) once the gateway runs.
		hup := make(chan os.Signal, 1)
		signal.Notify(hup, syscall.SIGHUP)
		defer signal.Stop(hup)
		go rt.watch(wctx, path, cfg.source, hup)
	}

	// Calls still running when the shutdown timeout passes are canceled
	// rather than cut: each then ends its answer (an error, or a stream body
	// that ends cleanly) before its connection closes.
	calls, endCalls := context.WithCancelCause(context.WithoutCancel(ctx))
	defer endCalls(nil)
	srv := &http.Server{
		Handler:           rt,
		ReadHeaderTimeout: cfg.Server.ReadHeaderTimeout,
		IdleTimeout:       cfg.Server.IdleTimeout,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return calls },
		Protocols:         new(http.Protocols),
		HTTP2:             &http.HTTP2Config{MaxConcurrentStreams: cfg.Server.MaxConcurrentStreams},
	}
	// HTTP/2 next to HTTP/1.1, by ALPN over TLS, by prior knowledge (as
	// gRPC clients send it) without: the gRPC binding shares the traffic
	// listener.
	srv.Protocols.SetHTTP1(true)
	if trafficTLS != nil {
		srv.Protocols.SetHTTP2(true)
		srv.TLSConfig = trafficTLS
	} else {
		srv.Protocols.SetUnencryptedHTTP2(true)
	}
	rt.startGRPC(grpcListeners, calls)
	defer stopGRPCNow(grpcListeners) // after a graceful stop, or when serving fails
	serveErr := make(chan error, 1)
	go func() {
		if trafficTLS != nil {
			serveErr <- srv.ServeTLS(ln, "", "")
		} else {
			serveErr <- srv.Serve(ln)
		}
	}()
	log.Info("listening", "addr", rt.addr, "agents", len(cfg.Agents))
	if ready != nil {
		ready(rt.addr, adminAddr)
	}
	select {
	case err := <-serveErr:
		return err
	case <-ctx.Done():
	}
	exitBy = time.Now().Add(cfg.Server.ShutdownTimeout + endCallsGrace)
	rt.draining.Store(true)
	log.Info("shutting down: finishing in-flight calls", "timeout", cfg.Server.ShutdownTimeout.String())
	sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.Server.ShutdownTimeout)
	defer scancel()
	grpcStopped := stopGRPC(grpcListeners)
	err = srv.Shutdown(sctx)
	if admin != nil {
		_ = admin.Shutdown(sctx)
	}
	if err == nil {
		select {
		case <-grpcStopped:
		case <-sctx.Done():
			err = sctx.Err()
		}
	}
	rt.mu.RLock()
	agents := rt.cur.agents
	rt.mu.RUnlock()
	drainPush(sctx, agents, log)
	if errors.Is(err, context.DeadlineExceeded) {
		log.Warn("shutdown timeout passed: ending the remaining calls")
		endCalls(proxy.ErrShuttingDown)
		gctx, gcancel := context.WithTimeout(context.WithoutCancel(ctx), endCallsGrace)
		defer gcancel()
		httpErr := srv.Shutdown(gctx)
		select {
		case <-grpcStopped:
		case <-gctx.Done():
			httpErr = errors.Join(httpErr, gctx.Err())
		}
		if httpErr == nil {
			return nil
		}
		log.Warn("calls did not end in time: closing the remaining connections")
		stopGRPCNow(grpcListeners)
		return srv.Close()
	}
	stopped = true
	return err
}

// awaitRetiring waits for the generations reloads replaced to finish,
// until deadline: their queued push deliveries are then abandoned, logged
// and counted rather than lost unseen with the process.
func (rt *runtime) awaitRetiring(deadline time.Time) {
	done := make(chan struct{})
	go func() { rt.retiring.Wait(); close(done) }()
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-done:
		return
	case <-t.C:
	}
	rt.endDrains()
	select {
	case <-done:
	case <-time.After(endCallsGrace):
		rt.log.Warn("generations replaced by a reload did not finish before the exit")
	}
}

// drainPush sends the push deliveries the agents have queued, until ctx
// ends; the rest are abandoned, and counted in the log.
func drainPush(ctx context.Context, agents []*proxy.Agent, log *slog.Logger) {
	for _, a := range agents {
		if n, err := a.ClosePush(ctx); n > 0 || err != nil {
			log.Warn("push deliveries abandoned at shutdown", "agent", a.Config().Name, "abandoned", n)
		}
	}
}

// advertised turns a listen address into one a caller can dial.
func advertised(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "localhost"
	}
	return net.JoinHostPort(host, port)
}

// openStore opens the configured task index.
func openStore(cfg StoreConfig) (store.Store, error) {
	if cfg.Type == "redis" {
		return store.NewRedis(cfg.Redis)
	}
	return store.NewMemory(cfg.Memory), nil
}

// adminHandler serves /healthz (the process is alive), /readyz (config
// loaded, every backend's card read, task index reachable) and /metrics.
func (rt *runtime) adminHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(rt.registry, promhttp.HandlerOpts{Registry: rt.registry}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if rt.draining.Load() {
			http.Error(w, "shutting down: finishing in-flight calls, taking no new ones", http.StatusServiceUnavailable)
			return
		}
		var problems []string
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := rt.tasks.Ping(ctx); err != nil {
			problems = append(problems, fmt.Sprintf("task index unreachable: %v", err))
		}
		rt.mu.RLock()
		cur := rt.cur
		rt.mu.RUnlock()
		if cur == nil {
			problems = append(problems, "starting: the backends' cards are being read (within card.fetch_timeout)")
		} else {
			for _, a := range cur.agents {
				ready, err := a.CardStatus()
				switch {
				case !ready:
					problems = append(problems, fmt.Sprintf("agent %s: no card from the backend yet: %v", a.Config().Name, err))
				case err != nil:
					problems = append(problems, fmt.Sprintf("agent %s: backend unreachable, serving its last good card: %v", a.Config().Name, err))
				}
			}
		}
		if len(problems) > 0 {
			http.Error(w, strings.Join(problems, "\n"), http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, "ready\n")
	})
	if rt.pprof {
		mux.HandleFunc("GET /debug/pprof/", pprof.Index)
		mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	}
	return mux
}

// redisLogger sends go-redis's own messages (failed dials) to the log.
type redisLogger struct{ log *slog.Logger }

func (l redisLogger) Printf(_ context.Context, format string, v ...any) {
	l.log.Warn("redis: " + fmt.Sprintf(format, v...))
}
