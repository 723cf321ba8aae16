package harness

import (
	"net/http"
	"net/url"
	"slices"
	"sync"
)

// RecordingTransport remembers every URL the SDK requested, so a scenario
// fails if a card made the client bypass the endpoint under test.
type RecordingTransport struct {
	Base http.RoundTripper
	mu   sync.Mutex
	urls []string
}

func (t *RecordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.mu.Lock()
	t.urls = append(t.urls, req.URL.String())
	t.mu.Unlock()
	return t.Base.RoundTrip(req)
}

// Requested returns the URLs requested since the last reset.
func (t *RecordingTransport) Requested() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.urls)
}

func (t *RecordingTransport) Reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.urls = nil
}

func (t *RecordingTransport) Foreign(origin string) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	for _, u := range t.urls {
		parsed, err := url.Parse(u)
		if err != nil || parsed.Scheme+"://"+parsed.Host != origin {
			out = append(out, u)
		}
	}
	return out
}
