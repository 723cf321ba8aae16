package canned

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"time"
)

// Claims are the claims of a benchmark caller's token.
type Claims struct {
	Issuer   string `json:"iss"`
	Audience string `json:"aud"`
	Subject  string `json:"sub"`
	Expires  int64  `json:"exp"`
	IssuedAt int64  `json:"iat"`
}

// HS256Token signs c with secret as a compact JWS, the way an identity
// provider sharing an HMAC secret with the gateway would.
func HS256Token(secret []byte, c Claims) string {
	enc := base64.RawURLEncoding
	payload, _ := json.Marshal(c) // strings and numbers: cannot fail
	signing := enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." + enc.EncodeToString(payload)
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(signing))
	return signing + "." + enc.EncodeToString(mac.Sum(nil))
}

// BenchClaims are claims valid for a day from now.
func BenchClaims(issuer, audience string) Claims {
	now := time.Now()
	return Claims{Issuer: issuer, Audience: audience, Subject: "loadbench", IssuedAt: now.Unix(), Expires: now.Add(24 * time.Hour).Unix()}
}
