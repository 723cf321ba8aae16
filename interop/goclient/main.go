package main

import (
	"context"
	"os"

	"github.com/a2agate/gateway/interop/harness"
	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

func main() {
	cmd := harness.Command{Name: "goclient", Client: "go-0.3.3", Transports: []string{"jsonrpc", "grpc"}, Missing: " (a2a-go v0.3.3 has no REST client)"}
	os.Exit(harness.SDK[*a2a.AgentCard, *a2aclient.Client]{Command: cmd, Resolve: resolve, FromCard: newClient, Adapt: adapt}.Main(registerScenarios))
}

// registerScenarios runs the harness's scenarios, which mirror
// interop/clients/scenarios.mjs and are shared with the 1.0 client, over
// a2a-go v0.3.3; it has no scenario of its own.
func registerScenarios(shared *harness.Env[*a2a.AgentCard, *a2aclient.Client], r *harness.Runner) {
	e := &env{shared, bindingOf[shared.Transport]}
	suite := &harness.Suite{Module: e, Setup: e.Setup, Dialect: harness.Dialect03, Deviations: nativeDeviations}
	suite.Register(r)
	r.Skip = e.skipReason
}

// bindingOf names the SDK binding of each -transport value.
var bindingOf = map[string]a2a.TransportProtocol{
	"jsonrpc": a2a.TransportProtocolJSONRPC,
	"grpc":    a2a.TransportProtocolGRPC,
}

// newClient builds the client from the card the way an application
// picks a transport: it registers the SDK's transports and prefers the
// -transport binding. The gRPC client registers JSON-RPC too, so
// Config.PreferredTransports (not a lone transport) makes the pick. gRPC
// dials the card's host:port in plain text (h2c), as the gateway's
// traffic listener serves it without TLS here.
func newClient(ctx context.Context, s harness.Setup, card *a2a.AgentCard) (*a2aclient.Client, error) {
	binding := bindingOf[s.Transport]
	opts := []a2aclient.FactoryOption{a2aclient.WithJSONRPCTransport(s.HTTPClient)}
	if binding == a2a.TransportProtocolGRPC {
		opts = append(opts, a2aclient.WithGRPCTransport(grpc.WithTransportCredentials(insecure.NewCredentials())))
	}
	opts = append(opts, a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []a2a.TransportProtocol{binding}}))
	return a2aclient.NewFromCard(ctx, card, opts...)
}
