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
	"os"

	"github.com/a2agate/gateway/interop/harness"
	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

func main() {
	cmd := harness.Command{Name: "client", Client: "go-2.3.1", Transports: []string{"jsonrpc", "rest", "grpc"}}
	os.Exit(harness.SDK[*a2a.AgentCard, *a2aclient.Client]{Command: cmd, Resolve: resolve, FromCard: newClient, Adapt: adapt}.Main(registerScenarios))
}

// registerScenarios runs the harness's scenarios, which mirror
// interop/clients/scenarios.mjs and are shared with the 0.3 client, over
// a2a-go v2.3.1, and the 1.0 client's own ones, each in its place among
// them (names match clients/scenarios.mjs one to one).
func registerScenarios(shared *harness.Env[*a2a.AgentCard, *a2aclient.Client], r *harness.Runner) {
	e := &env{shared, bindingOf[shared.Transport]}
	suite := &harness.Suite{Module: e, Setup: e.Setup, Dialect: harness.Dialect10, Deviations: nativeDeviations, LostStreamError: e.lostStreamError}
	suite.Register(r)
	registerOwn(r, suite, e)
	r.Skip = e.skipReason
}

// bindingOf names the SDK binding of each -transport value.
var bindingOf = map[string]a2a.TransportProtocol{
	"jsonrpc": a2a.TransportProtocolJSONRPC,
	"rest":    a2a.TransportProtocolHTTPJSON,
	"grpc":    a2a.TransportProtocolGRPC,
}

// newClient builds the client from the card: it registers the SDK's
// transports and prefers the -transport binding. The JSON-RPC client
// registers JSON-RPC only, as before; the others register JSON-RPC too, so
// the preference (not a lone transport) makes the pick. gRPC dials the
// card's host:port in plain text (h2c), as the gateway's traffic listener
// serves it without TLS here.
func newClient(ctx context.Context, s harness.Setup, card *a2a.AgentCard) (*a2aclient.Client, error) {
	binding := bindingOf[s.Transport]
	opts := []a2aclient.FactoryOption{a2aclient.WithJSONRPCTransport(s.HTTPClient)}
	switch binding {
	case a2a.TransportProtocolHTTPJSON:
		opts = append(opts, a2aclient.WithRESTTransport(s.HTTPClient))
	case a2a.TransportProtocolGRPC:
		opts = append(opts, a2agrpc.WithGRPCTransport(grpc.WithTransportCredentials(insecure.NewCredentials())))
	}
	opts = append(opts, a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []a2a.TransportProtocol{binding}}))
	return a2aclient.NewFromCard(ctx, card, opts...)
}
