package push

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// Policy decides which webhook targets the gateway may call. It is checked
// twice: by CheckURL when a caller sets a config (what the URL itself says),
// and by DialContext / Control on every address actually dialled, after DNS
// resolution, so that a name that resolves elsewhere later (DNS rebinding)
// still cannot reach a refused address.
//
// A Policy is read-only after construction and safe for concurrent use.
type Policy struct {
	// AllowPrivateNetworks allows loopback, private, link-local,
	// unique-local and shared (CGNAT) addresses. Defaults to false.
	AllowPrivateNetworks bool
	// AllowedHosts are host names (exact, case-insensitive, no wildcards)
	// allowed even when they resolve into a private range, for receivers
	// that live inside the cluster.
	AllowedHosts []string
	// AllowedCIDRs are address ranges allowed even though they are private.
	AllowedCIDRs []netip.Prefix
}

// Cloud metadata endpoints hand out the credentials of the machine they
// answer on; no webhook receiver lives there. They are refused whatever the
// options say: a broad allowed range (169.254.0.0/16, or 100.64.0.0/10 which
// holds Alibaba's 100.100.100.200) or an allowed host name that an attacker
// can point at one must not open them by accident.
var metadataAddrs = map[netip.Addr]string{
	netip.MustParseAddr("169.254.169.254"): "AWS, GCP, Azure and OpenStack",
	netip.MustParseAddr("fd00:ec2::254"):   "AWS over IPv6",
	netip.MustParseAddr("100.100.100.200"): "Alibaba Cloud",
}

// metadataHosts are names that resolve to a metadata endpoint inside a cloud.
var metadataHosts = map[string]bool{
	"metadata.google.internal": true,
}

// rangeClass says what may allow a refused range.
type rangeClass uint8

const (
	// private ranges reach the gateway's own network; the options may allow them.
	private rangeClass = iota + 1
	// unusable ranges are not unicast destinations (or, for 0.0.0.0, mean
	// "this host"); no option allows them.
	unusable
)

type refusedRange struct {
	prefix netip.Prefix
	what   string
	class  rangeClass
}

// refusedRanges lists, most specific first, what a default policy refuses.
var refusedRanges = []refusedRange{
	{netip.MustParsePrefix("0.0.0.0/8"), "the unspecified address or \"this network\"", unusable},
	{netip.MustParsePrefix("127.0.0.0/8"), "a loopback address", private},
	{netip.MustParsePrefix("10.0.0.0/8"), "in a private network range", private},
	{netip.MustParsePrefix("172.16.0.0/12"), "in a private network range", private},
	{netip.MustParsePrefix("192.168.0.0/16"), "in a private network range", private},
	// Shared address space is not on the internet: inside a cloud or an ISP
	// it addresses internal hosts (Alibaba's metadata endpoint, Tailscale
	// nodes, carrier-grade NAT customers), so it is private for this purpose.
	{netip.MustParsePrefix("100.64.0.0/10"), "in the shared (carrier-grade NAT) address range", private},
	{netip.MustParsePrefix("169.254.0.0/16"), "a link-local address", private},
	// Neither is on the internet: protocol assignments (DS-Lite's
	// 192.0.0.0/29, NAT64 discovery) and benchmarking addresses, which
	// some networks number their internal hosts from.
	{netip.MustParsePrefix("192.0.0.0/24"), "in the IETF protocol assignments range", private},
	{netip.MustParsePrefix("198.18.0.0/15"), "in the benchmarking range", private},
	{netip.MustParsePrefix("224.0.0.0/4"), "a multicast address", unusable},
	{netip.MustParsePrefix("255.255.255.255/32"), "the broadcast address", unusable},
	{netip.MustParsePrefix("240.0.0.0/4"), "in the reserved range", unusable},
	{netip.MustParsePrefix("::/128"), "the unspecified address", unusable},
	{netip.MustParsePrefix("::1/128"), "a loopback address", private},
	{netip.MustParsePrefix("fe80::/10"), "a link-local address", private},
	{netip.MustParsePrefix("fc00::/7"), "in a unique-local (private) range", private},
	// Deprecated site-local addresses, which stacks still route as unicast
	// inside a site; and the local-use NAT64 prefix (RFC 8215), whose
	// translator is the site's own, in front of its own network.
	{netip.MustParsePrefix("fec0::/10"), "a site-local address (deprecated)", private},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "in the local-use NAT64 range", private},
	{netip.MustParsePrefix("ff00::/8"), "a multicast address", unusable},
	// Deprecated IPv4-compatible addresses (::a.b.c.d): nothing legitimate
	// uses them and some stacks route them to the embedded IPv4 address.
	{netip.MustParsePrefix("::/96"), "an IPv4-compatible IPv6 address (deprecated)", unusable},
}

var (
	nat64Prefix = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour   = netip.MustParsePrefix("2002::/16")
)

// PolicyError is a refused webhook target. Its message names the rule and,
// where an option can allow the target, the option; it never holds the URL's
// userinfo, query or fragment.
type PolicyError struct {
	// URL is the target without userinfo, query or fragment; empty when the
	// refusal happened at dial time and the URL is not known.
	URL string
	// Host is the host name dialled, when the target was a name.
	Host string
	// Addr is the refused address; invalid when the refusal is about the
	// URL itself (scheme, userinfo, host name).
	Addr netip.Addr
	// Reason says what rule refused the target, in words.
	Reason string
	// Hint says how to allow it, or is empty when nothing can.
	Hint string
}

func (e *PolicyError) Error() string {
	var b strings.Builder
	b.WriteString("webhook url")
	if e.URL != "" {
		b.WriteString(" " + e.URL)
	}
	b.WriteString(": ")
	switch {
	case e.Addr.IsValid() && e.Host != "":
		fmt.Fprintf(&b, "%s resolved to %s, which is ", e.Host, e.Addr)
	case e.Addr.IsValid():
		fmt.Fprintf(&b, "%s is ", e.Addr)
	}
	b.WriteString(e.Reason)
	if e.Hint != "" {
		b.WriteString("; " + e.Hint)
	}
	return b.String()
}

const (
	hintPrivate = "allow it with agents[].push.allowed_cidrs or allow_private_networks"
	hintName    = "allow it with agents[].push.allowed_hosts"
	// hintResolved is for a name that resolved into a private range.
	hintResolved = "allow it with agents[].push.allowed_hosts, allowed_cidrs or allow_private_networks"
)

// CheckURL reports whether rawURL may be a webhook target, from what the URL
// itself says: scheme, userinfo, an address literal, and names that are
// internal by definition (localhost, metadata.google.internal). It does not
// resolve names: an answer at set time proves nothing at send time, and the
// dial-time check covers every address.
func (p *Policy) CheckURL(rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		// url.Error would repeat the whole URL, query included.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return &PolicyError{Reason: "not a valid URL: " + err.Error()}
	}
	shown := redactURL(u)
	refuse := func(reason, hint string) error {
		return &PolicyError{URL: shown, Reason: reason, Hint: hint}
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	case "":
		return refuse("not an absolute URL: want http:// or https://", "")
	default:
		return refuse(fmt.Sprintf("scheme %q is not allowed: want http or https", u.Scheme), "")
	}
	if u.User != nil {
		return refuse("credentials in the URL (user:password@) are not allowed: pass them as the config's authentication", "")
	}
	host := u.Hostname()
	if host == "" {
		return refuse("the URL has no host", "")
	}
	host = dialledHost(host)
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return refuse(fmt.Sprintf("port %s is not a TCP port (1-65535)", port), "")
		}
	}
	if addr, err := netip.ParseAddr(strings.TrimSuffix(host, ".")); err == nil {
		if perr := p.checkAddr(addr, false); perr != nil {
			perr.URL = shown
			return perr
		}
		return nil
	}
	name := normalizeHost(host)
	if looksNumeric(name) {
		// Resolvers read 2130706433, 0x7f.1 or 127.1 as an IPv4 address;
		// no DNS name ends in a number.
		return refuse(fmt.Sprintf("%s is neither a host name nor a dotted-decimal IPv4 address", host), "")
	}
	if metadataHosts[name] {
		return refuse(fmt.Sprintf("%s is a cloud metadata endpoint", host), "")
	}
	if (name == "localhost" || strings.HasSuffix(name, ".localhost")) && !p.hostAllowed(name) && !p.AllowPrivateNetworks {
		return refuse(fmt.Sprintf("%s always names this host (loopback)", host), hintName+" or allow_private_networks")
	}
	return nil
}

// DialContext returns a dial function for an http.Transport that refuses
// every address the policy refuses, checked on the address being dialled
// (after resolution, for each address tried). An allowed host name lifts the
// private-range rules for the addresses it resolves to.
func (p *Policy) DialContext(d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		name := ""
		if _, err := netip.ParseAddr(host); err != nil {
			name = normalizeHost(host)
			if metadataHosts[name] {
				return nil, &PolicyError{Host: host, Reason: fmt.Sprintf("%s is a cloud metadata endpoint", host)}
			}
		}
		hostAllowed := name != "" && p.hostAllowed(name)
		dd := *d
		dd.Control = nil
		dd.ControlContext = func(_ context.Context, network, address string, _ syscall.RawConn) error {
			if perr := p.checkDialAddress(address, hostAllowed); perr != nil {
				if name != "" {
					perr.Host = host
					if perr.Hint == hintPrivate {
						perr.Hint = hintResolved
					}
				}
				return perr
			}
			return nil
		}
		return dd.DialContext(ctx, network, addr)
	}
}

// Control is a net.Dialer.Control hook that refuses every address the policy
// refuses. It does not know the host name dialled, so AllowedHosts does not
// apply; DialContext is the hook that honours them.
func (p *Policy) Control(network, address string, _ syscall.RawConn) error {
	if perr := p.checkDialAddress(address, false); perr != nil {
		return perr
	}
	return nil
}

func (p *Policy) checkDialAddress(address string, hostAllowed bool) *PolicyError {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &PolicyError{Reason: fmt.Sprintf("cannot check the address dialled (%q)", address)}
	}
	return p.checkAddr(ap.Addr(), hostAllowed)
}

// checkAddr refuses addr unless it is public or allowed. hostAllowed says
// the name being dialled is one of AllowedHosts.
func (p *Policy) checkAddr(addr netip.Addr, hostAllowed bool) *PolicyError {
	addr = addr.WithZone("")
	shown := addr
	if addr.Is4In6() {
		addr = addr.Unmap()
	}
	if who, ok := metadataAddrs[addr]; ok {
		return &PolicyError{Addr: shown, Reason: fmt.Sprintf("a cloud metadata address (%s)", who)}
	}
	if embedded, how, ok := embeddedIPv4(addr); ok {
		if perr := p.checkAddr(embedded, hostAllowed); perr != nil {
			return &PolicyError{Addr: shown, Reason: fmt.Sprintf("%s embedding %s, which is %s", how, embedded, perr.Reason), Hint: perr.Hint}
		}
		return nil
	}
	for _, r := range refusedRanges {
		if !r.prefix.Contains(addr) {
			continue
		}
		reason := fmt.Sprintf("%s (%s)", r.what, r.prefix)
		if shown != addr {
			reason = fmt.Sprintf("IPv4-mapped %s, which is %s", addr, reason)
		}
		if r.class == unusable {
			return &PolicyError{Addr: shown, Reason: reason + ", which cannot receive a webhook"}
		}
		if p.AllowPrivateNetworks || hostAllowed || p.cidrAllowed(addr) {
			return nil
		}
		return &PolicyError{Addr: shown, Reason: reason, Hint: hintPrivate}
	}
	return nil
}

// embeddedIPv4 returns the IPv4 address a NAT64 (64:ff9b::/96) or 6to4
// (2002::/16) address routes to, since a gateway on such a network reaches it.
func embeddedIPv4(addr netip.Addr) (netip.Addr, string, bool) {
	if !addr.Is6() {
		return netip.Addr{}, "", false
	}
	b := addr.As16()
	switch {
	case nat64Prefix.Contains(addr):
		return netip.AddrFrom4([4]byte(b[12:16])), "a NAT64 address", true
	case sixToFour.Contains(addr):
		return netip.AddrFrom4([4]byte(b[2:6])), "a 6to4 address", true
	}
	return netip.Addr{}, "", false
}

func (p *Policy) cidrAllowed(addr netip.Addr) bool {
	for _, c := range p.AllowedCIDRs {
		if c.Contains(addr) {
			return true
		}
	}
	return false
}

func (p *Policy) hostAllowed(name string) bool {
	for _, h := range p.AllowedHosts {
		if normalizeHost(h) == name {
			return true
		}
	}
	return false
}

// looksNumeric reports whether the last label of name is a number, decimal
// or hex, as the WHATWG URL standard's "ends in a number" check does.
func looksNumeric(name string) bool {
	last := name[strings.LastIndexByte(name, '.')+1:]
	if last == "" {
		return false
	}
	if h, ok := strings.CutPrefix(last, "0x"); ok {
		return strings.Trim(h, "0123456789abcdef") == ""
	}
	return strings.Trim(last, "0123456789") == ""
}

// dialledHost is host as net/http dials it: an internationalized name by
// its ASCII form, whose UTS #46 mapping folds look-alikes (a circled l to l,
// full-width digits to digits), so that "ⓛocalhost" is dialled as localhost
// and "１２７.０.０.１" as 127.0.0.1. Judging the name as written would take a
// webhook every delivery to which the dial-time check then refuses.
func dialledHost(host string) string {
	for i := 0; i < len(host); i++ {
		if host[i] >= utf8.RuneSelf {
			if a, err := idna.Lookup.ToASCII(host); err == nil {
				return a
			}
			return host
		}
	}
	return host
}

func normalizeHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(h), ".")
}

// redactURL shows u without userinfo, query or fragment, which may carry
// credentials.
func redactURL(u *url.URL) string {
	r := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath}
	s := r.String()
	if u.RawQuery != "" || u.ForceQuery {
		s += "?…"
	}
	return s
}
