package main

import (
	"context"
	"net/http"
	"os"

	"github.com/a2agate/gateway/interop/harness"
	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"
	"github.com/a2aproject/a2a-go/a2aclient/agentcard"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

func main() {
	cmd := harness.Command{Name: "goclient", Client: "go-0.3.3", Transports: []string{"jsonrpc", "grpc"}, Missing: " (a2a-go v0.3.3 has no REST client)"}
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
