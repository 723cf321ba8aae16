package push

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

// TestPolicyRefusesByDefault walks every refused range, as an address
// literal in the URL (CheckURL) and as an address dialled (Control).
func TestPolicyRefusesByDefault(t *testing.T) {
	cases := []struct {
		addr string
		want string // in the error
	}{
		{"127.0.0.1", "loopback address (127.0.0.0/8)"},
		{"127.255.0.9", "loopback address (127.0.0.0/8)"},
		{"::1", "loopback address (::1/128)"},
		{"10.0.0.5", "private network range (10.0.0.0/8)"},
		{"172.16.0.1", "private network range (172.16.0.0/12)"},
		{"172.31.255.254", "private network range (172.16.0.0/12)"},
		{"192.168.1.1", "private network range (192.168.0.0/16)"},
		{"100.64.0.1", "carrier-grade NAT) address range (100.64.0.0/10)"},
		{"169.254.1.1", "link-local address (169.254.0.0/16)"},
		{"fe80::1", "link-local address (fe80::/10)"},
		{"fc00::1", "unique-local (private) range (fc00::/7)"},
		{"fd12:3456::1", "unique-local (private) range (fc00::/7)"},
		{"0.0.0.0", "unspecified address"},
		{"::", "unspecified address (::/128)"},
		{"224.0.0.1", "multicast address (224.0.0.0/4)"},
		{"ff02::1", "multicast address (ff00::/8)"},
		{"255.255.255.255", "broadcast address"},
		{"240.0.0.1", "reserved range (240.0.0.0/4)"},
		{"::ffff:127.0.0.1", "IPv4-mapped 127.0.0.1, which is a loopback address"},
		{"::ffff:10.1.2.3", "IPv4-mapped 10.1.2.3, which is in a private network range"},
		{"::ffff:169.254.169.254", "cloud metadata address"},
		{"64:ff9b::7f00:1", "NAT64 address embedding 127.0.0.1, which is a loopback address"},
		{"64:ff9b::a9fe:a9fe", "NAT64 address embedding 169.254.169.254, which is a cloud metadata address"},
		{"2002:c0a8:101::1", "6to4 address embedding 192.168.1.1"},
		{"::7f00:1", "IPv4-compatible"},
		{"169.254.169.254", "cloud metadata address"},
		{"fd00:ec2::254", "cloud metadata address"},
		{"100.100.100.200", "cloud metadata address (Alibaba Cloud)"},
		{"192.0.0.8", "IETF protocol assignments range (192.0.0.0/24)"},
		{"198.19.0.1", "benchmarking range (198.18.0.0/15)"},
		{"fec0::1", "site-local address (deprecated) (fec0::/10)"},
		{"64:ff9b:1::a00:1", "local-use NAT64 range (64:ff9b:1::/48)"},
	}
	var p Policy
	for _, c := range cases {
		t.Run(c.addr, func(t *testing.T) {
			a := netip.MustParseAddr(c.addr)
			u := "http://" + netip.AddrPortFrom(a, 8080).String() + "/hook?token=secret"
			err := p.CheckURL(u)
			var perr *PolicyError
			if !errors.As(err, &perr) {
				t.Fatalf("CheckURL(%s) = %v, want a PolicyError", u, err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("CheckURL(%s) = %q, want it to say %q", u, err, c.want)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("CheckURL error shows the query: %q", err)
			}
			if err := p.Control("tcp", netip.AddrPortFrom(a, 443).String(), nil); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Control(%s) = %v, want it to say %q", c.addr, err, c.want)
			}
		})
	}
}

func TestPolicyErrorNamesTheOption(t *testing.T) {
	var p Policy
	err := p.CheckURL("http://10.0.0.5/x")
	want := "webhook url http://10.0.0.5/x: 10.0.0.5 is in a private network range (10.0.0.0/8); allow it with agents[].push.allowed_cidrs or allow_private_networks"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
}

func TestPolicyAllowsPublicAddresses(t *testing.T) {
	var p Policy
	for _, u := range []string{
		"https://receiver.example.com/hook",
		"http://93.184.216.34:8080/x",
		"https://[2606:2800:220:1:248:1893:25c8:1946]/x",
		"http://[64:ff9b::5db8:d822]/", // NAT64 of 93.184.216.34
		"HTTPS://Receiver.Example.com./x",
		"http://0x.example.com/",
		"http://123.example.com:65535/",
	} {
		if err := p.CheckURL(u); err != nil {
			t.Errorf("CheckURL(%s) = %v, want nil", u, err)
		}
	}
	if err := p.Control("tcp", "93.184.216.34:443", nil); err != nil {
		t.Errorf("Control(public) = %v", err)
	}
}

func TestPolicyRefusesURLForms(t *testing.T) {
	var p Policy
	for _, c := range []struct{ url, want string }{
		{"file:///etc/passwd", `scheme "file" is not allowed`},
		{"gopher://example.com/", `scheme "gopher" is not allowed`},
		{"ftp://example.com/", `scheme "ftp" is not allowed`},
		{"//example.com/x", "not an absolute URL"},
		{"/relative", "not an absolute URL"},
		{"http://user:pass@example.com/", "credentials in the URL"},
		{"http:///nohost", "no host"},
		{"http://localhost:9/x", "localhost always names this host"},
		{"http://api.localhost/x", "always names this host"},
		{"http://metadata.google.internal/computeMetadata/v1/", "cloud metadata endpoint"},
		{"http://METADATA.google.internal./", "cloud metadata endpoint"},
		{"http://[::1%25eth0]/", "loopback"},
		{"http://exa mple.com/", "not a valid URL"},
		{"http://2130706433/", "neither a host name nor a dotted-decimal IPv4 address"},
		{"http://0x7f.1/", "neither a host name"},
		{"http://127.1/", "neither a host name"},
		{"http://127.0.0.1./", "loopback address"},
		{"http://017700000001/", "neither a host name"},
		{"http://example.com:0/", "port 0 is not a TCP port"},
		{"http://example.com:70000/", "port 70000 is not a TCP port"},
		{"http://93.184.215.14:70000/", "port 70000 is not a TCP port"},
		{"http://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]:0/", "port 0 is not a TCP port"},
	} {
		err := p.CheckURL(c.url)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("CheckURL(%q) = %v, want it to say %q", c.url, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "pass@") {
			t.Errorf("CheckURL(%q) shows the userinfo: %v", c.url, err)
		}
	}
}

func TestPolicyAllowedCIDR(t *testing.T) {
	p := Policy{AllowedCIDRs: []netip.Prefix{netip.MustParsePrefix("10.1.0.0/16"), netip.MustParsePrefix("169.254.0.0/16")}}
	for _, ok := range []string{"http://10.1.2.3/x", "http://[::ffff:10.1.2.3]/x"} {
		if err := p.CheckURL(ok); err != nil {
			t.Errorf("CheckURL(%s) = %v, want allowed", ok, err)
		}
	}
	if err := p.Control("tcp", "10.1.2.3:80", nil); err != nil {
		t.Errorf("Control(10.1.2.3) = %v, want allowed", err)
	}
	for _, refused := range []string{"http://10.2.0.1/x", "http://169.254.169.254/latest/meta-data/", "http://127.0.0.1/"} {
		if err := p.CheckURL(refused); err == nil {
			t.Errorf("CheckURL(%s) allowed, want refused", refused)
		}
	}
}

func TestPolicyAllowPrivateNetworksKeepsMetadataRefused(t *testing.T) {
	p := Policy{AllowPrivateNetworks: true}
	for _, ok := range []string{"http://127.0.0.1:8080/", "http://10.0.0.5/", "http://[fd12::1]/", "http://localhost/"} {
		if err := p.CheckURL(ok); err != nil {
			t.Errorf("CheckURL(%s) = %v, want allowed", ok, err)
		}
	}
	for _, refused := range []string{"http://169.254.169.254/", "http://[fd00:ec2::254]/", "http://100.100.100.200/", "http://metadata.google.internal/", "http://0.0.0.0/", "http://224.0.0.1/"} {
		if err := p.CheckURL(refused); err == nil {
			t.Errorf("CheckURL(%s) allowed, want refused", refused)
		}
	}
}

func TestPolicyAllowedHost(t *testing.T) {
	p := Policy{AllowedHosts: []string{"Receiver.Internal", "localhost"}}
	if err := p.CheckURL("http://receiver.internal./hook"); err != nil {
		t.Errorf("CheckURL(allowed host) = %v", err)
	}
	if err := p.CheckURL("http://localhost:8080/hook"); err != nil {
		t.Errorf("CheckURL(localhost, allowed) = %v", err)
	}
	// An allowed name does not allow an address literal of the same range.
	if err := p.CheckURL("http://10.0.0.1/hook"); err == nil {
		t.Error("CheckURL(10.0.0.1) allowed by AllowedHosts")
	}
	// Allowed host names still cannot reach a metadata address.
	if perr := p.checkAddr(netip.MustParseAddr("169.254.169.254"), true); perr == nil {
		t.Error("an allowed host resolving to 169.254.169.254 was allowed")
	}
	if perr := p.checkAddr(netip.MustParseAddr("10.0.0.1"), true); perr != nil {
		t.Errorf("an allowed host resolving to 10.0.0.1 was refused: %v", perr)
	}
}

// TestPolicyReadsAHostAsItIsDialled: a host name net/http would dial as
// another (it maps an internationalized name to ASCII, UTS #46: a circled
// letter to the letter, full-width digits to digits) is judged as that
// other, so a webhook that would be refused at every delivery is refused
// when it is set, not taken and then never delivered to.
func TestPolicyReadsAHostAsItIsDialled(t *testing.T) {
	var p Policy
	for _, c := range []struct{ url, want string }{
		{"http://ⓛocalhost:9/hook", "always names this host"},
		{"http://API.ⓛocalhost/hook", "always names this host"},
		{"http://metadata.google.internaⓛ/", "cloud metadata endpoint"},
		{"http://１２７.０.０.１:9/hook", "127.0.0.1 is a loopback address"},
		{"http://１６９.２５４.１６９.２５４/latest/meta-data/", "cloud metadata address"},
		{"http://１０.０.０.１/hook", "private network range"},
		{"http://２１３０７０６４３３/hook", "neither a host name nor a dotted-decimal IPv4 address"},
	} {
		err := p.CheckURL(c.url)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("CheckURL(%q) = %v, want it to say %q", c.url, err, c.want)
		}
	}
	for _, ok := range []string{"http://bücher.example/hook", "http://xn--bcher-kva.example/hook"} {
		if err := p.CheckURL(ok); err != nil {
			t.Errorf("CheckURL(%q) = %v, want it allowed", ok, err)
		}
	}
	allowed := Policy{AllowedHosts: []string{"localhost"}}
	if err := allowed.CheckURL("http://ⓛocalhost:9/hook"); err != nil {
		t.Errorf("an allowed host's internationalized spelling: %v", err)
	}
}
