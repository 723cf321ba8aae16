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

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/proxy"
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

	agents := make([]*proxy.Agent, 0, len(cfg.Agents))
	for _, ac := range cfg.Agents {
		if ac.PublicURL == "" {
			ac.PublicURL = "http://" + advertised(addr) + ac.Path
		}
		a, err := buildAgent(runCtx, ac, log)
		if err != nil {
			return err
		}
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
		admin = &http.Server{Handler: adminHandler(agents), ReadHeaderTimeout: cfg.Server.ReadHeaderTimeout}
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

// buildAgent resolves an agent's backend dialect and reads its card.
func buildAgent(ctx context.Context, ac proxy.AgentConfig, log *slog.Logger) (*proxy.Agent, error) {
	opts := proxy.Options{Logger: log}
	if ac.Backend.Dialect == dialect.VersionAuto {
		v, why, err := proxy.ResolveDialect(ctx, ac.Backend)
		if err != nil {
			return nil, fmt.Errorf("agent %q: %w", ac.Name, err)
		}
		log.Info("backend dialect chosen from its card", "agent", ac.Name, "dialect", string(v), "why", why)
		opts.BackendVersion = v
	}
	a, err := proxy.NewAgent(ac, opts)
	if err != nil {
		return nil, err
	}
	_ = a.RefreshCard(ctx) // logged inside; the last good card keeps serving
	return a, nil
}

func adminHandler(agents []*proxy.Agent) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		var problems []string
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
