package reliability

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/internal/agent10"
	"github.com/a2agate/gateway/legacyagent"
)

// Where the config publishes the two agents.
const (
	legacyPath = "/v03" // in front of the 0.2.5 agent
	modernPath = "/v10" // in front of the 1.0 agent
)

// backends are the two real agents a gateway fronts, each behind a recorder
// of the messages it received. "wait" tasks stay working until release.
type backends struct {
	legacy, modern *httptest.Server
	seen           *recorder
	hold           chan struct{}
	releaseOnce    sync.Once
}

func startBackends(t *testing.T) *backends {
	t.Helper()
	b := &backends{seen: newRecorder(), hold: make(chan struct{})}
	la := legacyagent.New(legacyagent.Options{Hold: b.hold})
	ma := agent10.New(agent10.Options{Hold: b.hold})
	b.legacy = httptest.NewServer(b.seen.wrap(la))
	b.modern = httptest.NewServer(b.seen.wrap(ma))
	t.Cleanup(func() {
		b.release()
		b.legacy.Close()
		b.modern.Close()
		la.Close()
		ma.Close()
	})
	return b
}

// release completes every "wait" task, now and from now on.
func (b *backends) release() { b.releaseOnce.Do(func() { close(b.hold) }) }

// recorder notes the first text of every message a backend receives.
type recorder struct {
	mu    sync.Mutex
	texts map[string]int
	// waits receives the text of every "wait" message as it arrives, so a
	// test knows those calls reached the backend.
	waits chan string
}

func newRecorder() *recorder {
	return &recorder{texts: map[string]int{}, waits: make(chan string, 4096)}
}

func (rec *recorder) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			if text := gjson.GetBytes(body, "params.message.parts.0.text").Str; text != "" {
				rec.mu.Lock()
				rec.texts[text]++
				rec.mu.Unlock()
				if strings.HasPrefix(text, "wait") {
					select {
					case rec.waits <- text:
					default:
					}
				}
			}
		}
		h.ServeHTTP(w, r)
	})
}

// received reports whether a message with this text reached a backend.
func (rec *recorder) received(text string) bool {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.texts[text] > 0
}

// awaitWaits waits until n "wait" messages reached the backends.
func (rec *recorder) awaitWaits(t *testing.T, n int, timeout time.Duration) {
	t.Helper()
	deadline := time.After(timeout)
	for i := 0; i < n; i++ {
		select {
		case <-rec.waits:
		case <-deadline:
			t.Fatalf("only %d of %d held calls reached the backends within %s", i, n, timeout)
		}
	}
}

// gwConfig is the part of a gateway config the tests vary.
type gwConfig struct {
	legacyURL, modernURL string
	cardName             string
	cardRefresh          time.Duration // 0: the default
	shutdownTimeout      time.Duration // 0: the default
	store                string        // the store section, YAML; "": memory with defaults
}

func (b *backends) config() gwConfig {
	return gwConfig{legacyURL: b.legacy.URL + "/", modernURL: b.modern.URL + "/", cardName: "Reliability"}
}

// yaml renders the config: a 0.2.5 agent at /v03 and a 1.0 agent at /v10,
// both listeners on free loopback ports.
func (c gwConfig) yaml() string {
	var b strings.Builder
	b.WriteString("listen: 127.0.0.1:0\nadmin:\n  listen: 127.0.0.1:0\n")
	if c.shutdownTimeout > 0 {
		fmt.Fprintf(&b, "server:\n  shutdown_timeout: %s\n", c.shutdownTimeout)
	}
	b.WriteString(c.store)
	b.WriteString("agents:\n")
	for _, a := range []struct{ name, path, url, dialect string }{
		{"legacy", legacyPath, c.legacyURL, "0.2.5"},
		{"modern", modernPath, c.modernURL, "1.0"},
	} {
		fmt.Fprintf(&b, "  - name: %s\n    path: %s\n    public_url: http://gateway.test%s\n", a.name, a.path, a.path)
		fmt.Fprintf(&b, "    backend:\n      url: %q\n      dialect: %q\n", a.url, a.dialect)
		// The agents list two skills; standard clients name none.
		b.WriteString("    skills:\n      default: work\n")
		fmt.Fprintf(&b, "    card:\n      name: %q\n", c.cardName)
		if c.cardRefresh > 0 {
			fmt.Fprintf(&b, "      refresh_interval: %s\n", c.cardRefresh)
		}
	}
	return b.String()
}
