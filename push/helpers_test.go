package push

import (
	"context"
	"encoding/binary"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"
)

// loopbackPolicy lets tests reach httptest servers on 127.0.0.1, through
// the allowed-CIDR option.
func loopbackPolicy() *Policy {
	return &Policy{AllowedCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
}

// sleeps records the waits a Sender asked for, and waits for none.
type sleeps struct {
	mu  sync.Mutex
	got []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.got = append(s.got, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeps) list() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.got...)
}

// testSender returns a Sender whose waits are recorded, not waited, and
// whose jitter always draws the bound.
func testSender(t *testing.T, p *Policy, edit func(*Config)) (*Sender, *sleeps) {
	t.Helper()
	var c Config
	c.SetDefaults()
	if edit != nil {
		edit(&c)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	s := NewSender(&c, p)
	sl := &sleeps{}
	s.sleep = sl.sleep
	s.jitter = func(max time.Duration) time.Duration { return max }
	t.Cleanup(s.client.CloseIdleConnections)
	return s, sl
}

// recorder is an Observer that keeps what it saw.
type recorder struct {
	mu       sync.Mutex
	attempts []Attempt
	outcomes []Result
	byTask   map[string][]Outcome
}

func (r *recorder) observer() Observer {
	return Observer{
		OnAttempt: func(_ *Delivery, a Attempt) {
			r.mu.Lock()
			r.attempts = append(r.attempts, a)
			r.mu.Unlock()
		},
		OnOutcome: func(d *Delivery, res Result) {
			r.mu.Lock()
			r.outcomes = append(r.outcomes, res)
			if r.byTask == nil {
				r.byTask = map[string][]Outcome{}
			}
			r.byTask[d.TaskID] = append(r.byTask[d.TaskID], res.Outcome)
			r.mu.Unlock()
		},
	}
}

func (r *recorder) count(o Outcome) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, res := range r.outcomes {
		if res.Outcome == o {
			n++
		}
	}
	return n
}

// fakeDNS answers every A query with addr and every other query with no
// records, as a DNS server that an attacker controls would.
func fakeDNS(t *testing.T, addr netip.Addr) *net.Resolver {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if resp := dnsAnswer(buf[:n], addr); resp != nil {
				pc.WriteTo(resp, from)
			}
		}
	}()
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", pc.LocalAddr().String())
	}}
}

func dnsAnswer(q []byte, addr netip.Addr) []byte {
	i := 12
	for i < len(q) && q[i] != 0 {
		i += int(q[i]) + 1
	}
	if i+5 > len(q) {
		return nil
	}
	qtype := binary.BigEndian.Uint16(q[i+1:])
	resp := append([]byte(nil), q[:i+5]...)
	resp[2], resp[3] = 0x81, 0x80 // a response, recursion desired and available, no error
	binary.BigEndian.PutUint16(resp[4:], 1)
	binary.BigEndian.PutUint16(resp[6:], 0)
	binary.BigEndian.PutUint16(resp[8:], 0)
	binary.BigEndian.PutUint16(resp[10:], 0)
	if qtype == 1 && addr.Is4() {
		binary.BigEndian.PutUint16(resp[6:], 1)
		resp = append(resp, 0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4)
		resp = append(resp, addr.AsSlice()...)
	}
	return resp
}
