package harness

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"
)

// Command is one Go SDK client's command line.
type Command struct {
	// Name prefixes the usage errors.
	Name string
	// Client is the default -client label.
	Client string
	// Transports are the -transport values the SDK has, the first the
	// default; Missing says which it lacks, for the flag's help.
	Transports []string
	Missing    string
}

// Setup is what the command line tells a client's scenarios.
type Setup struct {
	BaseURL        string
	Backend        string // backend label, e.g. js-0.3 or go-2.3.1
	BackendDialect string
	// Direct: no gateway between client and backend.
	Direct bool
	// Transport is one of Command.Transports.
	Transport string
	// HTTPClient records every request it sends in Recorder.
	HTTPClient *http.Client
	Recorder   *RecordingTransport
}

// Main parses the command line, lets register add the scenarios to the
// runner (and set its Skip), runs them, and returns the exit code: 2 on a
// usage error, 1 when a scenario failed.
func (cmd Command) Main(register func(s Setup, r *Runner)) int {
	transports := strings.Join(cmd.Transports, ", ")
	var (
		baseURL        = flag.String("url", "", "base URL of the agent (the card is resolved under it)")
		clientName     = flag.String("client", cmd.Client, "client label for the result lines")
		backendName    = flag.String("backend", "", "backend label for the result lines")
		backendDialect = flag.String("backend-dialect", "", "dialect of the backend agent: 0.2.5, 0.3 or 1.0")
		only           = flag.String("only", "", "comma-separated scenario names to run")
		tag            = flag.String("tag", "", "extra label for the result lines")
		timeout        = flag.Duration("timeout", 20*time.Second, "per-scenario timeout")
		transport      = flag.String("transport", cmd.Transports[0], "SDK transport the client prefers: "+transports+cmd.Missing)
	)
	flag.Parse()
	if *baseURL == "" || *backendName == "" || *backendDialect == "" {
		fmt.Fprintf(os.Stderr, "%s: -url, -backend and -backend-dialect are required\n", cmd.Name)
		return 2
	}
	parsed, err := url.Parse(*baseURL)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: bad -url: %v\n", cmd.Name, err)
		return 2
	}
	if !slices.Contains(cmd.Transports, *transport) {
		fmt.Fprintf(os.Stderr, "%s: unknown -transport %q (%s)\n", cmd.Name, *transport, transports)
		return 2
	}

	recorder := &RecordingTransport{Base: http.DefaultTransport}
	label := func(name string) string {
		extra := ""
		if *tag != "" {
			extra = " " + *tag
		}
		return fmt.Sprintf("client=%s backend=%s%s scenario=%s", *clientName, *backendName, extra, name)
	}
	r := &Runner{Label: label, Timeout: *timeout, Recorder: recorder, Origin: parsed.Scheme + "://" + parsed.Host}
	if *only != "" {
		r.Only = strings.Split(*only, ",")
	}
	register(Setup{
		BaseURL:        *baseURL,
		Backend:        *backendName,
		BackendDialect: *backendDialect,
		Direct:         strings.Contains(*tag, "via=direct"),
		Transport:      *transport,
		HTTPClient:     &http.Client{Transport: recorder},
		Recorder:       recorder,
	}, r)
	if r.Run(context.Background()) > 0 {
		return 1
	}
	return 0
}
