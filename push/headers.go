package push

import (
	"net/http"
	"strings"

	"github.com/a2agate/gateway/dialect"
)

// Header names of the notification token. The 0.x spelling is what every 0.x
// sender and the JS and Python 1.0 senders use; the 1.0 spelling is a2a-go
// v2's.
const (
	TokenHeader   = "X-A2A-Notification-Token"
	TokenHeader10 = "A2A-Notification-Token"
)

// ContentType is sent with every delivery, in both dialects. The 1.0 spec
// suggests application/a2a+json, and @a2a-js/sdk 1.3.0 sends it, but a2a-go
// v2.3.1 (the other official 1.0 sender) sends application/json, and a plain
// JSON receiver (express.json(), for one) parses only application/json: it
// is the one type that every receiver written for an official sender accepts.
const ContentType = "application/json"

// authSchemes are the schemes sent as an Authorization header, by their
// lower-case name.
var authSchemes = map[string]string{"bearer": "Bearer", "basic": "Basic"}

// Auth is a push config's authentication: schemes and credentials, as the
// caller set them (0.x: schemes is a list; 1.0: one scheme).
type Auth struct {
	Schemes     []string
	Credentials string
}

// Headers returns the headers a delivery to a caller of dialect d carries,
// the way the official senders set them:
//
//   - @a2a-js/sdk 0.3.14, src/server/push_notification/default_push_notification_sender.ts
//     (dist/server/index.js): Content-Type application/json, the token in
//     X-A2A-Notification-Token; authentication never sent. 0.2.5 has no sender.
//   - @a2a-js/sdk 1.3.0, the same file: Content-Type application/a2a+json
//     (application/json through its 0.3 compat serializer), the token in
//     X-A2A-Notification-Token only when there is no authentication, else
//     "Authorization: <scheme> <credentials>".
//   - a2a-go v2.3.1, a2asrv/push/sender.go: Content-Type application/json, the
//     token in A2A-Notification-Token, "Authorization: Bearer|Basic
//     <credentials>" for those schemes only. a2a-go v0.3.3 (0.x) uses
//     X-A2A-Notification-Token, otherwise the same.
//
// None of them ships a receiver, so receivers are written against one of
// these senders. Toward 0.x the token goes in X-A2A-Notification-Token;
// toward 1.0 in both spellings, which makes receivers written for either
// 1.0 sender find it. The token and the Authorization header are sent
// together when both are set: the caller asked for both.
//
// Credentials become an Authorization header for the Bearer and Basic
// schemes (case-insensitive; the first such scheme listed wins), passed
// as given (Basic credentials are already base64, as the spec has them).
// Other schemes (API keys, OAuth flows, mTLS) name no header the gateway
// could fill, so they are not sent.
func Headers(d dialect.ID, token string, auth *Auth) http.Header {
	h := http.Header{}
	h.Set("Content-Type", ContentType)
	if token != "" {
		h.Set(TokenHeader, token)
		if d == dialect.V10 {
			h.Set(TokenHeader10, token)
		}
	}
	if auth != nil && auth.Credentials != "" {
		for _, s := range auth.Schemes {
			if scheme, ok := authSchemes[strings.ToLower(strings.TrimSpace(s))]; ok {
				h.Set("Authorization", scheme+" "+auth.Credentials)
				break
			}
		}
	}
	return h
}
