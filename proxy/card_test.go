package proxy

import (
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/dialect"
)

// TestPublishedCards: every card form points at the gateway, never at the
// backend, whatever dialect the backend speaks.
func TestPublishedCards(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backendKind) {
		g := newGateway(t, b.handler(t, nil), b.version)
		backendHost := strings.TrimPrefix(g.backend.URL, "http://")
		for _, path := range []string{"/.well-known/agent.json", "/.well-known/agent-card.json"} {
			card := g.get(path)
			if strings.Contains(string(card), backendHost) {
				t.Fatalf("%s leaks the backend's address: %s", path, card)
			}
			if u := gjson.GetBytes(card, "url").Str; u != "http://gateway.test/" {
				t.Fatalf("%s url %q", path, u)
			}
		}
		if v := gjson.GetBytes(g.get("/.well-known/agent.json"), "protocolVersion").Str; v != "0.2.5" {
			t.Fatalf("agent.json is a 0.2.5 card, got protocolVersion %q", v)
		}
		hybrid := gjson.ParseBytes(g.get("/.well-known/agent-card.json"))
		if hybrid.Get(`supportedInterfaces.#(protocolVersion=="1.0").url`).Str != "http://gateway.test/" {
			t.Fatalf("agent-card.json lists no 1.0 JSONRPC interface at the gateway: %s", hybrid.Raw)
		}
		if hybrid.Get(`supportedInterfaces.#(protocolVersion=="0.3").url`).Str != "http://gateway.test/" {
			t.Fatalf("the card for a client naming no version lists no 0.3 JSONRPC interface: %s", hybrid.Raw)
		}
		// A client that names 1.0 gets a pure 1.0 card: 1.0 interfaces only.
		req, _ := http.NewRequest(http.MethodGet, strings.TrimSuffix(g.url, "/")+"/.well-known/agent-card.json", nil)
		req.Header.Set("A2A-Version", "1.0")
		_, body := roundTrip(t, req)
		v10 := gjson.ParseBytes(body)
		if got := v10.Get("supportedInterfaces.#.protocolVersion").Raw; got != `["1.0","1.0","1.0"]` {
			t.Fatalf("the 1.0 card's interface versions are %s, want 1.0 for each binding: %s", got, body)
		}
		// Every binding, JSON-RPC first (each SDK's default client picks
		// the first it has), gRPC at the listener's host:port.
		if got := v10.Get("supportedInterfaces.#.protocolBinding").Raw + v10.Get("supportedInterfaces.#.url").Raw; got != `["JSONRPC","HTTP+JSON","GRPC"]["http://gateway.test/","http://gateway.test/","gateway.test:80"]` {
			t.Fatalf("the 1.0 card's interfaces are %s: %s", got, body)
		}
		if v10.Get("protocolVersion").Exists() || v10.Get("url").Exists() {
			t.Fatalf("the 1.0 card carries 0.x fields: %s", body)
		}
	})
}

// TestExtendedCardEveryDialect: the extended card through 0.2.5 HTTP GET,
// 0.3 agent/getAuthenticatedExtendedCard and 1.0 GetExtendedAgentCard, for
// backends of both dialects; with auth on it needs a valid token.
func TestExtendedCardEveryDialect(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backendKind) {
		g := newAuthGateway(t, b)
		alice := g.as(token(t, "alice"))
		check := func(card gjson.Result) {
			t.Helper()
			if !strings.Contains(card.Get("skills.#.id").Raw, "admin") {
				t.Fatalf("not the extended card (no admin skill): %s", card.Raw)
			}
			if strings.Contains(card.Raw, strings.TrimPrefix(g.backend.URL, "http://")) {
				t.Fatalf("extended card leaks the backend's address: %s", card.Raw)
			}
		}
		check(mustResult(t, alice.call("1", "GetExtendedAgentCard", `{}`)))
		check(mustResult(t, alice.call("2", "agent/getAuthenticatedExtendedCard", `{}`)))
		req, _ := http.NewRequest(http.MethodGet, strings.TrimSuffix(g.url, "/")+"/agent/authenticatedExtendedCard", nil)
		if res, _ := roundTrip(t, req); res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("the 0.2.5 extended card without a token: HTTP %d, want 401", res.StatusCode)
		}
		req.Header.Set("Authorization", "Bearer "+token(t, "alice"))
		_, body := roundTrip(t, req)
		check(gjson.ParseBytes(body))
		status, _, body := g.post(rpc("GetExtendedAgentCard", `{}`), "A2A-Version", "1.0")
		if status != http.StatusUnauthorized {
			t.Fatalf("the extended card without a token: HTTP %d", status)
		}
		wantError(t, gjson.ParseBytes(body), dialect.V10, -31401)
	})
}
