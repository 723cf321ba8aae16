package legacyagent

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
	card := getCard(t, srv.URL+"/.well-known/agent.json")

	for key, want := range map[string]any{
		"protocolVersion":                   "0.2.5",
		"name":                              DefaultName,
		"url":                               srv.URL + "/",
		"preferredTransport":                "JSONRPC",
		"supportsAuthenticatedExtendedCard": true,
		"capabilities":                      obj{"streaming": true, "pushNotifications": true, "stateTransitionHistory": false},
		"defaultInputModes":                 []any{"text/plain", "application/json", "application/octet-stream"},
	} {
		wantJSON(t, key, path(t, card, key), want)
	}
	for _, key := range []string{"description", "version", "defaultOutputModes"} {
		path(t, card, key) // required by the 0.2.5 schema
	}
	wantJSON(t, "skill ids", skillIDs(t, card), []any{"answer", "work"})
	for _, s := range path(t, card, "skills").([]any) {
		for _, key := range []string{"name", "description", "tags"} {
			path(t, s, key) // required by the 0.2.5 schema
		}
	}
	for _, key := range []string{"supportedInterfaces", "additionalInterfaces"} {
		if _, ok := card[key]; ok {
			t.Errorf("0.2.5 card has %q", key)
		}
	}
}

func TestCardOptions(t *testing.T) {
	t.Parallel()
	_, srv := startAgent(t, Options{Name: "Desk", PublicURL: "https://desk.example/a2a"})
	card := getCard(t, srv.URL+"/.well-known/agent.json")
	if card["name"] != "Desk" || card["url"] != "https://desk.example/a2a" {
		t.Fatalf("name, url = %v, %v; want the options' values", card["name"], card["url"])
	}
}

func TestExtendedCard(t *testing.T) {
	t.Parallel()
	_, srv := startAgent(t, Options{})
	card := getCard(t, srv.URL+"/agent/authenticatedExtendedCard")
	wantJSON(t, "skill ids", skillIDs(t, card), []any{"answer", "work", "admin"})
	if card["protocolVersion"] != "0.2.5" || card["url"] != srv.URL+"/" {
		t.Fatalf("extended card protocolVersion, url = %v, %v", card["protocolVersion"], card["url"])
	}
}

func TestRoutes(t *testing.T) {
	t.Parallel()
	_, srv := startAgent(t, Options{})
	tests := []struct {
		method, path string
		want         int
	}{
		{http.MethodGet, "/", http.StatusMethodNotAllowed},
		{http.MethodPost, "/.well-known/agent.json", http.StatusMethodNotAllowed},
		{http.MethodGet, "/.well-known/agent-card.json", http.StatusNotFound},
		{http.MethodGet, "/nope", http.StatusNotFound},
		{http.MethodHead, "/.well-known/agent.json", http.StatusOK},
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
