// Command client drives the a2a-go v2.3.1 SDK client (1.0 dialect) through
// the interop scenarios against one A2A endpoint and prints one PASS or
// FAIL line per scenario, in the format interop/run.sh counts (and a SKIP
// line, which run.sh does not count, for a scenario the transport cannot
// express). The scenarios mirror interop/clients/scenarios.mjs.
//
// -transport picks the SDK transport the way an application does: the
// client factory gets the transport registered and the binding first in
// Config.PreferredTransports, and picks the card's interface for it.
//
// Usage:
//
//	client -url URL -client NAME -backend NAME -backend-dialect 0.2.5|0.3|1.0 [-transport jsonrpc|rest|grpc] [-only a,b] [-tag via=direct]
package main

import (
	"context"
	"net/http"
	"os"

	"github.com/a2agate/gateway/interop/harness"
	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

func main() {
	cmd := harness.Command{Name: "client", Client: "go-2.3.1", Transports: []string{"jsonrpc", "rest", "grpc"}}
	os.Exit(cmd.Main(func(s harness.Setup, r *harness.Runner) {
		binding := bindingOf[s.Transport]
		e := &env{Setup: s, binding: binding, dialer: &harness.Dialer[*a2a.AgentCard, *a2aclient.Client]{
			Resolve: func(ctx context.Context) (*a2a.AgentCard, error) {
				return agentcard.NewResolver(s.HTTPClient).Resolve(ctx, s.BaseURL)
			},
			FromCard: func(ctx context.Context, card *a2a.AgentCard) (*a2aclient.Client, error) {
				return a2aclient.NewFromCard(ctx, card, factoryOptions(binding, s.HTTPClient)...)
			},
		}}
		registerScenarios(r, e)
		r.Skip = e.skipReason
	}))
}

var bindingOf = map[string]a2a.TransportProtocol{
	"jsonrpc": a2a.TransportProtocolJSONRPC,
	"rest":    a2a.TransportProtocolHTTPJSON,
	"grpc":    a2a.TransportProtocolGRPC,
}

// factoryOptions registers the SDK's transports and prefers binding. The
// JSON-RPC client registers JSON-RPC only, as before; the others register
// JSON-RPC too, so the preference (not a lone transport) makes the pick.
// gRPC dials the card's host:port in plain text (h2c), as the gateway's
// traffic listener serves it without TLS here.
func factoryOptions(binding a2a.TransportProtocol, httpClient *http.Client) []a2aclient.FactoryOption {
	opts := []a2aclient.FactoryOption{a2aclient.WithJSONRPCTransport(httpClient)}
	switch binding {
	case a2a.TransportProtocolHTTPJSON:
		opts = append(opts, a2aclient.WithRESTTransport(httpClient))
	case a2a.TransportProtocolGRPC:
		opts = append(opts, a2agrpc.WithGRPCTransport(grpc.WithTransportCredentials(insecure.NewCredentials())))
	}
	return append(opts, a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []a2a.TransportProtocol{binding}}))
}
