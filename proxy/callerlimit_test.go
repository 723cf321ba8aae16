package proxy

import (
	"context"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/a2agate/gateway/dialect"
)

func TestCallerKey(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("127.0.0.1/32")}
	for _, tc := range []struct {
		name      string
		trusted   []netip.Prefix
		peer      string
		forwarded []string
		owner     string
		want      string
	}{
		{name: "token subject", trusted: trusted, peer: "127.0.0.1:5", forwarded: []string{"192.0.2.9"}, owner: "alice", want: "alice"},
		{name: "untrusted peer's claim ignored", trusted: trusted, peer: "192.0.2.1:5", forwarded: []string{"198.51.100.4"}, want: "192.0.2.1"},
		{name: "no trusted proxies", peer: "127.0.0.1:5", forwarded: []string{"198.51.100.4"}, want: "127.0.0.1"},
		{name: "trusted proxy's entry", trusted: trusted, peer: "127.0.0.1:5", forwarded: []string{"198.51.100.4"}, want: "198.51.100.4"},
		{name: "the last untrusted entry", trusted: trusted, peer: "127.0.0.1:5", forwarded: []string{"203.0.113.6, 198.51.100.4, 10.1.2.3"}, want: "198.51.100.4"},
		{name: "over header lines", trusted: trusted, peer: "127.0.0.1:5", forwarded: []string{"203.0.113.6", "198.51.100.4"}, want: "198.51.100.4"},
		{name: "garbage before the vouched entry", trusted: trusted, peer: "127.0.0.1:5", forwarded: []string{"not-an-ip, 198.51.100.4"}, want: "198.51.100.4"},
		{name: "garbage stops at the proxy", trusted: trusted, peer: "127.0.0.1:5", forwarded: []string{"198.51.100.4, not-an-ip"}, want: "127.0.0.1"},
		{name: "an empty entry stops the walk", trusted: trusted, peer: "127.0.0.1:5", forwarded: []string{"198.51.100.4,, 10.1.2.3"}, want: "10.1.2.3"},
		{name: "a trailing comma stops at the proxy", trusted: trusted, peer: "127.0.0.1:5", forwarded: []string{"198.51.100.4,"}, want: "127.0.0.1"},
		{name: "trusted proxy without the header", trusted: trusted, peer: "127.0.0.1:5", want: "127.0.0.1"},
		{name: "all trusted", trusted: trusted, peer: "127.0.0.1:5", forwarded: []string{"10.0.0.1"}, want: "10.0.0.1"},
		{name: "IPv6 by its /64", peer: "[2001:db8::1]:5", want: "2001:db8::/64"},
		{name: "IPv6 another host of the /64", peer: "[2001:db8::ffff:1]:7", want: "2001:db8::/64"},
		{name: "IPv6 another /64", peer: "[2001:db8:0:1::1]:7", want: "2001:db8:0:1::/64"},
		{name: "IPv4-mapped", peer: "[::ffff:192.0.2.1]:5", want: "192.0.2.1"},
		{name: "IPv6 forwarded", trusted: trusted, peer: "127.0.0.1:5", forwarded: []string{"2001:db8::7"}, want: "2001:db8::/64"},
		{name: "IPv4-mapped proxy", trusted: trusted, peer: "[::ffff:10.9.9.9]:5", forwarded: []string{"198.51.100.4"}, want: "198.51.100.4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &http.Request{RemoteAddr: tc.peer, Header: http.Header{"X-Forwarded-For": tc.forwarded}}
			if got := newCallerCalls(1, tc.trusted).callerKey(r, &call{owner: tc.owner}); got != tc.want {
				t.Errorf("counted against %q, want %q", got, tc.want)
			}
		})
	}
}

func TestParseTrustedProxy(t *testing.T) {
	for in, want := range map[string]string{
		"10.0.0.0/8":          "10.0.0.0/8",
		"10.1.2.3/8":          "10.0.0.0/8",
		"192.0.2.1":           "192.0.2.1/32",
		"2001:db8::/32":       "2001:db8::/32",
		"::1":                 "::1/128",
		"::ffff:10.0.0.0/104": "10.0.0.0/8",
		"::ffff:192.0.2.1":    "192.0.2.1/32",
	} {
		if got, err := parseTrustedProxy(in); err != nil || got.String() != want {
			t.Errorf("%s: %v %v, want %s", in, got, err, want)
		}
	}
	for _, in := range []string{"", "10.0.0.0/33", "example.com", "10.0.0.0/8 ", "[::1]"} {
		if got, err := parseTrustedProxy(in); err == nil {
			t.Errorf("%q parsed as %v", in, got)
		}
	}
}

// TestCallsPerCallerBehindTrustedProxy: without auth, callers behind a
// trusted load balancer are counted apart by the address it appended, and
// an untrusted peer's X-Forwarded-For changes nothing.
func TestCallsPerCallerBehindTrustedProxy(t *testing.T) {
	c10 := callers[1]
	for _, trusted := range []bool{true, false} {
		t.Run(map[bool]string{true: "trusted", false: "untrusted"}[trusted], func(t *testing.T) {
			arrived, release := make(chan struct{}), make(chan struct{})
			g := newGateway(t, heldBackend(arrived, release), dialect.Version10, func(a *AgentConfig) {
				a.MaxCallsPerCaller = 1
				if trusted {
					a.TrustedProxies = []string{"127.0.0.0/8", "::1"}
				}
			})
			t.Cleanup(func() { close(release) })
			post := func(id, from string) (int, []byte) {
				res, b, err := g.postCtx(context.Background(), rpc(c10.method(dialect.SendMessage), c10.send(id, c10.text("hold"), "")),
					append(g.hdr(c10.d), "X-Forwarded-For", from)...)
				if err != nil {
					t.Error(err)
					return 0, nil
				}
				return res.StatusCode, b
			}
			done := make(chan struct{})
			go func() {
				defer close(done)
				post("h1", "198.51.100.1")
			}()
			<-arrived
			if status, b := post("h2", "198.51.100.1"); status != http.StatusTooManyRequests {
				t.Fatalf("the same caller again: HTTP %d %s, want 429", status, b)
			}
			second := make(chan int, 1)
			go func() {
				status, _ := post("h3", "198.51.100.2")
				second <- status
			}()
			if trusted {
				<-arrived
				release <- struct{}{}
				release <- struct{}{}
				if status := <-second; status != http.StatusOK {
					t.Errorf("another caller behind the proxy: HTTP %d, want 200", status)
				}
			} else {
				if status := <-second; status != http.StatusTooManyRequests {
					t.Errorf("an untrusted peer's X-Forwarded-For counted apart: HTTP %d, want 429", status)
				}
				release <- struct{}{}
			}
			<-done
		})
	}
}

// TestCallerAddressReadsForwardedInPlace: behind a trusted proxy, the
// caller's X-Forwarded-For (as long as the header limit allows) is walked
// from its end without a copy: a long list costs no allocation, where
// splitting it made a slice of every entry on each call.
func TestCallerAddressReadsForwardedInPlace(t *testing.T) {
	l := newCallerCalls(1, []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")})
	long := strings.Repeat("203.0.113.6, ", 20000) + "198.51.100.4, 10.1.2.3,10.4.5.6"
	r := &http.Request{RemoteAddr: "10.0.0.1:5", Header: http.Header{"X-Forwarded-For": {long, "10.7.7.7"}}}
	var got netip.Addr
	allocs := testing.AllocsPerRun(100, func() { got, _ = l.callerAddress(r) })
	if want := netip.MustParseAddr("198.51.100.4"); got != want {
		t.Errorf("counted against %v, want %v", got, want)
	}
	if allocs != 0 {
		t.Errorf("%v allocations a call, want none", allocs)
	}
}
