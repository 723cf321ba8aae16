package proxy

import (
	"fmt"
	"net/http"
	"strings"

	"google.golang.org/grpc"

	grpcbind "github.com/a2agate/gateway/binding/grpc"
	"github.com/a2agate/gateway/binding/rest"
)

// Gateway routes requests to the published agents by path.
type Gateway struct {
	mux    *http.ServeMux
	agents []*Agent
	grpc   *grpc.Server // the gRPC binding, served over HTTP/2 next to the rest
}

// NewGateway mounts agents: each one's JSON-RPC endpoint at its path, its
// cards under {path}/.well-known/, and the 0.2.5 extended card at
// {path}/agent/authenticatedExtendedCard.
func NewGateway(agents []*Agent) (_ *Gateway, err error) {
	g := &Gateway{mux: http.NewServeMux(), agents: agents}
	// ServeMux panics on a pattern it cannot take; a validated config
	// never has one, and an unvalidated one gets an error, not a crash.
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("cannot serve the agents' paths: %v", p)
		}
	}()
	seen := map[string]string{}
	for _, a := range agents {
		p := strings.TrimSuffix(a.cfg.Path, "/")
		if prev, ok := seen[p]; ok {
			return nil, fmt.Errorf("agents %q and %q share the path %q", prev, a.cfg.Name, a.cfg.Path)
		}
		seen[p] = a.cfg.Name
		if p == "" {
			g.mux.HandleFunc("POST /{$}", a.ServeRPC)
		} else {
			// Cards publish the path as configured; serve it with and
			// without the trailing slash.
			g.mux.HandleFunc("POST "+p, a.ServeRPC)
			g.mux.HandleFunc("POST "+p+"/{$}", a.ServeRPC)
		}
		g.mux.HandleFunc("GET "+p+"/.well-known/agent.json", a.ServeCardV025)
		g.mux.HandleFunc("GET "+p+"/.well-known/agent-card.json", a.ServeCard)
		g.mux.HandleFunc("GET "+p+"/agent/authenticatedExtendedCard", a.ServeExtendedCardHTTP)
		// Every other path below the agent's is its HTTP+JSON binding, which
		// parses the rest itself ("{id}:cancel" is no ServeMux wildcard).
		g.mux.Handle(p+"/", rest.NewHandler(a.servedOver("http_json"), rest.Options{Prefix: p, MaxBodyBytes: a.cfg.MaxBodyBytes}))
	}
	g.grpc = grpcServer(agents)
	return g, nil
}

func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if grpcbind.IsGRPC(r) {
		g.grpc.ServeHTTP(w, r)
		return
	}
	g.mux.ServeHTTP(w, r)
}

// Close releases the gRPC server (its channelz entry): call it once the
// gateway's calls have ended.
func (g *Gateway) Close() { g.grpc.Stop() }

// Agents returns the published agents.
func (g *Gateway) Agents() []*Agent { return g.agents }
