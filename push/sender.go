package push

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// maxDiscardBytes bounds how much of a receiver's response body is read (and
// thrown away) so that the connection can be reused; a longer body closes
// the connection instead.
const maxDiscardBytes = 64 << 10

// Sender POSTs deliveries with retries. It is safe for concurrent use.
type Sender struct {
	policy      *Policy
	client      *http.Client
	dialer      *net.Dialer
	timeout     time.Duration
	maxAttempts int
	backoffBase time.Duration
	backoffMax  time.Duration

	// Tests replace these to run without waiting.
	sleep  func(ctx context.Context, d time.Duration) error
	jitter func(max time.Duration) time.Duration // uniform in [0, max]
	now    func() time.Time
}

// NewSender returns a Sender for c (after SetDefaults and Validate) that
// refuses every target p refuses.
func NewSender(c *Config, p *Policy) *Sender {
	s := &Sender{
		policy:      p,
		dialer:      &net.Dialer{Timeout: c.Timeout, KeepAlive: 30 * time.Second},
		timeout:     c.Timeout,
		maxAttempts: c.MaxAttempts,
		backoffBase: c.BackoffBase,
		backoffMax:  c.BackoffMax,
		sleep:       sleepContext,
		jitter:      func(max time.Duration) time.Duration { return time.Duration(rand.Int64N(int64(max) + 1)) },
		now:         time.Now,
	}
	transport := &http.Transport{
		// No proxy from the environment: through a proxy the policy would
		// check the proxy's address, not the receiver's.
		Proxy:               nil,
		DialContext:         p.DialContext(s.dialer),
		TLSClientConfig:     &tls.Config{MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout: c.Timeout,
		ForceAttemptHTTP2:   true,
		MaxIdleConns:        64,
		MaxIdleConnsPerHost: 8,
		IdleConnTimeout:     90 * time.Second,
		// A receiver's answer is a status; its headers need not be large.
		MaxResponseHeaderBytes: 64 << 10,
	}
	s.client = &http.Client{
		Transport: transport,
		// A redirect could point anywhere, the gateway's own network
		// included: a 3xx is the receiver's answer, not followed, and the
		// delivery is rejected (the caller registered the URL it meant).
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return s
}

// Send POSTs d until it is delivered, rejected, or MaxAttempts attempts
// failed, waiting between attempts. ctx bounds the whole; when it ends the
// outcome is AbandonedShutdown. o may be the zero Observer.
func (s *Sender) Send(ctx context.Context, d *Delivery, o Observer) Result {
	r := s.send(ctx, d, o)
	o.outcome(d, r)
	return r
}

// send is Send without the outcome, for the Queue which adds its own
// latency start.
func (s *Sender) send(ctx context.Context, d *Delivery, o Observer) Result {
	start := s.now()
	if err := s.policy.CheckURL(d.URL); err != nil {
		return Result{Outcome: RefusedPolicy, Err: err, Latency: s.now().Sub(start)}
	}
	shownURL := d.URL
	if u, err := url.Parse(d.URL); err == nil {
		shownURL = redactURL(u)
	}
	done := func(r Result) Result {
		r.Latency = s.now().Sub(start)
		return r
	}
	for n := 1; ; n++ {
		a, outcome, retryAfter, end := s.attempt(ctx, d, shownURL, o, n)
		a.N = n
		r := Result{Outcome: outcome, Attempts: n, Status: a.Status, Err: a.Err}
		switch {
		case outcome != "":
		case ctx.Err() != nil:
			r.Outcome, r.Err = AbandonedShutdown, errShutdown
		case n >= s.maxAttempts:
			r.Outcome, r.Err = Failed, fmt.Errorf("gave up after %d attempts: %w", n, a.Err)
		default:
			a.Wait = s.backoff(n, retryAfter)
		}
		if end != nil {
			end(a, r.Outcome)
		}
		o.attempt(d, a)
		if r.Outcome != "" {
			return done(r)
		}
		if err := s.sleep(ctx, a.Wait); err != nil {
			r.Outcome, r.Err = AbandonedShutdown, errShutdown
			return done(r)
		}
	}
}

var errShutdown = errors.New("the delivery queue closed before the delivery went out")

// attempt POSTs d once, the n-th time. It returns the final outcome, or ""
// when the attempt may be retried, with the receiver's Retry-After (0 when
// none), and what o's StartAttempt returned, for send to end the attempt.
func (s *Sender) attempt(ctx context.Context, d *Delivery, shownURL string, o Observer, n int) (_ Attempt, _ Outcome, _ time.Duration, end func(Attempt, Outcome)) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.URL, bytes.NewReader(d.Body))
	if err != nil {
		return Attempt{Err: fmt.Errorf("post %s: cannot build the request", shownURL)}, Failed, 0, nil
	}
	for k, v := range d.Header {
		req.Header[k] = v
	}
	end = o.startAttempt(d, n, req.Header)
	start := time.Now()
	resp, err := s.client.Do(req)
	if err != nil {
		a := Attempt{Latency: time.Since(start), Err: describe(shownURL, err)}
		var perr *PolicyError
		var certErr *tls.CertificateVerificationError
		switch {
		case errors.As(err, &perr):
			refused := *perr
			refused.URL = shownURL
			a.Err = &refused
			return a, RefusedPolicy, 0, end
		case errors.As(err, &certErr):
			// A certificate that does not verify will not verify on retry.
			return a, Failed, 0, end
		}
		return a, "", 0, end
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		// Read to the end (bounded) so that the connection can be reused.
		// Not a 101's: net/http hands its connection to the body's reader
		// outside ctx, so the drain would last as long as the receiver
		// held it.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxDiscardBytes))
	}
	resp.Body.Close()
	a := Attempt{Status: resp.StatusCode, Latency: time.Since(start)}
	switch code := resp.StatusCode; {
	case code == http.StatusSwitchingProtocols:
		a.Err = fmt.Errorf("post %s: the receiver answered %s, a protocol switch a delivery never asks for", shownURL, resp.Status)
		return a, Rejected, 0, end
	case code >= 200 && code < 300:
		return a, Delivered, 0, end
	case code == http.StatusTooManyRequests, code == http.StatusRequestTimeout, code >= 500:
		a.Err = fmt.Errorf("post %s: the receiver answered %s", shownURL, resp.Status)
		return a, "", s.retryAfter(resp.Header.Get("Retry-After")), end
	case code >= 300 && code < 400:
		a.Err = fmt.Errorf("post %s: the receiver answered %s, a redirect, which is not followed: register the URL it points to", shownURL, resp.Status)
		return a, Rejected, 0, end
	default:
		a.Err = fmt.Errorf("post %s: the receiver answered %s", shownURL, resp.Status)
		return a, Rejected, 0, end
	}
}

// describe turns a client error into one that does not repeat the URL's
// query (url.Error would).
func describe(shownURL string, err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("post %s: no answer within the attempt timeout: %w", shownURL, err)
	}
	return fmt.Errorf("post %s: %w", shownURL, err)
}

// backoff returns the wait after the n-th failed attempt: the receiver's
// Retry-After when it sent one, else full jitter over an exponential bound,
// both capped at backoffMax.
func (s *Sender) backoff(n int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		return min(retryAfter, s.backoffMax)
	}
	bound := s.backoffBase
	for i := 1; i < n && bound < s.backoffMax; i++ {
		bound *= 2
	}
	return s.jitter(min(bound, s.backoffMax))
}

// retryAfter reads a Retry-After header: delay-seconds or an HTTP-date.
// It returns 0 when absent, unreadable or in the past.
func (s *Sender) retryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		if secs > int64(s.backoffMax/time.Second)+1 {
			return s.backoffMax
		}
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(s.now()); d > 0 {
			return d
		}
	}
	return 0
}

func sleepContext(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
