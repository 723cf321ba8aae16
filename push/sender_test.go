package push

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/testnet"
)

// statusSequence answers the i-th request with codes[i] (the last one
// repeated), and counts requests.
func statusSequence(t *testing.T, codes []int, edit func(i int, w http.ResponseWriter)) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1)) - 1
		if edit != nil {
			edit(i, w)
		}
		w.WriteHeader(codes[min(i, len(codes)-1)])
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func TestSendRetriesUntilDelivered(t *testing.T) {
	var gotBody, gotToken, gotType []string
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		gotBody = append(gotBody, string(b))
		gotToken = append(gotToken, r.Header.Get(TokenHeader))
		gotType = append(gotType, r.Header.Get("Content-Type"))
		if n.Add(1) <= 2 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	s, sl := testSender(t, loopbackPolicy(), nil)
	var rec recorder
	d := &Delivery{TaskID: "t1", URL: srv.URL + "/hook", Header: Headers(dialect.V03, "tok", nil), Body: []byte(`{"kind":"task"}`)}
	r := s.Send(context.Background(), d, rec.observer())
	if r.Outcome != Delivered || r.Attempts != 3 || r.Status != 204 || r.Err != nil {
		t.Fatalf("result %+v", r)
	}
	if want := []time.Duration{500 * time.Millisecond, time.Second}; !slices.Equal(sl.list(), want) {
		t.Errorf("waits %v, want %v", sl.list(), want)
	}
	for i := range 3 {
		if gotBody[i] != `{"kind":"task"}` || gotToken[i] != "tok" || gotType[i] != "application/json" {
			t.Errorf("attempt %d: body %q token %q type %q", i+1, gotBody[i], gotToken[i], gotType[i])
		}
	}
	if len(rec.attempts) != 3 || rec.attempts[0].Status != 503 || rec.attempts[0].Wait != 500*time.Millisecond || rec.attempts[2].Wait != 0 || rec.attempts[2].N != 3 {
		t.Errorf("attempts %+v", rec.attempts)
	}
	if len(rec.outcomes) != 1 || rec.outcomes[0].Outcome != Delivered {
		t.Errorf("outcomes %+v", rec.outcomes)
	}
}

func TestSendDoesNotRetryOther4xxOr3xx(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { elsewhere.Add(1) }))
	defer other.Close()
	for _, code := range []int{400, 401, 403, 404, 410, 413, 302, 307} {
		srv, n := statusSequence(t, []int{code, 200}, func(_ int, w http.ResponseWriter) {
			w.Header().Set("Location", other.URL)
		})
		s, sl := testSender(t, loopbackPolicy(), nil)
		r := s.Send(context.Background(), &Delivery{TaskID: "t", URL: srv.URL}, Observer{})
		if r.Outcome != Rejected || r.Attempts != 1 || r.Status != code || n.Load() != 1 || len(sl.list()) != 0 {
			t.Errorf("%d: result %+v after %d requests, waits %v", code, r, n.Load(), sl.list())
		}
	}
	if elsewhere.Load() != 0 {
		t.Error("a redirect was followed")
	}
}

func TestSendHonoursRetryAfter(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	retryAfter := []string{"7", now.Add(20 * time.Second).Format(http.TimeFormat), "3600", "soon"}
	srv, _ := statusSequence(t, []int{429, 503, 429, 429, 200}, func(i int, w http.ResponseWriter) {
		if i < len(retryAfter) {
			w.Header().Set("Retry-After", retryAfter[i])
		}
	})
	s, sl := testSender(t, loopbackPolicy(), func(c *Config) { c.MaxAttempts = 5 })
	s.now = func() time.Time { return now }
	r := s.Send(context.Background(), &Delivery{TaskID: "t", URL: srv.URL}, Observer{})
	if r.Outcome != Delivered || r.Attempts != 5 {
		t.Fatalf("result %+v", r)
	}
	// 7 s as asked, 20 s to the date, 3600 s capped at backoff_max, and an
	// unreadable one falls back to the backoff of the fourth retry (4 s).
	want := []time.Duration{7 * time.Second, 20 * time.Second, 30 * time.Second, 4 * time.Second}
	if !slices.Equal(sl.list(), want) {
		t.Errorf("waits %v, want %v", sl.list(), want)
	}
}

func TestSendGivesUp(t *testing.T) {
	srv, n := statusSequence(t, []int{500}, nil)
	s, sl := testSender(t, loopbackPolicy(), func(c *Config) { c.MaxAttempts = 3 })
	r := s.Send(context.Background(), &Delivery{TaskID: "t", URL: srv.URL + "/x?token=secret"}, Observer{})
	if r.Outcome != Failed || r.Attempts != 3 || n.Load() != 3 || r.Status != 500 {
		t.Fatalf("result %+v", r)
	}
	if len(sl.list()) != 2 {
		t.Errorf("waits %v, want 2", sl.list())
	}
	if msg := r.Err.Error(); !strings.Contains(msg, "gave up after 3 attempts") || !strings.Contains(msg, "500") || strings.Contains(msg, "secret") {
		t.Errorf("error %q", msg)
	}
}

func TestBackoffFullJitter(t *testing.T) {
	s, _ := testSender(t, loopbackPolicy(), nil)
	var bounds []time.Duration
	s.jitter = func(max time.Duration) time.Duration { bounds = append(bounds, max); return max / 2 }
	var got []time.Duration
	for n := 1; n <= 9; n++ {
		got = append(got, s.backoff(n, 0))
	}
	wantBounds := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 30 * time.Second, 30 * time.Second, 30 * time.Second}
	if !slices.Equal(bounds, wantBounds) {
		t.Errorf("bounds %v, want %v", bounds, wantBounds)
	}
	if got[0] != 250*time.Millisecond || got[8] != 15*time.Second {
		t.Errorf("waits %v", got)
	}
	// The default jitter stays within [0, bound].
	s2 := NewSender(&Config{Timeout: time.Second, MaxAttempts: 1, BackoffBase: time.Second, BackoffMax: time.Second}, loopbackPolicy())
	for range 100 {
		if d := s2.backoff(1, 0); d < 0 || d > time.Second {
			t.Fatalf("jitter %v out of [0, 1s]", d)
		}
	}
}

func TestSendAttemptTimeout(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			<-r.Context().Done() // never answers: the client must give up
			return
		}
	}))
	defer srv.Close()
	// The timeout bounds every attempt, the second one's dial and answer
	// too: it must outlast those on a busy machine under -race. The first
	// attempt waits it out whatever it is.
	s, _ := testSender(t, loopbackPolicy(), func(c *Config) { c.Timeout = 2 * time.Second })
	var rec recorder
	r := s.Send(context.Background(), &Delivery{TaskID: "t", URL: srv.URL}, rec.observer())
	if r.Outcome != Delivered || r.Attempts != 2 {
		t.Fatalf("result %+v", r)
	}
	if err := rec.attempts[0].Err; err == nil || !strings.Contains(err.Error(), "attempt timeout") {
		t.Errorf("first attempt: %v", err)
	}
}

func TestSendRetriesConnectionErrors(t *testing.T) {
	addr := testnet.RefusedAddr(t) // every dial is refused
	s, sl := testSender(t, loopbackPolicy(), func(c *Config) { c.MaxAttempts = 4 })
	r := s.Send(context.Background(), &Delivery{TaskID: "t", URL: "http://" + addr + "/"}, Observer{})
	if r.Outcome != Failed || r.Attempts != 4 || r.Status != 0 || len(sl.list()) != 3 {
		t.Fatalf("result %+v, waits %v", r, sl.list())
	}
}

// TestSendRefusesAtDialTime: a name that passes CheckURL but resolves to
// loopback (DNS rebinding) is refused when dialled, without a retry.
func TestSendRefusesAtDialTime(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	target := "http://rebind.example:" + port + "/hook"
	resolver := fakeDNS(t, netip.MustParseAddr("127.0.0.1"))

	var p Policy
	if err := p.CheckURL(target); err != nil {
		t.Fatalf("CheckURL(%s) = %v, want it to pass (it does not resolve)", target, err)
	}
	s, sl := testSender(t, &p, nil)
	s.dialer.Resolver = resolver
	r := s.Send(context.Background(), &Delivery{TaskID: "t", URL: target}, Observer{})
	var perr *PolicyError
	if r.Outcome != RefusedPolicy || r.Attempts != 1 || !errors.As(r.Err, &perr) || len(sl.list()) != 0 {
		t.Fatalf("result %+v, waits %v", r, sl.list())
	}
	if msg := r.Err.Error(); !strings.HasPrefix(msg, "webhook url "+target+": rebind.example resolved to 127.0.0.1, which is a loopback address (127.0.0.0/8); allow it with agents[].push.allowed_hosts") {
		t.Errorf("error %q", msg)
	}
	if hits.Load() != 0 {
		t.Error("the receiver was reached")
	}

	// The same name, allowed by name, goes through.
	allowed := Policy{AllowedHosts: []string{"REBIND.example"}}
	s2, _ := testSender(t, &allowed, nil)
	s2.dialer.Resolver = resolver
	if r := s2.Send(context.Background(), &Delivery{TaskID: "t", URL: target}, Observer{}); r.Outcome != Delivered {
		t.Fatalf("allowed host: %+v", r)
	}
}

func TestSendRefusesURLBeforeDialling(t *testing.T) {
	s, _ := testSender(t, &Policy{}, nil)
	r := s.Send(context.Background(), &Delivery{TaskID: "t", URL: "http://169.254.169.254/latest/meta-data/"}, Observer{})
	if r.Outcome != RefusedPolicy || r.Attempts != 0 {
		t.Fatalf("result %+v", r)
	}
}

func TestSendVerifiesTLS(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	s, sl := testSender(t, loopbackPolicy(), nil)
	r := s.Send(context.Background(), &Delivery{TaskID: "t", URL: srv.URL}, Observer{})
	if r.Outcome != Failed || r.Attempts != 1 || len(sl.list()) != 0 {
		t.Fatalf("untrusted certificate: %+v, waits %v", r, sl.list())
	}
	s2, _ := testSender(t, loopbackPolicy(), nil)
	s2.client.Transport.(*http.Transport).TLSClientConfig.RootCAs = srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	if r := s2.Send(context.Background(), &Delivery{TaskID: "t", URL: srv.URL}, Observer{}); r.Outcome != Delivered {
		t.Fatalf("trusted certificate: %+v", r)
	}
}

func TestSendStopsWhenContextEnds(t *testing.T) {
	srv, n := statusSequence(t, []int{503}, nil)
	s, _ := testSender(t, loopbackPolicy(), nil)
	ctx, cancel := context.WithCancel(context.Background())
	s.sleep = func(context.Context, time.Duration) error { cancel(); return context.Canceled }
	r := s.Send(ctx, &Delivery{TaskID: "t", URL: srv.URL}, Observer{})
	if r.Outcome != AbandonedShutdown || r.Attempts != 1 || n.Load() != 1 {
		t.Fatalf("result %+v", r)
	}
}

func TestSendErrorsNameNoCredential(t *testing.T) {
	srv, _ := statusSequence(t, []int{401}, nil)
	s, _ := testSender(t, loopbackPolicy(), nil)
	h := Headers(dialect.V10, "tok-SECRET", &Auth{Schemes: []string{"Bearer"}, Credentials: "cred-SECRET"})
	var rec recorder
	r := s.Send(context.Background(), &Delivery{TaskID: "t", URL: srv.URL + "/hook?sig=q-SECRET#f-SECRET", Header: h}, rec.observer())
	if r.Outcome != Rejected || r.Status != 401 {
		t.Fatalf("result %+v", r)
	}
	for _, msg := range []string{r.Err.Error(), rec.attempts[0].Err.Error()} {
		if strings.Contains(msg, "SECRET") {
			t.Errorf("error shows a credential: %q", msg)
		}
		if !strings.Contains(msg, srv.URL+"/hook?…") {
			t.Errorf("error does not name the URL: %q", msg)
		}
	}
}

// TestSendAllowedHostNeverReachesMetadata: a name allowed by AllowedHosts
// that resolves to a metadata address is refused when dialled.
func TestSendAllowedHostNeverReachesMetadata(t *testing.T) {
	p := Policy{AllowedHosts: []string{"receiver.internal"}, AllowPrivateNetworks: true}
	s, _ := testSender(t, &p, nil)
	s.dialer.Resolver = fakeDNS(t, netip.MustParseAddr("169.254.169.254"))
	r := s.Send(context.Background(), &Delivery{TaskID: "t", URL: "http://receiver.internal/hook"}, Observer{})
	if r.Outcome != RefusedPolicy || r.Err == nil || !strings.Contains(r.Err.Error(), "cloud metadata address") {
		t.Fatalf("result %+v", r)
	}
}

// TestHeadersReachTheReceiver: what a receiver written for either 1.0
// sender reads arrives.
func TestHeadersReachTheReceiver(t *testing.T) {
	got := make(chan http.Header, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got <- r.Header.Clone() }))
	defer srv.Close()
	s, _ := testSender(t, loopbackPolicy(), nil)
	h := Headers(dialect.V10, "tok", &Auth{Schemes: []string{"Bearer"}, Credentials: "jwt"})
	if r := s.Send(context.Background(), &Delivery{TaskID: "t", URL: srv.URL, Header: h, Body: []byte(`{"task":{}}`)}, Observer{}); r.Outcome != Delivered {
		t.Fatalf("result %+v", r)
	}
	rh := <-got
	for name, want := range map[string]string{
		"X-A2A-Notification-Token": "tok", // @a2a-js/sdk 1.3.0, a2a-python
		"A2A-Notification-Token":   "tok", // a2a-go v2
		"Authorization":            "Bearer jwt",
		"Content-Type":             "application/json",
	} {
		if rh.Get(name) != want {
			t.Errorf("%s = %q, want %q", name, rh.Get(name), want)
		}
	}
}

// StartAttempt sees every attempt before it is sent, its headers reach the
// receiver on that attempt only, and each attempt is ended once with the
// outcome it gave the delivery.
func TestStartAttemptWrapsEveryAttempt(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("Traceparent"))
		w.WriteHeader([]int{503, 500, 204}[min(len(got)-1, 2)])
	}))
	t.Cleanup(srv.Close)
	s, _ := testSender(t, loopbackPolicy(), nil)
	type ended struct {
		n, status int
		outcome   Outcome
	}
	var started []int
	var ends []ended
	o := Observer{StartAttempt: func(d *Delivery, n int, h http.Header) func(Attempt, Outcome) {
		started = append(started, n)
		h.Set("Traceparent", "attempt-"+string(rune('0'+n)))
		return func(a Attempt, outcome Outcome) { ends = append(ends, ended{a.N, a.Status, outcome}) }
	}}
	d := &Delivery{TaskID: "t1", URL: srv.URL + "/hook", Header: Headers(dialect.V10, "tok", nil), Body: []byte(`{}`)}
	if r := s.Send(context.Background(), d, o); r.Outcome != Delivered || r.Attempts != 3 {
		t.Fatalf("result %+v", r)
	}
	if want := []string{"attempt-1", "attempt-2", "attempt-3"}; !slices.Equal(got, want) {
		t.Errorf("the receiver got traceparent %q, want %q", got, want)
	}
	if d.Header.Get("Traceparent") != "" {
		t.Error("an attempt's header leaked into the delivery's own headers")
	}
	want := []ended{{1, 503, ""}, {2, 500, ""}, {3, 204, Delivered}}
	if !slices.Equal(started, []int{1, 2, 3}) || !slices.Equal(ends, want) {
		t.Errorf("started %v, ended %+v; want 1..3 and %+v", started, ends, want)
	}

	// An attempt the delivery ends with, failed: ended once, with that outcome.
	gone, _ := statusSequence(t, []int{410}, nil)
	ends, started = nil, nil
	if r := s.Send(context.Background(), &Delivery{TaskID: "t1", URL: gone.URL, Body: []byte(`{}`)}, o); r.Outcome != Rejected {
		t.Fatalf("result %+v", r)
	}
	if want := []ended{{1, 410, Rejected}}; !slices.Equal(ends, want) {
		t.Errorf("ended %+v, want %+v", ends, want)
	}
}

// TestSendRefusesProtocolSwitch: a receiver answering 101 Switching
// Protocols and holding the connection is rejected at once. net/http gives a
// 101's connection to the body's reader outside the request's context, so
// the attempt timeout did not end the drain of it: the worker sending it
// stayed for as long as the receiver held the connection, and a few such
// webhooks held every worker, stopping every caller's deliveries.
func TestSendRefusesProtocolSwitch(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		_, _ = io.WriteString(conn, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n")
		hungUp := make(chan struct{})
		go func() { _, _ = io.Copy(io.Discard, conn); close(hungUp) }()
		select {
		case <-hungUp:
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release) // before srv.Close, which waits for its handlers
	s, _ := testSender(t, loopbackPolicy(), func(c *Config) { c.Timeout = time.Minute })
	done := make(chan Result, 1)
	go func() { done <- s.Send(context.Background(), &Delivery{TaskID: "t", URL: srv.URL}, Observer{}) }()
	select {
	case r := <-done:
		if r.Outcome != Rejected || r.Attempts != 1 || r.Status != http.StatusSwitchingProtocols || r.Err == nil || !strings.Contains(r.Err.Error(), "101") {
			t.Fatalf("result %+v", r)
		}
	case <-time.After(10 * time.Second): // a bound to fail by, far below the attempt timeout
		t.Fatal("the delivery was still being sent 10s after the receiver answered 101")
	}
}
