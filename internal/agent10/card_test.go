package agent10

import (
	"encoding/json"
	"net/http"
	"testing"
)

func getCard(t *testing.T, url string) obj {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: status %d", url, resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("GET %s: Content-Type %q", url, ct)
	}
	var card obj
	if err := json.NewDecoder(resp.Body).Decode(&card); err != nil {
		t.Fatal(err)
	}
	return card
}

func skillIDs(t *testing.T, card obj) []any {
	t.Helper()
	var ids []any
	for _, s := range path(t, card, "skills").([]any) {
		ids = append(ids, path(t, s, "id"))
	}
	return ids
}

func TestCard(t *testing.T) {
	t.Parallel()
	_, srv := startAgent(t, Options{})
	// The card needs no A2A-Version header: clients fetch it to learn the
	// version in the first place.
	card := getCard(t, srv.URL+"/.well-known/agent-card.json")

	for key, want := range map[string]any{
		"name":                DefaultName,
		"supportedInterfaces": []any{obj{"url": srv.URL + "/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}},
		"capabilities":        obj{"streaming": true, "pushNotifications": true, "extendedAgentCard": true},
		"defaultInputModes":   []any{"text/plain", "application/json", "application/octet-stream"},
	} {
		wantJSON(t, key, path(t, card, key), want)
	}
	for _, key := range []string{"description", "version", "defaultOutputModes", "provider"} {
		path(t, card, key) // REQUIRED in the proto
	}
	wantJSON(t, "skill ids", skillIDs(t, card), []any{"answer", "work"})
	// 0.x card fields have no place in a 1.0 card.
	for _, key := range []string{"protocolVersion", "url", "preferredTransport", "supportsAuthenticatedExtendedCard", "additionalInterfaces"} {
		if _, ok := card[key]; ok {
			t.Errorf("1.0 card has the 0.x key %q", key)
		}
	}
}

func TestCardOptions(t *testing.T) {
	t.Parallel()
	_, srv := startAgent(t, Options{Name: "Desk", PublicURL: "https://desk.example/a2a"})
	card := getCard(t, srv.URL+"/.well-known/agent-card.json")
	if card["name"] != "Desk" || str(t, card, "supportedInterfaces", 0, "url") != "https://desk.example/a2a" {
		t.Fatalf("card = %v, want the options' name and url", card)
	}
}

func TestGetExtendedAgentCard(t *testing.T) {
	t.Parallel()
	_, srv := startAgent(t, Options{})
	for _, body := range []string{
		rpcRequest("GetExtendedAgentCard", obj{}),
		rpcRequest("GetExtendedAgentCard", obj{"tenant": "t1"}),
		`{"jsonrpc":"2.0","id":"req-1","method":"GetExtendedAgentCard"}`,
	} {
		out := rpcRaw(t, srv, body)
		card, ok := out["result"].(obj)
		if !ok {
			t.Fatalf("%s: %v", body, out)
		}
		wantJSON(t, "skill ids", skillIDs(t, card), []any{"answer", "work", "admin"})
		wantJSON(t, "interfaces", card["supportedInterfaces"], []any{obj{"url": srv.URL + "/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}})
	}
	wantCode(t, callErr(t, srv, "GetExtendedAgentCard", obj{"id": "x"}), codeInvalidParams)
}

func TestRoutes(t *testing.T) {
	t.Parallel()
	_, srv := startAgent(t, Options{})
	tests := []struct {
		method, path string
		want         int
	}{
		{http.MethodGet, "/", http.StatusMethodNotAllowed},
		{http.MethodPost, "/.well-known/agent-card.json", http.StatusMethodNotAllowed},
		{http.MethodGet, "/.well-known/agent.json", http.StatusNotFound},
		{http.MethodGet, "/agent/authenticatedExtendedCard", http.StatusNotFound},
		{http.MethodHead, "/.well-known/agent-card.json", http.StatusOK},
	}
	for _, tt := range tests {
		req, err := http.NewRequestWithContext(t.Context(), tt.method, srv.URL+tt.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("%s %s: status %d, want %d", tt.method, tt.path, resp.StatusCode, tt.want)
		}
	}
}
