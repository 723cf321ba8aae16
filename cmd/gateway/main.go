// Command gateway is a dual-dialect A2A gateway: a reverse proxy that lets
// A2A 0.x and 1.0 callers use agents of either dialect.
//
//	gateway -config FILE                  serve the agents of a config file
//	gateway --listen ADDR --backend URL   serve one agent at / (sidecar mode)
//	gateway validate -config FILE         check a config file
//	gateway demo                          serve the bundled legacy agent
//	gateway version                       print the build's version
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	goruntime "runtime"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/proxy"
)

func main() {
	// The first signal starts the drain; a second one then meets the
	// default action and ends the process at once, so that an operator's
	// second Ctrl-C does not wait out server.shutdown_timeout. The handler
	// is reset before the drain starts, so no second signal is swallowed.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		<-sigs
		signal.Stop(sigs)
		cancel()
	}()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "gateway:", err)
		os.Exit(exitCode(err))
	}
}

// usageError is a command line the gateway cannot make sense of: exit
// status 2, as Go's flag package and most tools use, apart from 1 for a
// config or a start that failed, so that a script can tell a wrong
// invocation from a bad config.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

func exitCode(err error) int {
	if errors.As(err, new(usageError)) {
		return 2
	}
	return 1
}

// parseFlags parses args into fs: help asked for is no failure (the caller
// ends with status 0), and an argument that is no flag is refused rather
// than ignored (`validate -config a.yaml b.yaml` would check a alone).
func parseFlags(fs *flag.FlagSet, args []string) (help bool, err error) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return true, nil
		}
		return false, usageError{err}
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return false, usagef("%s: unexpected argument %q: every setting is a flag (-config FILE)", fs.Name(), fs.Arg(0))
	}
	return false, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		switch args[0] {
		case "validate":
			return validate(args[1:], stdout, stderr)
		case "demo":
			return demo(ctx, args[1:], stdout, stderr)
		case "version", "-version", "--version":
			if len(args) > 1 {
				return usagef("version: unexpected argument %q", args[1])
			}
			fmt.Fprintln(stdout, version())
			return nil
		}
	}
	return serveCommand(ctx, args, stderr)
}

// buildVersion is set by a build that has no VCS information to stamp,
// as the image's (its context leaves .git out): -ldflags "-X
// main.buildVersion=v1.2.3" (the Dockerfile's VERSION build argument).
var buildVersion string

// version is the build's module version, VCS revision and Go version, as
// the Go toolchain recorded them in the binary, or buildVersion.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "gateway " + cmp.Or(buildVersion, "(no build information)") + " " + goruntime.Version()
	}
	parts := []string{"gateway", cmp.Or(buildVersion, bi.Main.Version)}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = "+dirty"
			}
		}
	}
	if rev != "" {
		parts = append(parts, rev+modified)
	}
	return strings.Join(append(parts, bi.GoVersion), " ")
}

func validate(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("config", "", "the config file to check")
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	if *path == "" {
		return usagef("validate: -config FILE is required")
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
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `usage:
  gateway -config FILE                  serve the agents of a config file (reloaded on SIGHUP and when it changes)
  gateway --listen ADDR --backend URL   serve one agent at / (sidecar mode)
  gateway validate -config FILE         check a config file and the secrets it names; exit 1 if it is invalid
  gateway demo [--listen ADDR]          serve the bundled A2A 0.2.5 agent behind the gateway
  gateway version                       print the build's version

flags:
`)
		fs.PrintDefaults()
	}
	path := fs.String("config", "", "config file (YAML); see configs/")
	listen := fs.String("listen", "", "sidecar mode: traffic address, e.g. :8080")
	backendURL := fs.String("backend", "", "sidecar mode: the backend agent's JSON-RPC URL")
	backendDialect := fs.String("backend-dialect", string(dialect.VersionAuto), "sidecar mode: the backend's A2A version: auto, 0.2.5, 0.3 or 1.0")
	publicURL := fs.String("public-url", "", "sidecar mode: the URL callers reach the gateway at (default: derived from the listen address)")
	defaultSkill := fs.String("default-skill", "", "sidecar mode: the skill for messages that name none, when the backend's card lists several")
	adminListen := fs.String("admin-listen", "", "admin address for /healthz, /readyz and /metrics (default: off, or the config's)")
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	var cfg *Config
	switch {
	case *path != "" && *backendURL != "":
		return usagef("use either -config or --backend, not both")
	case *path != "":
		var err error
		if cfg, err = loadConfig(*path); err != nil {
			return err
		}
		if *listen != "" || *adminListen != "" {
			cfg.Listen = cmp.Or(*listen, cfg.Listen)
			cfg.Admin.Listen = cmp.Or(*adminListen, cfg.Admin.Listen)
			// The flags are checked as the file's values are (a port
			// taken twice, an address without a port).
			if err := cfg.validate(); err != nil {
				return fmt.Errorf("%s with the flags: %w", *path, err)
			}
		}
	case *backendURL != "":
		if *listen == "" {
			*listen = ":8080"
		}
		cfg = &Config{Listen: *listen, Admin: AdminConfig{Listen: *adminListen}, Agents: []proxy.AgentConfig{{
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
		return usagef("give -config FILE, or --backend URL for one agent (or run `gateway demo`)")
	}
	if !cfg.Admin.Pprof {
		// Nobody can read a heap profile: do not sample one. Its stack
		// table and records hold about a MiB under load. (Set here, once
		// per process: tests run serve side by side.)
		goruntime.MemProfileRate = 0
	}
	return serve(ctx, cfg, *path, stderr, nil)
}
