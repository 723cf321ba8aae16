package proxy

import (
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/testlog"
)

// TestCardUnsafeURLsDropped: a backend card's javascript: and file: URLs
// are in no published card, and the gateway logs which fields it dropped.
func TestCardUnsafeURLsDropped(t *testing.T) {
	card := `{"name":"Evil","description":"d","version":"1","protocolVersion":"0.3.0","url":"http://backend/",
		"capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[],
		"iconUrl":"javascript:alert(document.cookie)","documentationUrl":"file:///etc/passwd",
		"provider":{"organization":"Evil Org","url":"javascript:alert(1)"}}`
	backend := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/agent-card.json") {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, card)
			return
		}
		http.NotFound(w, r)
	})
	var logs testlog.Buffer
	g := newGatewayOpts(t, backend, dialect.Version03, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	for _, path := range []string{"/.well-known/agent.json", "/.well-known/agent-card.json", "/.well-known/agent-card.json?A2A-Version=1.0", "/.well-known/agent-card.json?A2A-Version=0.3"} {
		out := g.get(path)
		if strings.Contains(string(out), "javascript:") || strings.Contains(string(out), "file:") {
			t.Fatalf("%s publishes an unsafe URL: %s", path, out)
		}
		if org := gjson.GetBytes(out, "provider.organization").Str; org != "Evil Org" {
			t.Fatalf("%s lost the provider's organization: %s", path, out)
		}
	}
	if l := logs.String(); !strings.Contains(l, "not http or https URLs") || !strings.Contains(l, "iconUrl") || !strings.Contains(l, "provider.url") {
		t.Fatalf("the dropped fields are not logged: %s", l)
	}
}
