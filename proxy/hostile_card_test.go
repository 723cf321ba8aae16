package proxy

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/legacyagent"
)

// hostileExtendedCard is the bundled 0.2.5 agent with its extended card
// served by serve instead.
func hostileExtendedCard(t *testing.T, serve http.HandlerFunc) http.Handler {
	a := legacyagent.New(legacyagent.Options{})
	t.Cleanup(a.Close)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/agent/authenticatedExtendedCard") {
			serve(w, r)
			return
		}
		a.ServeHTTP(w, r)
	})
}

// TestExtendedCardFromAStallingBackend: a 0.2.5 backend that sends its
// extended card's head and then nothing is cut at response_timeout, as
// every unary reply is, and the caller is told so, in its dialect.
func TestExtendedCardFromAStallingBackend(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	back := hostileExtendedCard(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"name":"x",`)
		http.NewResponseController(w).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	g := newGateway(t, back, dialect.Version025, func(a *AgentConfig) {
		a.Backend.ResponseHeaderTimeout = 50 * time.Millisecond
		a.Backend.ResponseTimeout = 100 * time.Millisecond
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, c := range callers {
			method, _ := dialect.MethodName(c.d, dialect.GetExtendedCard)
			r := g.call("1", method, `{}`)
			wantErrorSaying(t, r, c.d, -32603, "response_timeout")
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the extended card call waited past 10s on a backend that stalls mid-card")
	}
}

// TestExtendedCardTooLarge: a 0.2.5 backend's extended card over the
// gateway's card limit is refused saying it is too large, not read cut
// short and reported as not JSON.
func TestExtendedCardTooLarge(t *testing.T) {
	back := hostileExtendedCard(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"name":"`+strings.Repeat("x", maxCardBytes)+`"}`)
	})
	g := newGateway(t, back, dialect.Version025)
	for _, c := range callers {
		method, _ := dialect.MethodName(c.d, dialect.GetExtendedCard)
		wantErrorSaying(t, g.call("1", method, `{}`), c.d, -32006, "larger than")
	}
}
