package auth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

const (
	// maxJWKSBytes bounds a key set response; real sets are a few KiB.
	maxJWKSBytes = 1 << 20
	// jwksFetchTimeout bounds one fetch, including reading the body.
	jwksFetchTimeout = 10 * time.Second
	// maxJWKSRedirects bounds the redirects one fetch follows.
	maxJWKSRedirects = 5
)

// errJWKSDowngrade refuses a redirect from https to plain http: whoever
// can alter the key set can mint tokens, so the configured https must hold
// to the end.
var errJWKSDowngrade = errors.New("the https key set URL redirected to a URL that is not https")

// jwksClient returns a copy of client whose redirects keep to https when
// the key set URL is https, and stop after maxJWKSRedirects; the client's
// own redirect policy, if any, is asked after that.
func jwksClient(client *http.Client) *http.Client {
	c := *client
	own := client.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if via[0].URL.Scheme == "https" && req.URL.Scheme != "https" {
			return errJWKSDowngrade
		}
		if len(via) >= maxJWKSRedirects {
			return fmt.Errorf("stopped after %d redirects", len(via))
		}
		if own != nil {
			return own(req, via)
		}
		return nil
	}
	return &c
}

// jwksCache holds the issuer's key set and keeps it fresh: a background
// refresh every interval, plus on-demand refetches when a token names an
// unknown kid (rate limited by minRefetch). Concurrent refetches share one
// HTTP request. A jwksCache is safe for concurrent use.
type jwksCache struct {
	url        string
	client     *http.Client
	minRefetch time.Duration
	now        func() time.Time

	// keys is the last key set fetched successfully; nil before the first.
	keys atomic.Pointer[keySet]

	mu sync.Mutex
	// inflight is closed when the running fetch ends; nil when none runs.
	inflight chan struct{}
	// lastAttempt is when the latest fetch started; zero before the first.
	lastAttempt time.Time
	// lastErr is the outcome of the latest completed fetch.
	lastErr error
	// closed is set by close, under mu, so that no fetch starts while close
	// waits for the running ones.
	closed bool

	// ctx bounds every fetch and the refresh loop; close cancels it.
	ctx       context.Context
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	closeOnce sync.Once
}

func newJWKSCache(url string, client *http.Client, minRefetch time.Duration, now func() time.Time) *jwksCache {
	ctx, cancel := context.WithCancel(context.Background())
	return &jwksCache{
		url:        url,
		client:     jwksClient(client),
		minRefetch: minRefetch,
		now:        now,
		ctx:        ctx,
		cancel:     cancel,
	}
}

// current returns the cached key set, empty before the first successful fetch.
func (c *jwksCache) current() keySet {
	if set := c.keys.Load(); set != nil {
		return *set
	}
	return nil
}

// loaded reports whether a key set was ever fetched successfully.
func (c *jwksCache) loaded() bool { return c.keys.Load() != nil }

// lastError returns the error of the latest fetch, nil if it succeeded.
func (c *jwksCache) lastError() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastErr
}

// startRefresh refetches the set every interval until close.
func (c *jwksCache) startRefresh(interval time.Duration) {
	c.wg.Go(func() {
		ticker := time.NewTicker(interval)
		defer ticker.Stop()
		for {
			select {
			case <-c.ctx.Done():
				return
			case <-ticker.C:
				c.refetch(c.ctx, true)
			}
		}
	})
}

// refetch fetches the key set unless a fetch started less than minRefetch
// ago; force skips that check. When a fetch is already running, refetch
// joins it instead of starting another. It returns once the fetch is over or
// ctx is done; the fetch itself runs on until it ends, bounded by
// jwksFetchTimeout, since other callers may be waiting for it.
func (c *jwksCache) refetch(ctx context.Context, force bool) {
	c.mu.Lock()
	if c.closed {
		c.lastErr = errJWKSClosed
		c.mu.Unlock()
		return
	}
	done := c.inflight
	if done == nil {
		if !force && !c.lastAttempt.IsZero() && c.now().Sub(c.lastAttempt) < c.minRefetch {
			c.mu.Unlock()
			return
		}
		c.lastAttempt = c.now()
		done = make(chan struct{})
		c.inflight = done
		c.wg.Go(func() {
			err := c.fetch()
			c.mu.Lock()
			c.lastErr = err
			c.inflight = nil
			c.mu.Unlock()
			close(done)
		})
	}
	c.mu.Unlock()

	select {
	case <-done:
	case <-ctx.Done():
	}
}

// fetch downloads and parses the key set, replacing the cached set on
// success. On failure the previous set stays in use.
func (c *jwksCache) fetch() error {
	ctx, cancel := context.WithTimeout(c.ctx, jwksFetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url, nil)
	if err != nil {
		return fmt.Errorf("fetch key set: %w", err)
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	resp, err := c.client.Do(req)
	if err != nil {
		return fmt.Errorf("fetch key set: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("fetch key set: unexpected status %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes+1))
	if err != nil {
		return fmt.Errorf("fetch key set: %w", err)
	}
	if len(body) > maxJWKSBytes {
		return fmt.Errorf("fetch key set: response exceeds %d bytes", maxJWKSBytes)
	}
	set, err := parseJWKS(body)
	if err != nil {
		return fmt.Errorf("fetch key set: %w", err)
	}
	c.keys.Store(&set)
	return nil
}

// close stops the refresh loop and any running fetch, and waits for them.
func (c *jwksCache) close() {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closed = true
		c.mu.Unlock()
		c.cancel()
		c.wg.Wait()
	})
}

// errJWKSClosed is reported for fetches attempted after close.
var errJWKSClosed = errors.New("verifier is closed")
