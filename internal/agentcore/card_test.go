package agentcore_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/a2agate/gateway/internal/agentcore"
	"github.com/a2agate/gateway/internal/agenttest"
)

// TestCard checks the default card of each dialect. It needs no A2A-Version
// header: 1.0 clients fetch it to learn the version in the first place.
func TestCard(t *testing.T) {
	forEachAgent(t, func(t *testing.T, d dialect, srv *httptest.Server) {
		card := agenttest.GetJSON(t, srv.URL+d.cardPath)
		for key, want := range d.card(srv.URL + "/") {
			agenttest.WantJSON(t, key, agenttest.Path(t, card, key), want)
		}
		for _, key := range d.cardRequired {
			agenttest.Path(t, card, key)
		}
		for _, key := range d.cardForeign {
			if _, ok := card[key]; ok {
				t.Errorf("%s card has the other dialect's key %q", d.name, key)
			}
		}
	})
}

func TestCardOptions(t *testing.T) {
	forEach(t, func(t *testing.T, d dialect) {
		_, srv := d.start(t, agentcore.Options{Name: "Desk", PublicURL: "https://desk.example/a2a"})
		card := agenttest.GetJSON(t, srv.URL+d.cardPath)
		if card["name"] != "Desk" || d.cardURL(t, card) != "https://desk.example/a2a" {
			t.Fatalf("card = %v, want the options' name and url", card)
		}
		// Without a PublicURL the card names the host it was fetched from.
		_, srv = d.start(t, agentcore.Options{})
		if got := d.cardURL(t, agenttest.GetJSON(t, srv.URL+d.cardPath)); got != srv.URL+"/" {
			t.Fatalf("card url = %q, want %s/", got, srv.URL)
		}
	})
}

func TestSkills(t *testing.T) {
	forEachAgent(t, func(t *testing.T, d dialect, srv *httptest.Server) {
		card := agenttest.GetJSON(t, srv.URL+d.cardPath)
		agenttest.WantJSON(t, "skill ids", agenttest.SkillIDs(t, card), []any{"answer", "work"})
		for _, s := range agenttest.Path(t, card, "skills").([]any) {
			for _, key := range []string{"name", "description", "tags"} {
				agenttest.Path(t, s, key) // required in both dialects
			}
		}
	})
}

func TestRoutes(t *testing.T) {
	forEachAgent(t, func(t *testing.T, d dialect, srv *httptest.Server) {
		tests := []struct {
			method, path string
			want         int
		}{
			{http.MethodGet, "/", http.StatusMethodNotAllowed},
			{http.MethodPost, d.cardPath, http.StatusMethodNotAllowed},
			{http.MethodGet, "/nope", http.StatusNotFound},
			{http.MethodHead, d.cardPath, http.StatusOK},
		}
		for _, p := range d.otherPaths {
			tests = append(tests, struct {
				method, path string
				want         int
			}{http.MethodGet, p, http.StatusNotFound})
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
	})
}
