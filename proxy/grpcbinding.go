package proxy

import (
	"strconv"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	grpcbind "github.com/a2agate/gateway/binding/grpc"
)

// grpcServer is the gRPC binding of the gateway's listener. A gRPC client
// dials host:port (a2a-go's transport takes the card's gRPC URL as a gRPC
// target), so there is no path to pick an agent by: the listener serves the
// agent at "/", or the only agent. With several agents and none at "/", every
// gRPC call is refused, saying so.
func grpcServer(agents []*Agent) *grpc.Server {
	var pick *Agent
	for _, a := range agents {
		if strings.TrimSuffix(a.cfg.Path, "/") == "" {
			pick = a
		}
	}
	if pick == nil && len(agents) == 1 {
		pick = agents[0]
	}
	if pick == nil {
		return grpcbind.Refusing(codes.Unimplemented, "this gateway publishes "+strconv.Itoa(len(agents))+
			" agents and none at \"/\": a gRPC call names no agent path, so the gRPC binding serves the agent at \"/\" or a gateway's only agent")
	}
	return grpcbind.New(pick.servedOver("grpc"), grpcbind.Options{Path: pick.cfg.Path, MaxMessageBytes: pick.cfg.MaxBodyBytes})
}
