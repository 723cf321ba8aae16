package proxy

import (
	"net"
	"net/http"
	"sync"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/normalize"
)

// callerCalls counts the calls each caller has in flight on one agent, so
// that no caller holds more than its share of the gateway's goroutines,
// buffers and backend connections (agents[].max_calls_per_caller). It
// holds a key only while its caller has a call in flight.
type callerCalls struct {
	limit int
	mu    sync.Mutex
	n     map[string]int
}

func newCallerCalls(limit int) *callerCalls {
	if limit <= 0 {
		limit = DefaultMaxCallsPerCaller
	}
	return &callerCalls{limit: limit, n: map[string]int{}}
}

// acquire counts one more call of key, unless key has limit in flight.
func (l *callerCalls) acquire(key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n[key] >= l.limit {
		return false
	}
	l.n[key]++
	return true
}

// release ends one call acquire counted.
func (l *callerCalls) release(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := l.n[key]; n > 1 {
		l.n[key] = n - 1
	} else {
		delete(l.n, key)
	}
}

// callerKey is who a call is counted against: the principal its token
// names, or without auth its remote address without the port, which
// a caller would otherwise change with every connection.
func callerKey(r *http.Request, c *call) string {
	if c.owner != "" {
		return c.owner
	}
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

// tooManyCalls is the answer to a caller past its bound.
func (a *Agent) tooManyCalls() *normalize.Error {
	return normalize.Errorf(dialect.ErrInternal, "this caller already has %d calls in flight on this agent, the most one caller may have at once "+
		"(agents[].max_calls_per_caller): wait for some to finish (or close streams it no longer reads), then retry", a.calls.limit)
}
