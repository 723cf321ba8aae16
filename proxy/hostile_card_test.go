package proxy

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/agent10"
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

// TestCardRedirectToAnotherHost: a backend whose card redirects to
// another host (an internal service whose JSON the gateway would publish
// as the card, or a hostile one) is not followed there: the fetch fails
// naming where it was sent, the other host is never asked, and a redirect
// within the backend's own host is still followed.
func TestCardRedirectToAnotherHost(t *testing.T) {
	var asked atomic.Int32
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		asked.Add(1)
		_, _ = io.WriteString(w, `{"name":"internal","description":"what the internal service holds"}`)
	}))
	t.Cleanup(elsewhere.Close)
	// The same listener under another host name: a host the backend's URL
	// does not name.
	other := strings.Replace(elsewhere.URL, "127.0.0.1", "localhost", 1)
	var backend *httptest.Server
	backend = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/own/.well-known/agent-card.json":
			http.Redirect(w, r, backend.URL+"/card.json", http.StatusFound)
		case "/card.json":
			_, _ = io.WriteString(w, `{"name":"own","supportedInterfaces":[{"url":"`+backend.URL+`/","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`)
		default:
			http.Redirect(w, r, other+"/card.json", http.StatusFound)
		}
	}))
	t.Cleanup(backend.Close)
	client := &http.Client{}
	if card, _, err := FetchCard(context.Background(), client, backend.URL+"/own/"); err != nil || !strings.Contains(string(card), `"own"`) {
		t.Fatalf("a redirect within the backend's host: %s, %v", card, err)
	}
	_, _, err := FetchCard(context.Background(), client, backend.URL+"/")
	if err == nil || !strings.Contains(err.Error(), "another host") || !strings.Contains(err.Error(), "localhost") {
		t.Fatalf("a redirect to another host: %v", err)
	}
	if n := asked.Load(); n != 0 {
		t.Errorf("the other host was asked %d times", n)
	}
}

// dribblingCard is a backend that answers every card request with a body
// of one byte after another, never ending it, and tells on cut each time
// the gateway gives up on one.
func dribblingCard(t *testing.T, cut chan<- struct{}) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			_, _ = io.WriteString(w, " ")
			http.NewResponseController(w).Flush()
			select {
			case <-tick.C:
			case <-r.Context().Done():
				cut <- struct{}{}
				return
			}
		}
	}))
	t.Cleanup(s.Close)
	return s
}

// TestCardDribbledIsCutAtFetchTimeout: a backend that dribbles its card a
// byte at a time, so that no read ever waits long, is cut at
// card.fetch_timeout, the URLs tried after the first included, and the
// agent stays unready.
func TestCardDribbledIsCutAtFetchTimeout(t *testing.T) {
	cut := make(chan struct{}, 8)
	backend := dribblingCard(t, cut)
	cfg := AgentConfig{Name: "test", PublicURL: "http://gateway.test/", Backend: BackendConfig{URL: backend.URL + "/", Dialect: dialect.Version025},
		Card: CardConfig{FetchTimeout: 300 * time.Millisecond}}
	a := newValidAgent(t, cfg, Options{})
	done := make(chan error, 1)
	go func() { done <- a.RefreshCard(context.Background()) }()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("a dribbled card: %v, want the fetch timeout", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a card dribbled a byte at a time was read past 5s with card.fetch_timeout 300ms")
	}
	select {
	case <-cut:
	case <-time.After(5 * time.Second):
		t.Fatal("the backend's dribbled card was never cut")
	}
	if ready, _ := a.CardStatus(); ready {
		t.Fatal("an agent whose card never arrived is ready")
	}
}

// TestAutoDialectFromADribblingCardFailsInTime: an "auto" dialect read
// from a card the backend dribbles fails the agent at card.fetch_timeout.
func TestAutoDialectFromADribblingCardFailsInTime(t *testing.T) {
	backend := dribblingCard(t, make(chan struct{}, 8))
	cfg := AgentConfig{Name: "test", PublicURL: "http://gateway.test/", Backend: BackendConfig{URL: backend.URL + "/"},
		Card: CardConfig{FetchTimeout: 300 * time.Millisecond}}
	cfg.SetDefaults()
	done := make(chan error, 1)
	go func() {
		a, err := NewAgent(context.Background(), cfg, Options{})
		if err == nil {
			a.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "dialect auto") || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("an auto dialect from a dribbled card: %v, want the fetch timeout", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("an auto dialect was read from a dribbled card past 5s with card.fetch_timeout 300ms")
	}
}

// TestExtendedCardRedirectIsNotFollowed: a 0.2.5 backend answering its
// extended card's GET with a redirect to another host is refused with the
// status it sent, in every caller dialect and the 0.2.5 GET: the request
// carries the backend's own credentials (backend.headers) and, with
// forward_authorization, the caller's token, and what the other host
// answers would be published as the agent's extended card. The other host
// is never asked. Before, the GET followed the redirect like a browser.
func TestExtendedCardRedirectIsNotFollowed(t *testing.T) {
	var asked atomic.Int32
	var leaked atomic.Value
	other := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		leaked.Store(r.Header.Get("X-Backend-Key"))
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"name":"internal","description":"what the other host holds","url":"http://other/","version":"1","capabilities":{},"defaultInputModes":["text"],"defaultOutputModes":["text"],"skills":[]}`)
	}))
	other = strings.Replace(other, "127.0.0.1", "localhost", 1)
	for _, status := range []int{http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			back := hostileExtendedCard(t, func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, other+"/card.json", status)
			})
			t.Setenv("TEST_BACKEND_KEY", "backend-secret")
			g := newGateway(t, back, dialect.Version025, func(a *AgentConfig) {
				a.Backend.Headers = []HeaderConfig{{Name: "X-Backend-Key", ValueEnv: "TEST_BACKEND_KEY"}}
			})
			for _, c := range callers {
				method, _ := dialect.MethodName(c.d, dialect.GetExtendedCard)
				e := wantErrorSaying(t, g.call("1", method, `{}`), c.d, -32603, "HTTP "+strconv.Itoa(status))
				if strings.Contains(e.Raw, "internal") || strings.Contains(e.Raw, "localhost") {
					t.Fatalf("%s: %s", c.d, e.Raw)
				}
			}
			res, body := g.request(t, http.MethodGet, "/agent/authenticatedExtendedCard", "")
			if res.StatusCode != http.StatusBadGateway || strings.Contains(string(body), "internal") {
				t.Fatalf("0.2.5 GET: HTTP %d: %s", res.StatusCode, body)
			}
			if n := asked.Load(); n != 0 {
				t.Fatalf("the redirect was followed %d times, sending X-Backend-Key %q", n, leaked.Load())
			}
		})
	}
}

// TestCardRedirectsThatAreRefused: a card is read from the backend's own
// origin and never over plain http once asked over https: a redirect from
// https to http (even on the backend's host: the card, which "auto" takes
// the backend's dialect from and whose skills and capabilities are
// published, would cross the network where anyone on the path can rewrite
// it; the JWKS fetch has the same rule), or to another port of the host (on
// a sidecar's loopback, any other local service), fails the fetch, and the
// place redirected to is never asked. (An upgrade to https on its default
// port is no other service and is still followed; a test would need port
// 443.)
func TestCardRedirectsThatAreRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		tls  bool
		want string
	}{
		{"from https to plain http", true, "plain http"},
		{"to another port of the host", false, "another port"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var asked atomic.Int32
			target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				asked.Add(1)
				_, _ = io.WriteString(w, `{"name":"not the backend's card"}`)
			}))
			t.Cleanup(target.Close)
			origin := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, target.URL+"/card.json", http.StatusFound)
			}))
			if tc.tls {
				origin.StartTLS()
			} else {
				origin.Start()
			}
			t.Cleanup(origin.Close)
			_, _, err := FetchCard(context.Background(), origin.Client(), origin.URL+"/")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("a card redirected %s: %v", tc.name, err)
			}
			if n := asked.Load(); n != 0 {
				t.Errorf("the place redirected to was asked %d times", n)
			}
		})
	}
}

// TestExtendedCardTooLargeOverJSONRPC: a 0.3 or 1.0 backend's extended
// card (its JSON-RPC answer) is bounded as every card is, by maxCardBytes,
// not by the larger max_reply_bytes: before, a card of 2 MiB was parsed and
// rendered on every call that asked for it, where the 0.2.5 GET and the
// public card refuse it.
func TestExtendedCardTooLargeOverJSONRPC(t *testing.T) {
	modern := agent10.New(agent10.Options{})
	t.Cleanup(modern.Close)
	back := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			modern.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		req := gjson.ParseBytes(body)
		if req.Get("method").Str != "GetExtendedAgentCard" {
			r.Body = io.NopCloser(bytes.NewReader(body))
			modern.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+req.Get("id").Raw+`,"result":{"name":"big","description":"`+strings.Repeat("x", 2*maxCardBytes)+`","version":"1","supportedInterfaces":[{"url":"http://b/","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],"capabilities":{},"defaultInputModes":["text"],"defaultOutputModes":["text"],"skills":[]}}`)
	})
	g := newGateway(t, back, dialect.Version10)
	for _, c := range callers {
		method, _ := dialect.MethodName(c.d, dialect.GetExtendedCard)
		r := g.call("1", method, `{}`)
		if e := r.Get("error"); e.Get("code").Int() != -32006 || !strings.Contains(e.Get("message").Str, "larger than") {
			t.Fatalf("%s: an extended card of %d bytes: %.300s", c.d, 2*maxCardBytes, r.Raw)
		}
	}
}
