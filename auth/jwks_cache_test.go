package auth

import (
	"bytes"
	"context"
	"crypto/elliptic"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func jwksConfig(url string, algorithms ...string) Config {
	return Config{Issuer: testIssuer, Algorithms: algorithms, JWKSURL: url}
}

// jwksVerifier is a verifier, on a fake clock, of tokens signed with
// algorithms by the keys srv serves.
func jwksVerifier(t *testing.T, srv *httptest.Server, algorithms ...string) (*Verifier, *fakeClock) {
	t.Helper()
	clock := newFakeClock()
	return mustVerifier(t, jwksConfig(srv.URL, algorithms...), clock, srv.Client()), clock
}

func TestJWKSKeyRotation(t *testing.T) {
	t.Parallel()
	oldKey := testKey{kid: "2029", method: jwt.SigningMethodRS256, private: rsaPrimary()}
	newKey := testKey{kid: "2030", method: jwt.SigningMethodRS256, private: rsaRotated()}
	srv, h := newJWKSServer(t, oldKey)
	v, clock := jwksVerifier(t, srv, "RS256")

	verify := func(k testKey) error {
		_, err := v.Verify(context.Background(), "Bearer "+sign(t, k, validClaims(clock.Now())))
		return err
	}
	if err := verify(oldKey); err != nil {
		t.Fatalf("old key before rotation: %v", err)
	}
	h.set(jwksBody(t, jwksOf(t, newKey)...), http.StatusOK)

	// Within jwks_min_refetch of the first fetch the new kid is unknown.
	clock.Advance(DefaultJWKSMinRefetch - time.Second)
	wantReason(t, verify(newKey), ReasonUnknownKey, "")
	if got := h.fetches.Load(); got != 1 {
		t.Fatalf("fetches = %d, want 1 (refetch not rate limited)", got)
	}

	clock.Advance(time.Second)
	if err := verify(newKey); err != nil {
		t.Fatalf("new key after the rate limit: %v", err)
	}
	if got := h.fetches.Load(); got != 2 {
		t.Fatalf("fetches = %d, want 2", got)
	}
	// The old key left the set with the refetch.
	wantReason(t, verify(oldKey), ReasonUnknownKey, "")
	if got := h.fetches.Load(); got != 2 {
		t.Fatalf("fetches = %d, want 2 (refetch not rate limited)", got)
	}
}

func TestJWKSUnknownKIDBurstFetchesOnce(t *testing.T) {
	t.Parallel()
	oldKey := testKey{kid: "old", method: jwt.SigningMethodES256, private: newECKey(t, elliptic.P256())}
	newKey := testKey{kid: "new", method: jwt.SigningMethodES256, private: newECKey(t, elliptic.P256())}
	srv, h := newJWKSServer(t, oldKey)
	v, clock := jwksVerifier(t, srv, "ES256")
	h.set(jwksBody(t, jwksOf(t, oldKey, newKey)...), http.StatusOK)
	clock.Advance(DefaultJWKSMinRefetch)

	token := "Bearer " + sign(t, newKey, validClaims(clock.Now()))
	const burst = 50
	errs := make(chan error, burst)
	var wg sync.WaitGroup
	for range burst {
		wg.Go(func() {
			_, err := v.Verify(context.Background(), token)
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("Verify: %v", err)
		}
	}
	if got := h.fetches.Load(); got != 2 {
		t.Fatalf("fetches = %d, want 2: one at New and one for the whole burst", got)
	}
}

// roundTripperFunc adapts a function to http.RoundTripper.
type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// handlerClient serves requests from h in memory, so that it works inside a
// synctest bubble where loopback sockets would not.
func handlerClient(h http.Handler) *http.Client {
	return &http.Client{Transport: roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		return rec.Result(), nil
	})}
}

// The burst test above cannot prove its callers overlapped. Here the one
// fetch is held until every caller is blocked, so all 50 must be waiting on
// it together.
func TestJWKSBurstSharesOneInflightFetch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		key := testKey{kid: "k", method: jwt.SigningMethodEdDSA, private: newEdKey(t)}
		h := &jwksHandler{}
		h.set(jwksBody(t), http.StatusOK) // empty set: first fetch fails
		release := make(chan struct{})
		var gate atomic.Bool
		client := handlerClient(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if gate.Load() {
				<-release
			}
			h.ServeHTTP(w, r)
		}))
		v, err := New(context.Background(), jwksConfig("https://issuer.test/jwks", "EdDSA"), testAudience, client)
		if err != nil {
			t.Fatal(err)
		}
		defer v.Close()
		h.set(jwksBody(t, jwksOf(t, key)...), http.StatusOK)
		gate.Store(true)
		time.Sleep(DefaultJWKSMinRefetch)

		token := "Bearer " + sign(t, key, validClaims(time.Now()))
		const burst = 50
		errs := make(chan error, burst)
		for range burst {
			go func() {
				_, err := v.Verify(context.Background(), token)
				errs <- err
			}()
		}
		synctest.Wait() // every caller is now blocked on the held fetch
		if got := len(errs); got != 0 {
			t.Fatalf("%d callers returned before the fetch finished", got)
		}
		close(release)
		for range burst {
			if err := <-errs; err != nil {
				t.Errorf("Verify: %v", err)
			}
		}
		if got := h.fetches.Load(); got != 2 {
			t.Fatalf("fetches = %d, want 2", got)
		}
	})
}

func TestJWKSServerDown(t *testing.T) {
	t.Parallel()
	key := testKey{kid: "k", method: jwt.SigningMethodES256, private: newECKey(t, elliptic.P256())}
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens on url any more

	clock := newFakeClock()
	v := mustVerifier(t, jwksConfig(url, "ES256"), clock, nil)
	for _, k := range []testKey{key, {method: key.method, private: key.private}} {
		token := sign(t, k, validClaims(clock.Now()))
		wantVerify(t, v, token, ReasonKeysUnavailable, "JWKS server down")
		clock.Advance(DefaultJWKSMinRefetch)
	}
}

func TestJWKSErrorStatusKeepsCachedKeys(t *testing.T) {
	t.Parallel()
	key := testKey{kid: "k", method: jwt.SigningMethodES256, private: newECKey(t, elliptic.P256())}
	srv, h := newJWKSServer(t, key)
	v, clock := jwksVerifier(t, srv, "ES256")
	h.set([]byte("upstream sad"), http.StatusServiceUnavailable)
	clock.Advance(DefaultJWKSMinRefetch)

	// The last good set is held, so a kid outside it is the token's fault
	// (a 401 invalid_token), not an outage; the log still names the cause.
	unknown := sign(t, testKey{kid: "rotated", method: key.method, private: key.private}, validClaims(clock.Now()))
	err := wantVerify(t, v, unknown, ReasonUnknownKey, "rotated kid while the JWKS answers 503")
	if !strings.Contains(err.Error(), "503") {
		t.Fatalf("error %q does not name the status", err)
	}
	if h.fetches.Load() != 2 {
		t.Fatalf("fetches = %d, want 2", h.fetches.Load())
	}
	if _, err := v.Verify(context.Background(), "Bearer "+sign(t, key, validClaims(clock.Now()))); err != nil {
		t.Fatalf("cached key while the JWKS is down: %v", err)
	}
}

func TestJWKSResponseTooLarge(t *testing.T) {
	t.Parallel()
	key := testKey{kid: "k", method: jwt.SigningMethodES256, private: newECKey(t, elliptic.P256())}
	body := jwksBody(t, jwksOf(t, key)...)
	// Valid JSON, so only the size limit can refuse it.
	padded := append(bytes.TrimSuffix(body, []byte("}")), []byte(`,"pad":"`+strings.Repeat("x", maxJWKSBytes)+`"}`)...)
	h := &jwksHandler{}
	h.set(padded, http.StatusOK)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)

	v, clock := jwksVerifier(t, srv, "ES256")
	token := sign(t, key, validClaims(clock.Now()))
	err := wantVerify(t, v, token, ReasonKeysUnavailable, "JWKS too large")
	if !strings.Contains(err.Error(), "exceeds") {
		t.Fatalf("error %q does not mention the size limit", err)
	}
	h.set(body, http.StatusOK)
	clock.Advance(DefaultJWKSMinRefetch)
	if _, err := v.Verify(context.Background(), "Bearer "+token); err != nil {
		t.Fatalf("after the set shrank: %v", err)
	}
}

func TestJWKSFetchTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hang := make(chan struct{})
		defer close(hang)
		client := &http.Client{Transport: roundTripperFunc(func(r *http.Request) (*http.Response, error) {
			select {
			case <-r.Context().Done():
				return nil, r.Context().Err()
			case <-hang:
				return nil, io.ErrUnexpectedEOF
			}
		})}
		start := time.Now()
		v, err := New(context.Background(), jwksConfig("https://issuer.test/jwks", "EdDSA"), testAudience, client)
		if err != nil {
			t.Fatal(err)
		}
		defer v.Close()
		if got := time.Since(start); got != jwksFetchTimeout {
			t.Fatalf("first fetch gave up after %v, want %v", got, jwksFetchTimeout)
		}
		token := sign(t, testKey{kid: "k", method: jwt.SigningMethodEdDSA, private: newEdKey(t)}, validClaims(time.Now()))
		wantVerify(t, v, token, ReasonKeysUnavailable, "first fetch timed out")
	})
}

func TestJWKSBackgroundRefreshAndClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		oldKey := testKey{kid: "old", method: jwt.SigningMethodEdDSA, private: newEdKey(t)}
		newKey := testKey{kid: "new", method: jwt.SigningMethodEdDSA, private: newEdKey(t)}
		h := &jwksHandler{}
		h.set(jwksBody(t, jwksOf(t, oldKey)...), http.StatusOK)
		cfg := jwksConfig("https://issuer.test/jwks", "EdDSA")
		// Longer than the refresh, so that only the background refresh can
		// pick up the new key.
		cfg.JWKSMinRefetch = MaxJWKSMinRefetch
		cfg.JWKSRefresh = MaxJWKSMinRefetch / 2
		v, err := New(context.Background(), cfg, testAudience, handlerClient(h))
		if err != nil {
			t.Fatal(err)
		}
		h.set(jwksBody(t, jwksOf(t, newKey)...), http.StatusOK)

		verify := func() error {
			_, err := v.Verify(context.Background(), "Bearer "+sign(t, newKey, validClaims(time.Now())))
			return err
		}
		wantReason(t, verify(), ReasonUnknownKey, "")

		time.Sleep(cfg.JWKSRefresh)
		synctest.Wait()
		if got := h.fetches.Load(); got != 2 {
			t.Fatalf("fetches after one interval = %d, want 2", got)
		}
		if err := verify(); err != nil {
			t.Fatalf("new key after the background refresh: %v", err)
		}

		v.Close()
		v.Close() // idempotent
		time.Sleep(10 * DefaultJWKSRefresh)
		synctest.Wait()
		if got := h.fetches.Load(); got != 2 {
			t.Fatalf("fetches after Close = %d, want 2", got)
		}
		if err := verify(); err != nil {
			t.Fatalf("cached key after Close: %v", err)
		}
		time.Sleep(cfg.JWKSMinRefetch)
		unknown := sign(t, testKey{kid: "unknown", method: newKey.method, private: newKey.private}, validClaims(time.Now()))
		err = wantVerify(t, v, unknown, ReasonUnknownKey, "unknown kid after Close")
		if !errors.Is(err, errJWKSClosed) {
			t.Fatalf("unknown kid after Close: %v, want errJWKSClosed", err)
		}
		if got := h.fetches.Load(); got != 2 {
			t.Fatalf("fetches after Close = %d, want 2", got)
		}
		// synctest.Test fails if the refresh goroutine outlives the bubble.
	})
}

// Issue 22 item 9: once a key set was loaded, an outage of the JWKS server
// must not turn forged tokens into "keys unavailable" (a 503 the caller may
// take for the gateway's fault and retry); only a gateway that never had a
// set answers that.
func TestJWKSOutageKeepsTheLastSet(t *testing.T) {
	t.Parallel()
	key := testKey{kid: "k", method: jwt.SigningMethodES256, private: newECKey(t, elliptic.P256())}
	srv, h := newJWKSServer(t, key)
	v, clock := jwksVerifier(t, srv, "ES256", "EdDSA")
	srv.Close() // the issuer goes away after the first fetch

	verify := func(k testKey) (string, error) {
		token := sign(t, k, validClaims(clock.Now()))
		_, err := v.Verify(context.Background(), "Bearer "+token)
		return token, err
	}
	forged := testKey{kid: "forged", method: key.method, private: newECKey(t, elliptic.P256())}
	for _, step := range []string{"refetch fails", "refetch rate-limited"} {
		if step == "refetch fails" {
			clock.Advance(DefaultJWKSMinRefetch)
		}
		token, err := verify(forged)
		wantReason(t, err, ReasonUnknownKey, token)
		if got := ReasonUnknownKey.OAuthError(); got != "invalid_token" {
			t.Fatalf("%s: OAuthError = %q", step, got)
		}
		if _, err := verify(key); err != nil {
			t.Fatalf("%s: the held key: %v", step, err)
		}
		// No kid: the held set's keys of the algorithm are tried.
		token, err = verify(testKey{method: forged.method, private: forged.private})
		wantReason(t, err, ReasonBadSignature, token)
		// No held key can verify EdDSA, which is allowed.
		token, err = verify(testKey{kid: "ed", method: jwt.SigningMethodEdDSA, private: newEdKey(t)})
		wantReason(t, err, ReasonUnknownKey, token)
	}
	if got := h.fetches.Load(); got != 1 {
		t.Fatalf("fetches served = %d, want 1 (only the first, before the outage)", got)
	}
	if err := v.jwks.lastError(); err == nil {
		t.Fatal("the refetch during the outage did not fail; the test proves nothing")
	}
}

func TestJWKSNeverLoadedIsUnavailable(t *testing.T) {
	t.Parallel()
	key := testKey{kid: "k", method: jwt.SigningMethodES256, private: newECKey(t, elliptic.P256())}
	h := &jwksHandler{}
	h.set([]byte("down"), http.StatusBadGateway)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	v, clock := jwksVerifier(t, srv, "ES256")
	for _, k := range []testKey{key, {method: key.method, private: key.private}} {
		token := sign(t, k, validClaims(clock.Now()))
		wantVerify(t, v, token, ReasonKeysUnavailable, "never loaded")
		clock.Advance(DefaultJWKSMinRefetch)
	}
	// The issuer comes back: the next refetch loads the set.
	h.set(jwksBody(t, jwksOf(t, key)...), http.StatusOK)
	if _, err := v.Verify(context.Background(), "Bearer "+sign(t, key, validClaims(clock.Now()))); err != nil {
		t.Fatalf("after the issuer came back: %v", err)
	}
}
