package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/a2agate/gateway/auth"
	"github.com/a2agate/gateway/proxy"
	"github.com/a2agate/gateway/store"
)

func newLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	_ = l.UnmarshalText([]byte(level)) // validated with the config
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l}))
}

// serve runs the gateway until ctx ends, then shuts down gracefully: it stops
// accepting, lets in-flight calls finish (up to the shutdown timeout), and
// returns. ready, when set, is told the traffic address once it accepts.
func serve(ctx context.Context, cfg *Config, logOut io.Writer, ready func(addr string)) error {
	log := newLogger(logOut, cfg.Log.Level)
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return err
	}
	defer ln.Close()
	addr := ln.Addr().String()
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()

	tasks, err := openStore(cfg.Store)
	if err != nil {
		return err
	}
	defer tasks.Close()
	agents := make([]*proxy.Agent, 0, len(cfg.Agents))
	for _, ac := range cfg.Agents {
		if ac.PublicURL == "" {
			ac.PublicURL = "http://" + advertised(addr) + ac.Path
		}
		a, closeAgent, err := buildAgent(runCtx, ac, tasks, log)
		if err != nil {
			return err
		}
		defer closeAgent()
		agents = append(agents, a)
	}
	gw, err := proxy.NewGateway(agents)
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	for _, a := range agents {
		wg.Go(func() { a.RunCardRefresh(runCtx) })
	}
	defer wg.Wait()
	defer cancel()

	srv := &http.Server{
		Handler:           gw,
		ReadHeaderTimeout: cfg.Server.ReadHeaderTimeout,
		IdleTimeout:       cfg.Server.IdleTimeout,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	var admin *http.Server
	if cfg.Admin.Listen != "" {
		aln, err := net.Listen("tcp", cfg.Admin.Listen)
		if err != nil {
			return fmt.Errorf("admin listener: %w", err)
		}
		admin = &http.Server{Handler: adminHandler(agents, tasks), ReadHeaderTimeout: cfg.Server.ReadHeaderTimeout}
		go func() { _ = admin.Serve(aln) }()
		log.Info("admin listening", "addr", aln.Addr().String())
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	log.Info("listening", "addr", addr, "agents", len(agents))
	if ready != nil {
		ready(addr)
	}
	select {
	case err := <-serveErr:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down: finishing in-flight calls", "timeout", cfg.Server.ShutdownTimeout.String())
	sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.Server.ShutdownTimeout)
	defer scancel()
	err = srv.Shutdown(sctx)
	if admin != nil {
		_ = admin.Shutdown(sctx)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		log.Warn("shutdown timeout passed: closing the remaining connections")
		return srv.Close()
	}
	log.Info("stopped")
	return err
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

// buildAgent builds one published agent: its token verifier, its backends
// (resolving "auto" dialects from their cards) and its first card.
func buildAgent(ctx context.Context, ac proxy.AgentConfig, tasks store.Store, log *slog.Logger) (*proxy.Agent, func(), error) {
	opts := proxy.Options{Logger: log, Tasks: tasks}
	closeFn := func() {}
	if ac.Auth != nil {
		v, err := auth.New(ctx, *ac.Auth, ac.PublicURL, &http.Client{Timeout: 10 * time.Second})
		if err != nil {
			return nil, nil, fmt.Errorf("agent %q auth: %w", ac.Name, err)
		}
		opts.Verifier, closeFn = v, v.Close
	}
	a, err := proxy.NewAgent(ctx, ac, opts)
	if err != nil {
		closeFn()
		return nil, nil, err
	}
	_ = a.RefreshCard(ctx) // logged inside; the last good card keeps serving
	return a, closeFn, nil
}

// openStore opens the configured task index.
func openStore(cfg StoreConfig) (store.Store, error) {
	if cfg.Type == "redis" {
		return store.NewRedis(cfg.Redis)
	}
	return store.NewMemory(cfg.Memory), nil
}

func adminHandler(agents []*proxy.Agent, tasks store.Store) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		var problems []string
		if err := tasks.Ping(r.Context()); err != nil {
			problems = append(problems, fmt.Sprintf("task index unreachable: %v", err))
		}
		for _, a := range agents {
			ready, err := a.CardStatus()
			switch {
			case !ready:
				problems = append(problems, fmt.Sprintf("agent %s: no card from the backend yet: %v", a.Config().Name, err))
			case err != nil:
				problems = append(problems, fmt.Sprintf("agent %s: backend card refresh failing (serving the last good card): %v", a.Config().Name, err))
			}
		}
		if len(problems) > 0 {
			http.Error(w, strings.Join(problems, "\n"), http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, "ready\n")
	})
	return mux
}
