package proxy

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	grpcbind "github.com/a2agate/gateway/binding/grpc"
	"github.com/a2agate/gateway/dialect"
)

// grpcServer is the gRPC binding of the gateway's listener. A gRPC client
// dials host:port (a2a-go's transport takes the card's gRPC URL as a gRPC
// target), so there is no path to pick an agent by: the listener serves the
// agent at "/", or the only agent. With several agents and none at "/", every
// gRPC call is refused, saying so, as it is when that agent's bindings leave
// gRPC out or it has a grpc_listen of its own. The agent served, and each
// one with a grpc_listen, gets its cards to list the binding where it is.
func grpcServer(agents []*Agent) (*grpc.Server, grpcbind.RequestBound, error) {
	var none grpcbind.RequestBound
	var pick *Agent
	for _, a := range agents {
		if a.cfg.GRPCListen != "" {
			if err := a.publishGRPC(GRPCPublicAddress(a.cfg, "")); err != nil {
				return nil, none, fmt.Errorf("agent %q: listing its gRPC binding on its card: %w", a.cfg.Name, err)
			}
		}
		if strings.TrimSuffix(a.cfg.Path, "/") == "" {
			pick = a
		}
	}
	if pick == nil && len(agents) == 1 {
		pick = agents[0]
	}
	switch {
	case pick == nil:
		return grpcbind.Refusing(codes.Unimplemented, "this gateway publishes "+strconv.Itoa(len(agents))+
			" agents and none at \"/\": a gRPC call names no agent path, so the gRPC binding serves the agent at \"/\" or a gateway's only agent"), none, nil
	case !pick.cfg.Serves(dialect.GRPC):
		return grpcbind.Refusing(codes.Unimplemented, "agent "+strconv.Quote(pick.cfg.Name)+
			" does not publish the gRPC binding: its bindings setting leaves grpc out"), none, nil
	case pick.cfg.GRPCListen != "":
		return grpcbind.Refusing(codes.Unimplemented, "agent "+strconv.Quote(pick.cfg.Name)+
			" serves its gRPC binding on its own listener, "+GRPCPublicAddress(pick.cfg, "")+" (its card lists it)"), none, nil
	}
	if err := pick.publishGRPC(grpcTarget(pick.cfg.PublicURL)); err != nil {
		return nil, none, fmt.Errorf("agent %q: listing its gRPC binding on its card: %w", pick.cfg.Name, err)
	}
	opts := grpcbind.Options{Path: pick.cfg.Path, MaxMessageBytes: pick.cfg.MaxBodyBytes, MaxEventBytes: grpcEventBytes(pick.cfg), Refused: pick.GRPCRefused}
	if pick.verifier != nil {
		opts.Authenticate = http.HandlerFunc(pick.RefuseUnauthenticated)
	}
	return grpcbind.New(http.HandlerFunc(pick.ServeRPC), opts), grpcbind.RequestBound{Timeout: pick.readTimeout, MaxMessageBytes: pick.cfg.MaxBodyBytes, Admit: pick.AdmitEarly}, nil
}

// NewGRPCListenerServer is the gRPC server of an agent's grpc_listen, which
// serves it with Serve on that listener: rpc is the agent's JSON-RPC
// endpoint and refuse its check of the caller of a call the binding
// refuses itself (Agent.RefuseUnauthenticated), admit its count of a call
// against its caller's bound before its message is read
// (Agent.AdmitEarly), refused its count and log of a call the binding
// refuses (Agent.GRPCRefused), maxStreams the calls a
// connection may have open at once (0: DefaultMaxConcurrentStreams),
// readTimeout the bound on a call's request message arriving
// (server.read_timeout, 0: none), idleTimeout the time a connection
// without calls is kept (server.idle_timeout, 0: for ever), opts its
// credentials.
func NewGRPCListenerServer(rpc, refuse http.Handler, admit func(*http.Request) (*http.Request, func(), bool), refused FrontEndRefusals, cfg AgentConfig, maxStreams uint32, readTimeout, idleTimeout time.Duration, opts ...grpc.ServerOption) *grpc.Server {
	return grpcbind.New(rpc, grpcbind.Options{Path: cfg.Path, MaxMessageBytes: cfg.MaxBodyBytes, MaxEventBytes: grpcEventBytes(cfg), MaxConcurrentStreams: maxStreams,
		ReadTimeout: readTimeout, IdleTimeout: idleTimeout, ServerOptions: opts, Authenticate: refuse, Admit: admit, Refused: refused})
}

// FrontEndRefusals is told of a gRPC call the binding refused before the
// core saw it (Agent.GRPCRefused).
type FrontEndRefusals = func(ctx context.Context, start time.Time, caller dialect.ID, op dialect.Op, kind dialect.ErrorKind)

// GRPCRefused is the gRPC front end's Options.Refused: it counts and logs
// the call as FrontEndRefused does.
func (a *Agent) GRPCRefused(ctx context.Context, start time.Time, caller dialect.ID, op dialect.Op, kind dialect.ErrorKind) {
	a.FrontEndRefused(ctx, start, dialect.GRPC, caller, op, kind)
}

// grpcEventBytes bounds an event of the agent's stream as the gRPC
// binding reads it from the core: the largest the core relays (a
// backend's event, max_event_bytes, or a task it read, max_reply_bytes)
// as translated for the caller, which may be more than twice as long (a
// 1.0 part of a few bytes gains a 0.x kind member), with room for the
// envelope. A fixed bound refused the events an agent's larger limits
// let through.
func grpcEventBytes(cfg AgentConfig) int64 {
	return 4*max(int64(cfg.MaxEventBytes), cfg.MaxReplyBytes) + 64<<10
}

// GRPCPublicAddress is the host:port the cards list for an agent's
// grpc_listen: grpc_public_address, or public_url's host with the port of
// bound (the listener's address once it listens; cfg.GRPCListen before).
func GRPCPublicAddress(cfg AgentConfig, bound string) string {
	if cfg.GRPCPublicAddress != "" {
		return cfg.GRPCPublicAddress
	}
	if bound == "" {
		bound = cfg.GRPCListen
	}
	host := "localhost"
	if u, err := url.Parse(cfg.PublicURL); err == nil && u.Hostname() != "" {
		host = u.Hostname()
	}
	_, port, err := net.SplitHostPort(bound)
	if err != nil {
		return ""
	}
	return net.JoinHostPort(host, port)
}
