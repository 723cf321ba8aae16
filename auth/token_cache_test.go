package auth

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/a2agate/gateway/internal/testfiles"
)

// TestVerifyRemembersOnlyWhatTheParserWouldAccept: a remembered token is
// refused as soon as the parser would refuse it (expiry, with the leeway),
// a token that differs from a remembered one by a byte is checked in full,
// and refusals are not remembered.
func TestVerifyRemembersOnlyWhatTheParserWouldAccept(t *testing.T) {
	t.Parallel()
	key, cfg := es256Issuer(t)
	clock := newFakeClock()
	v := mustVerifier(t, cfg, clock, nil) // leeway 30s
	ctx := context.Background()
	now := clock.Now()
	token := sign(t, key, with(validClaims(now), "exp", now.Add(time.Minute).Unix()))
	for range 2 {
		if p, err := v.Verify(ctx, "Bearer "+token); err != nil || p.Subject != "alice" {
			t.Fatalf("Verify = %+v, %v", p, err)
		}
	}
	if _, ok := v.accepted.get(token, clock.Now()); !ok {
		t.Fatal("an accepted token was not remembered")
	}
	flip := byte('A')
	if token[len(token)-2] == flip {
		flip = 'B'
	}
	tampered := token[:len(token)-2] + string(flip) + token[len(token)-1:]
	wantVerify(t, v, tampered, ReasonBadSignature, "a byte changed")
	if _, ok := v.accepted.get(tampered, clock.Now()); ok {
		t.Fatal("a refused token was remembered")
	}
	clock.Advance(time.Minute + 29*time.Second) // exp passed, within the leeway
	if _, err := v.Verify(ctx, "Bearer "+token); err != nil {
		t.Fatalf("within the leeway: %v", err)
	}
	clock.Advance(2 * time.Second)
	wantVerify(t, v, token, ReasonExpired, "past the leeway")
}

func TestTokenCacheBounds(t *testing.T) {
	t.Parallel()
	var c tokenCache
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	p := Principal{Issuer: "i", Subject: "s"}
	c.put("tok", acceptedToken{principal: p, validFrom: t0, validUntil: t0.Add(time.Hour), trustedUntil: t0.Add(maxCacheAge)})
	for _, tt := range []struct {
		at   time.Time
		want bool
	}{
		{t0.Add(-time.Second), false}, // before nbf
		{t0, true},
		{t0.Add(maxCacheAge - time.Nanosecond), true},
		{t0.Add(maxCacheAge), false}, // trusted no longer without a fresh check
	} {
		if _, ok := c.get("tok", tt.at); ok != tt.want {
			t.Errorf("get at %s = %v, want %v", tt.at.Sub(t0), ok, tt.want)
		}
	}
	for i := range maxCachedTokens + 10 {
		c.put(fmt.Sprint(i), acceptedToken{principal: p, validUntil: t0.Add(time.Hour), trustedUntil: t0.Add(time.Hour)})
	}
	if n := len(c.entries); n > maxCachedTokens {
		t.Errorf("%d entries, bound %d", n, maxCachedTokens)
	}
}

// BenchmarkVerify is one authenticated call's token check: the first sight
// of a token, and the same token again.
//
//	go test -run '^$' -bench Verify ./auth
func BenchmarkVerify(b *testing.B) {
	key := testKey{method: jwt.SigningMethodRS256, private: rsaPrimary()}
	clock := newFakeClock()
	cfg := Config{Issuer: testIssuer, Algorithms: []string{"RS256"},
		PublicKeyFiles: []string{testfiles.Write(b, "rsa.pem", pemPublicKey(b, key.public()))}}
	v, err := newVerifier(context.Background(), cfg, testAudience, nil, clock.Now)
	if err != nil {
		b.Fatal(err)
	}
	defer v.Close()
	claims := validClaims(clock.Now())
	tok, err := jwt.NewWithClaims(key.method, claims).SignedString(key.private)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("first", func(b *testing.B) {
		for b.Loop() {
			v.accepted = tokenCache{}
			if _, err := v.Verify(context.Background(), "Bearer "+tok); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("again", func(b *testing.B) {
		for b.Loop() {
			if _, err := v.Verify(context.Background(), "Bearer "+tok); err != nil {
				b.Fatal(err)
			}
		}
	})
}
