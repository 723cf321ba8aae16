package proxy

import (
	"context"
	"net/http"
	"net/netip"
	"strings"
	"sync"

	"github.com/a2agate/gateway/auth"
	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/normalize"
)

// callerCalls counts the calls each caller has in flight on one agent, so
// that no caller holds more than its share of the gateway's goroutines,
// buffers and backend connections (agents[].max_calls_per_caller). It
// holds a key only while its caller has a call in flight.
type callerCalls struct {
	limit   int
	trusted []netip.Prefix
	mu      sync.Mutex
	n       map[string]int
}

func newCallerCalls(limit int, trusted []netip.Prefix) *callerCalls {
	if limit <= 0 {
		limit = DefaultMaxCallsPerCaller
	}
	return &callerCalls{limit: limit, trusted: trusted, n: map[string]int{}}
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
// names, or without auth its address (callerAddress) without the port,
// which a caller would otherwise change with every connection. An IPv6
// caller is counted by its /64, the least a host is given: it could
// otherwise take a new address for every call.
func (l *callerCalls) callerKey(r *http.Request, c *call) string {
	return l.callerKeyOf(r, c.owner)
}

// callerKeyOf is callerKey of a caller whose principal is owner ("" for
// none).
func (l *callerCalls) callerKeyOf(r *http.Request, owner string) string {
	if owner != "" {
		return owner
	}
	addr, ok := l.callerAddress(r)
	if !ok {
		return r.RemoteAddr
	}
	if addr.Is6() {
		return netip.PrefixFrom(addr, 64).Masked().String()
	}
	// The peer's own address is already text in RemoteAddr: no copy.
	if i := strings.LastIndexByte(r.RemoteAddr, ':'); i > 0 {
		if host := r.RemoteAddr[:i]; parsesAs(host, addr) {
			return host
		}
	}
	return addr.String()
}

func parsesAs(s string, addr netip.Addr) bool {
	a, err := netip.ParseAddr(s)
	return err == nil && a == addr
}

// callerAddress is the peer's address or, when the peer is a trusted proxy
// (agents[].trusted_proxies), the last address of X-Forwarded-For that is
// not one: what a trusted proxy appended is vouched for, what came before
// it is the caller's own word. An entry that is not an address stops the
// walk at the proxy that passed it on.
func (l *callerCalls) callerAddress(r *http.Request) (netip.Addr, bool) {
	peer, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.Addr{}, false
	}
	addr := peer.Addr().Unmap()
	if !l.trusts(addr) {
		return addr, true
	}
	// Walked from its end in place: the header is the caller's, as long
	// as the header limit allows, and only its last entries are read.
	forwarded := r.Header.Values("X-Forwarded-For")
	for i := len(forwarded) - 1; i >= 0; i-- {
		for rest, more := forwarded[i], true; more; {
			var entry string
			if comma := strings.LastIndexByte(rest, ','); comma >= 0 {
				rest, entry = rest[:comma], rest[comma+1:]
			} else {
				entry, more = rest, false
			}
			next, err := netip.ParseAddr(strings.TrimSpace(entry))
			if err != nil {
				return addr, true
			}
			if addr = next.Unmap(); !l.trusts(addr) {
				return addr, true
			}
		}
	}
	return addr, true
}

func (l *callerCalls) trusts(addr netip.Addr) bool {
	for _, p := range l.trusted {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// tooManyCalls is the answer to a caller past its bound.
func (a *Agent) tooManyCalls() *normalize.Error {
	return normalize.Errorf(dialect.ErrInternal, "this caller already has %d calls in flight on this agent, the most one caller may have at once "+
		"(agents[].max_calls_per_caller): wait for some to finish (or close streams it no longer reads), then retry", a.calls.limit)
}

// earlyKey marks, in a request's context, a call a front end counted
// before it read the request (AdmitEarly): ServeRPC does not count it
// again, and refuses it when it was over its caller's bound.
type earlyKey struct{}

// early is what AdmitEarly found of a call.
type early uint8

const (
	notCounted early = iota
	countedEarly
	overEarly
)

// earlyOf is what AdmitEarly found of r's call.
func earlyOf(r *http.Request) early {
	e, _ := r.Context().Value(earlyKey{}).(early)
	return e
}

// AdmitEarly counts r's call against its caller before a front end reads
// the request the core is given (a REST body): a caller whose bodies
// arrive slowly holds what one with a slow backend does, and the core,
// which counts its own calls before reading their bodies, sees the call
// only once the front end has read it. A caller without a valid token is
// not counted, as the core counts none (it refuses it, logged there): the
// check here is silent. It returns r marked with what it found and the
// release; over says the caller already has its limit in flight, which
// the core, seeing the mark, refuses.
func (a *Agent) AdmitEarly(r *http.Request) (_ *http.Request, release func(), over bool) {
	owner := ""
	if a.verifier != nil {
		header, err := auth.Credential(r.Header["Authorization"])
		if err != nil {
			return r, func() {}, false
		}
		p, err := a.verifier.Verify(r.Context(), header)
		if err != nil {
			return r, func() {}, false
		}
		owner = p.String()
	}
	key := a.calls.callerKeyOf(r, owner)
	if !a.calls.acquire(key) {
		return r.WithContext(context.WithValue(r.Context(), earlyKey{}, overEarly)), func() {}, true
	}
	return r.WithContext(context.WithValue(r.Context(), earlyKey{}, countedEarly)), func() { a.calls.release(key) }, false
}
