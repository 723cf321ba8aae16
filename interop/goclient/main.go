package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"
	"github.com/a2aproject/a2a-go/a2aclient/agentcard"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

func main() {
	os.Exit(run())
}

func run() int {
	var (
		baseURL        = flag.String("url", "", "base URL of the agent (the card is resolved under it)")
		clientName     = flag.String("client", "go-0.3.3", "client label for the result lines")
		backendName    = flag.String("backend", "", "backend label for the result lines")
		backendDialect = flag.String("backend-dialect", "", "dialect of the backend agent: 0.2.5, 0.3 or 1.0")
		only           = flag.String("only", "", "comma-separated scenario names to run")
		tag            = flag.String("tag", "", "extra label for the result lines")
		timeout        = flag.Duration("timeout", 20*time.Second, "per-scenario timeout")
		transportName  = flag.String("transport", "jsonrpc", "SDK transport the client prefers: jsonrpc or grpc (a2a-go v0.3.3 has no REST client)")
	)
	flag.Parse()
	if *baseURL == "" || *backendName == "" || *backendDialect == "" {
		fmt.Fprintln(os.Stderr, "goclient: -url, -backend and -backend-dialect are required")
		return 2
	}
	parsed, err := url.Parse(*baseURL)
	if err != nil {
		fmt.Fprintf(os.Stderr, "goclient: bad -url: %v\n", err)
		return 2
	}
	binding, ok := bindingOf[*transportName]
	if !ok {
		fmt.Fprintf(os.Stderr, "goclient: unknown -transport %q (jsonrpc or grpc)\n", *transportName)
		return 2
	}

	recorder := &recordingTransport{Base: http.DefaultTransport}
	httpClient := &http.Client{Transport: recorder}
	env := &env{
		baseURL:        *baseURL,
		backend:        *backendName,
		backendDialect: *backendDialect,
		direct:         strings.Contains(*tag, "via=direct"),
		httpClient:     httpClient,
		binding:        binding,
		recorder:       recorder,
		connect: func(ctx context.Context) (*connection, error) {
			card, err := agentcard.NewResolver(httpClient).Resolve(ctx, *baseURL)
			if err != nil {
				return nil, fmt.Errorf("resolve card: %w", err)
			}
			client, err := a2aclient.NewFromCard(ctx, card, factoryOptions(binding, httpClient)...)
			if err != nil {
				return nil, fmt.Errorf("client from card: %w", err)
			}
			return &connection{card: card, client: client}, nil
		},
	}

	label := func(name string) string {
		extra := ""
		if *tag != "" {
			extra = " " + *tag
		}
		return fmt.Sprintf("client=%s backend=%s%s scenario=%s", *clientName, *backendName, extra, name)
	}
	r := &runner{Label: label, Timeout: *timeout, Recorder: recorder, Origin: parsed.Scheme + "://" + parsed.Host}
	if *only != "" {
		r.Only = strings.Split(*only, ",")
	}
	registerScenarios(r, env)
	r.Skip = env.skipReason
	if r.Run(context.Background()) > 0 {
		return 1
	}
	return 0
}

var bindingOf = map[string]a2a.TransportProtocol{
	"jsonrpc": a2a.TransportProtocolJSONRPC,
	"grpc":    a2a.TransportProtocolGRPC,
}

// factoryOptions registers the SDK's transports and prefers binding, the
// way an application picks one: the gRPC client registers JSON-RPC too,
// so Config.PreferredTransports (not a lone transport) makes the pick.
// gRPC dials the card's host:port in plain text (h2c), as the gateway's
// traffic listener serves it without TLS here.
func factoryOptions(binding a2a.TransportProtocol, httpClient *http.Client) []a2aclient.FactoryOption {
	opts := []a2aclient.FactoryOption{a2aclient.WithJSONRPCTransport(httpClient)}
	if binding == a2a.TransportProtocolGRPC {
		opts = append(opts, a2aclient.WithGRPCTransport(grpc.WithTransportCredentials(insecure.NewCredentials())))
	}
	return append(opts, a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []a2a.TransportProtocol{binding}}))
}
