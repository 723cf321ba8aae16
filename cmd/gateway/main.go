// Command gateway is a dual-dialect A2A gateway: a reverse proxy that lets
// A2A 0.x and 1.0 callers use agents of either dialect.
//
//	gateway -config FILE                  serve the agents of a config file
//	gateway --listen ADDR --backend URL   serve one agent at / (sidecar mode)
//	gateway validate -config FILE         check a config file
//	gateway demo                          serve the bundled legacy agent
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	goruntime "runtime"
	"syscall"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/proxy"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "gateway:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		switch args[0] {
		case "validate":
			return validate(args[1:], stdout, stderr)
		case "demo":
			return demo(ctx, args[1:], stdout, stderr)
		}
	}
	return serveCommand(ctx, args, stderr)
}

func validate(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("config", "", "the config file to check")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *path == "" {
		return errors.New("validate: -config FILE is required")
	}
	if err := validateFile(*path); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: ok\n", *path)
	return nil
}

// serveCommand runs the gateway from a config file or, for the sidecar
// case, from flags that publish one agent at /.
func serveCommand(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("gateway", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("config", "", "config file (YAML); see configs/")
	listen := fs.String("listen", "", "sidecar mode: traffic address, e.g. :8080")
	backendURL := fs.String("backend", "", "sidecar mode: the backend agent's JSON-RPC URL")
	backendDialect := fs.String("backend-dialect", string(dialect.VersionAuto), "sidecar mode: the backend's A2A version: auto, 0.2.5, 0.3 or 1.0")
	publicURL := fs.String("public-url", "", "sidecar mode: the URL callers reach the gateway at (default: derived from the listen address)")
	defaultSkill := fs.String("default-skill", "", "sidecar mode: the skill for messages that name none, when the backend's card lists several")
	adminListen := fs.String("admin-listen", "", "admin address for /healthz, /readyz and /metrics (default: off, or the config's)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var cfg *Config
	switch {
	case *path != "" && *backendURL != "":
		return errors.New("use either -config or --backend, not both")
	case *path != "":
		var err error
		if cfg, err = loadConfig(*path); err != nil {
			return err
		}
		if *listen != "" {
			cfg.Listen = *listen
		}
	case *backendURL != "":
		if *listen == "" {
			*listen = ":8080"
		}
		cfg = &Config{Listen: *listen, Agents: []proxy.AgentConfig{{
			Name: "agent", Path: "/", PublicURL: *publicURL,
			Backend: proxy.BackendConfig{URL: *backendURL, Dialect: dialect.Version(*backendDialect)},
			Skills:  proxy.SkillsConfig{Default: *defaultSkill},
		}}}
		cfg.setDefaults()
		if *publicURL == "" {
			cfg.Agents[0].PublicURL = "http://derived.invalid/" // replaced once the listener is up
		}
		if err := cfg.validate(); err != nil {
			return err
		}
		if *publicURL == "" {
			cfg.Agents[0].PublicURL = ""
		}
	default:
		fs.Usage()
		return errors.New("give -config FILE, or --backend URL for one agent (or run `gateway demo`)")
	}
	if *adminListen != "" {
		cfg.Admin.Listen = *adminListen
	}
	if !cfg.Admin.Pprof {
		// Nobody can read a heap profile: do not sample one. Its stack
		// table and records hold about a MiB under load. (Set here, once
		// per process: tests run serve side by side.)
		goruntime.MemProfileRate = 0
	}
	return serve(ctx, cfg, *path, stderr, nil)
}
