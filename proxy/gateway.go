package proxy

import (
	"fmt"
	"net/http"
	"path"
	"strconv"
	"strings"

	"google.golang.org/grpc"

	grpcbind "github.com/a2agate/gateway/binding/grpc"
	"github.com/a2agate/gateway/binding/rest"
	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/normalize"
)

// Gateway routes requests to the published agents by path.
type Gateway struct {
	mux    *http.ServeMux
	agents []*Agent
	grpc   *grpc.Server // the gRPC binding, served over HTTP/2 next to the rest
	// grpcBound bounds the request message of a gRPC call served there.
	grpcBound grpcbind.RequestBound
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
		// The front ends of the other bindings call ServeRPC themselves,
		// whether the JSON-RPC binding is published or not.
		jsonrpc := http.HandlerFunc(a.ServeRPC)
		if !a.cfg.Serves(dialect.JSONRPC) {
			jsonrpc = a.serveJSONRPCNotPublished
		}
		if p == "" {
			g.mux.Handle("POST /{$}", jsonrpc)
		} else {
			// Cards publish the path as configured; serve it with and
			// without the trailing slash.
			g.mux.Handle("POST "+p, jsonrpc)
			g.mux.Handle("POST "+p+"/{$}", jsonrpc)
		}
		g.mux.HandleFunc("GET "+p+"/.well-known/agent.json", a.ServeCardV025)
		g.mux.HandleFunc("GET "+p+"/.well-known/agent-card.json", a.ServeCard)
		g.mux.HandleFunc("GET "+p+"/agent/authenticatedExtendedCard", a.ServeExtendedCardHTTP)
		// The backend's push deliveries: the relay's token, not a JWT.
		g.mux.HandleFunc("POST "+p+"/push/{relay}", a.ServePush)
		// Every other path below the agent's is its HTTP+JSON binding, which
		// parses the rest itself ("{id}:cancel" is no ServeMux wildcard).
		var below http.Handler
		if a.cfg.Serves(dialect.HTTPJSON) {
			opts := rest.Options{Prefix: p, MaxBodyBytes: a.cfg.MaxBodyBytes, ReadTimeout: a.readTimeout, Admit: a.AdmitEarly, Refused: a.restRefused}
			if a.verifier != nil {
				opts.Authenticate = a.refuseREST
			}
			h := rest.NewHandler(http.HandlerFunc(a.ServeRPC), opts)
			below = h
			// The routes' own patterns, matched exactly, unless one would
			// take an agent's path below this one from its subtree.
			if !onRoutesOf(agents, p) {
				for _, route := range rest.Routes() {
					g.mux.Handle(p+route, h)
				}
			}
		} else {
			below = rest.NotServed("agent " + strconv.Quote(a.cfg.Name) +
				" does not publish the HTTP+JSON binding: its bindings setting leaves http_json out")
		}
		g.mux.Handle(p+"/", below)
		if p != "" {
			// The path without its slash answers as with it: left to the
			// subtree, ServeMux would redirect it there with an HTML body,
			// which an API client shows as the answer or follows to this one.
			g.mux.Handle(p, below)
		}
	}
	if _, ok := seen[""]; !ok {
		g.mux.Handle("/", rest.NoAgent())
	}
	if g.grpc, g.grpcBound, err = grpcServer(agents); err != nil {
		return nil, err
	}
	return g, nil
}

// onRoutesOf reports whether an agent's path lies below p ("" is the root)
// on one of p's REST routes: its first segment below p begins a route.
func onRoutesOf(agents []*Agent, p string) bool {
	routes := rest.Routes()
	for _, a := range agents {
		rel, ok := strings.CutPrefix(strings.TrimSuffix(a.cfg.Path, "/"), p+"/")
		if !ok {
			continue
		}
		seg, _, _ := strings.Cut(rel, "/")
		for _, route := range routes {
			if first, _, _ := strings.Cut(route[1:], "/"); first == seg {
				return true
			}
		}
	}
	return false
}

func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if grpcbind.IsGRPC(r) {
		grpcbind.ServeHTTP(g.grpc, g.grpcBound, w, r)
		return
	}
	if p := r.URL.EscapedPath(); cleanPath(p) != p {
		g.refuseUncleanPath(w, r, p)
		return
	}
	g.mux.ServeHTTP(w, r)
}

// cleanPath is p as ServeMux routes it, net/http's cleanPath: path.Clean's
// form with a trailing slash kept. ServeMux redirects a request whose path
// is not already so (an empty segment, ".", "..", or no path at all). A
// clean path comes back as it is, without allocating.
func cleanPath(p string) string {
	if p == "" || p[0] != '/' {
		p = "/" + p
	}
	clean := path.Clean(p)
	if p[len(p)-1] == '/' && clean != "/" {
		if len(p) == len(clean)+1 && strings.HasPrefix(p, clean) {
			return p
		}
		return clean + "/"
	}
	return clean
}

// refuseUncleanPath answers a request whose path is not clean with a 404
// in its binding's form naming the clean path: JSON-RPC's for a POST to an
// agent's JSON-RPC endpoint, else the HTTP+JSON binding's Status.
// ServeMux would redirect it with an HTML body, which an API client shows
// as the answer or follows (a POST turned GET loses its body); nor is it
// served at its clean form, so that the path a proxy or filter in front of
// the gateway checked is the path served.
func (g *Gateway) refuseUncleanPath(w http.ResponseWriter, r *http.Request, p string) {
	clean := cleanPath(p)
	if len(p) > 128 {
		p = p[:128] + "…"
	}
	msg := "the path " + strconv.Quote(p) + " is not in canonical form (it has an empty segment, \".\" or \"..\"), which the gateway does not serve: send the request to " + strconv.Quote(clean)
	rel := clean
	for _, a := range g.agents {
		ap := strings.TrimSuffix(a.cfg.Path, "/")
		if below, ok := strings.CutPrefix(clean, ap); ok && (below == "" || below[0] == '/') && len(below) < len(rel) {
			rel = below
		}
	}
	if r.Method == http.MethodPost && (rel == "" || rel == "/") {
		writeJSON(w, http.StatusNotFound, errorResponse(guessDialect(nil, r), nil, normalize.Errorf(dialect.ErrMethodNotFound, "%s", msg)))
		return
	}
	rest.WriteNotFound(w, msg, strings.HasPrefix(rel, "/v1/"))
}

// Close releases the gRPC server (its channelz entry): call it once the
// gateway's calls have ended.
func (g *Gateway) Close() { g.grpc.Stop() }

// Agents returns the published agents.
func (g *Gateway) Agents() []*Agent { return g.agents }

// serveJSONRPCNotPublished answers a JSON-RPC call to an agent whose
// bindings leave jsonrpc out: 404, with a JSON-RPC error saying so.
func (a *Agent) serveJSONRPCNotPublished(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusNotFound, errorResponse(guessDialect(nil, r), nil, normalize.Errorf(dialect.ErrMethodNotFound,
		"agent %q does not publish the JSON-RPC binding: its bindings setting leaves jsonrpc out; its card lists the bindings it serves", a.cfg.Name)))
}
