package auth

import (
	"sync"
	"time"
)

// A caller sends the same token on every call until it expires. Checking
// its signature each time (tens of microseconds for RSA, and a map of
// claims decoded per call) was the largest part of an authenticated call's
// cost in the gateway, so a Verifier remembers the tokens it accepted, by
// their exact text, with the bounds the parser checked: an entry is used
// only while the token itself is still within exp and nbf (with the
// leeway), and for at most maxCacheAge, so a key the issuer withdraws from
// its JWKS stops being honoured within that time. Refusals are never
// remembered.

const (
	// maxCachedTokens bounds the cache; a full cache forgets an entry per
	// new token.
	maxCachedTokens = 10_000
	// maxCacheAge is how long an accepted token is trusted without its
	// signature being checked again.
	maxCacheAge = 5 * time.Minute
)

type acceptedToken struct {
	principal Principal
	// validFrom and validUntil are the instants, leeway applied, between
	// which the parser accepts the token (validFrom zero without nbf).
	validFrom, validUntil time.Time
	// trustedUntil ends the entry's use: maxCacheAge after it was checked.
	trustedUntil time.Time
}

type tokenCache struct {
	mu      sync.Mutex
	entries map[string]acceptedToken
}

// get returns the principal of a token accepted earlier that is still
// within its bounds at now.
func (c *tokenCache) get(raw string, now time.Time) (Principal, bool) {
	c.mu.Lock()
	a, ok := c.entries[raw]
	c.mu.Unlock()
	if !ok || now.Before(a.validFrom) || !now.Before(a.validUntil) || !now.Before(a.trustedUntil) {
		return Principal{}, false
	}
	return a.principal, true
}

func (c *tokenCache) put(raw string, a acceptedToken) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = make(map[string]acceptedToken)
	}
	if len(c.entries) >= maxCachedTokens {
		for k := range c.entries { // an arbitrary one: map order is random
			delete(c.entries, k)
			break
		}
	}
	c.entries[raw] = a
}
