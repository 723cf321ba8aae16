package proxy

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/auth"
	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/testlog"
)

// headerRecorder is a backend that answers every JSON-RPC call with "Task
// not found" and keeps the Authorization values of each request it got.
type headerRecorder struct {
	mu  sync.Mutex
	got [][]string
}

func (h *headerRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	h.got = append(h.got, append([]string(nil), r.Header.Values("Authorization")...))
	h.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"jsonrpc":"2.0","id":`+gjson.GetBytes(body, "id").Raw+`,"error":{"code":-32001,"message":"Task not found"}}`)
}

func (h *headerRecorder) take() [][]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	got := h.got
	h.got = nil
	return got
}

// postHeaders sends body with exactly the given header lines, in order;
// keys are written as given, so two spellings of one name reach the wire.
func postHeaders(t *testing.T, url, body string, lines ...[2]string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for _, l := range lines {
		req.Header[l[0]] = append(req.Header[l[0]], l[1])
	}
	res, b := roundTrip(t, req)
	return res.StatusCode, res.Header, b
}

// Issue 22 item 4: with forward_authorization the gateway verified the first
// Authorization header and forwarded all of them, so a backend reading
// another one acted on a credential nobody checked.
func TestAuthRefusesSeveralCredentials(t *testing.T) {
	for _, version := range []dialect.Version{dialect.Version03, dialect.Version10} {
		rec := &headerRecorder{}
		g := newGateway(t, rec, version, withAuth(t), func(a *AgentConfig) {
			a.Tasks.AllowUnknown = true
			a.Backend.ForwardAuthorization = true
		})
		valid := "Bearer " + token(t, "alice")
		basic := "Basic YWRtaW46YWRtaW4="
		cases := []struct {
			name  string
			lines [][2]string
		}{
			{"bearer then basic", [][2]string{{"Authorization", valid}, {"Authorization", basic}}},
			{"basic then bearer", [][2]string{{"Authorization", basic}, {"Authorization", valid}}},
			{"the same bearer twice", [][2]string{{"Authorization", valid}, {"Authorization", valid}}},
			{"two bearers", [][2]string{{"Authorization", valid}, {"Authorization", "Bearer " + token(t, "mallory")}}},
			{"second in lower case", [][2]string{{"Authorization", valid}, {"authorization", basic}}},
			{"second empty", [][2]string{{"Authorization", valid}, {"Authorization", ""}}},
			{"joined by a comma", [][2]string{{"Authorization", valid + ", " + basic}}},
			{"joined by a comma, basic first", [][2]string{{"Authorization", basic + ", " + valid}}},
		}
		for _, tc := range cases {
			for _, c := range callers {
				t.Run(string(version)+"/"+tc.name+"/"+c.d.String(), func(t *testing.T) {
					status, h, b := postHeaders(t, g.url, rpc(c.method(dialect.GetTask), `{"id":"t"}`), tc.lines...)
					if status != http.StatusUnauthorized {
						t.Fatalf("HTTP %d, want 401: %s", status, b)
					}
					www := h.Get("WWW-Authenticate")
					if !strings.HasPrefix(www, "Bearer ") || !strings.Contains(www, `error="invalid_request"`) || !strings.Contains(www, `error_description="`) {
						t.Fatalf("WWW-Authenticate %q, want a Bearer invalid_request challenge", www)
					}
					wantErrorSaying(t, gjson.ParseBytes(b), c.d, -31401, "more than one Authorization credential")
					if strings.Contains(string(b), strings.TrimPrefix(valid, "Bearer ")) || strings.Contains(string(b), basic) {
						t.Fatalf("the answer echoes a credential: %s", b)
					}
					if got := rec.take(); len(got) != 0 {
						t.Fatalf("the backend was called with %q", got)
					}
				})
			}
		}
		// One header: forwarded as verified, and only it.
		for _, c := range callers {
			status, _, b := postHeaders(t, g.url, rpc(c.method(dialect.GetTask), `{"id":"t"}`), [2]string{"Authorization", valid})
			if status != http.StatusOK {
				t.Fatalf("%s: one valid token: HTTP %d: %s", version, status, b)
			}
			got := rec.take()
			if len(got) != 1 || len(got[0]) != 1 || got[0][0] != valid {
				t.Fatalf("%s: the backend got Authorization %q, want exactly the verified token", version, got)
			}
		}
	}
}

// TestAuthChallengeCodes: RFC 6750 §3.1 invalid_request for a request whose
// Authorization header is not "Bearer <b64token>", invalid_token for a
// token that was read and refused, including one that is not a JWT.
func TestAuthChallengeCodes(t *testing.T) {
	g := newAuthGateway(t, backends[0])
	b64 := base64.RawURLEncoding.EncodeToString
	hs512, err := jwt.NewWithClaims(jwt.SigningMethodHS512, jwt.MapClaims{"iss": testIssuer, "sub": "alice", "aud": "http://gateway.test/", "exp": time.Now().Add(time.Hour).Unix()}).SignedString([]byte(testSecret))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ name, header, oauthErr string }{
		{"basic", "Basic YWRtaW46YWRtaW4=", "invalid_request"},
		{"scheme only", "Bearer", "invalid_request"},
		{"tab after the scheme", "Bearer\t" + token(t, "alice"), "invalid_request"},
		{"space inside the token", "Bearer " + token(t, "alice") + " x", "invalid_request"},
		{"one segment", "Bearer notajwt", "invalid_token"},
		{"two segments", "Bearer e30.e30", "invalid_token"},
		{"four segments", "Bearer " + token(t, "alice") + ".e30", "invalid_token"},
		{"header not base64url", "Bearer eyJhbGciOiJIUzI1NiJ9+/.e30.c2ln", "invalid_token"},
		{"header not JSON", "Bearer " + b64([]byte("alg=HS256")) + ".e30.c2ln", "invalid_token"},
		{"payload not JSON", "Bearer " + b64([]byte(`{"alg":"HS256"}`)) + "." + b64([]byte("sub=admin")) + ".c2ln", "invalid_token"},
		{"token of 20 KiB", "Bearer " + strings.Repeat("a", 20<<10), "invalid_token"},
		{"alg none", "Bearer " + noneToken(t), "invalid_token"},
		{"alg outside the allow-list", "Bearer " + hs512, "invalid_token"},
		{"kid a path", "Bearer " + b64([]byte(`{"alg":"HS256","kid":"../../etc/passwd"}`)) + ".e30.c2ln", "invalid_token"},
	}
	for _, tc := range cases {
		for _, c := range callers {
			t.Run(tc.name+"/"+c.d.String(), func(t *testing.T) {
				status, h, b := postHeaders(t, g.url, rpc(c.method(dialect.GetTask), `{"id":"t"}`), [2]string{"Authorization", tc.header})
				if status != http.StatusUnauthorized {
					t.Fatalf("HTTP %d, want 401: %s", status, b)
				}
				if www := h.Get("WWW-Authenticate"); !strings.Contains(www, `error="`+tc.oauthErr+`"`) {
					t.Fatalf("WWW-Authenticate %q, want error=%q", www, tc.oauthErr)
				}
				wantError(t, gjson.ParseBytes(b), c.d, -31401)
			})
		}
	}
}

// TestAuthJWKSOutage (issue 22 item 9) at the HTTP boundary: a gateway that
// never loaded its issuer's keys answers 503, one that holds a key set
// answers a token whose kid is not in it with 401 invalid_token even while
// the issuer is down, and keeps accepting tokens of the held keys.
func TestAuthJWKSOutage(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := key.PublicKey.Bytes() // 0x04 || X || Y
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.RawURLEncoding.EncodeToString
	jwks := `{"keys":[{"kty":"EC","crv":"P-256","kid":"k1","use":"sig","x":"` + enc(raw[1:33]) + `","y":"` + enc(raw[33:]) + `"}]}`
	issuer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/jwk-set+json")
		io.WriteString(w, jwks)
	}))
	withJWKS := func(url string) func(*AgentConfig) {
		return func(a *AgentConfig) {
			// jwks_min_refetch 1ns: every unknown kid refetches, and fails.
			a.Auth = &auth.Config{Issuer: testIssuer, Algorithms: []string{"ES256"}, JWKSURL: url, JWKSMinRefetch: time.Nanosecond}
		}
	}
	sign := func(kid string, k *ecdsa.PrivateKey) string {
		tok := jwt.NewWithClaims(jwt.SigningMethodES256, jwt.MapClaims{"iss": testIssuer, "sub": "alice", "aud": "http://gateway.test/", "exp": time.Now().Add(time.Hour).Unix()})
		tok.Header["kid"] = kid
		s, err := tok.SignedString(k)
		if err != nil {
			t.Fatal(err)
		}
		return "Bearer " + s
	}
	other, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	var logs testlog.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	loaded := newGatewayOpts(t, &headerRecorder{}, dialect.Version03, Options{Logger: logger}, withJWKS(issuer.URL), func(a *AgentConfig) { a.Tasks.AllowUnknown = true })
	issuer.Close() // the outage begins after the first fetch
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	never := newGateway(t, &headerRecorder{}, dialect.Version03, withJWKS(down.URL))

	for _, c := range callers {
		body := rpc(c.method(dialect.GetTask), `{"id":"t"}`)
		forged := sign("forged", other)
		status, h, b := postHeaders(t, loaded.url, body, [2]string{"Authorization", forged})
		if status != http.StatusUnauthorized || !strings.Contains(h.Get("WWW-Authenticate"), `error="invalid_token"`) {
			t.Fatalf("%s: unknown kid during an outage: HTTP %d, %q: %s", c.d, status, h.Get("WWW-Authenticate"), b)
		}
		wantError(t, gjson.ParseBytes(b), c.d, -31401)
		// The log tells operators why a new kid cannot be found.
		line := logs.String()
		if !strings.Contains(line, "reason=unknown_key") || !strings.Contains(line, "refreshing the key set failed") {
			t.Fatalf("%s: the log does not name the failed refresh: %s", c.d, line)
		}
		for _, part := range strings.Split(strings.TrimPrefix(forged, "Bearer "), ".") {
			if strings.Contains(line, part) {
				t.Fatalf("%s: the log holds part of the token: %s", c.d, line)
			}
		}
		if status, _, b := postHeaders(t, loaded.url, body, [2]string{"Authorization", sign("k1", key)}); status != http.StatusOK {
			t.Fatalf("%s: held key during an outage: HTTP %d: %s", c.d, status, b)
		}
		status, h, b = postHeaders(t, never.url, body, [2]string{"Authorization", sign("k1", key)})
		if status != http.StatusServiceUnavailable {
			t.Fatalf("%s: never loaded: HTTP %d, want 503: %s", c.d, status, b)
		}
		if www := h.Get("WWW-Authenticate"); www != "" {
			t.Fatalf("%s: the 503 challenges the token: %q", c.d, www)
		}
		if ra := h.Get("Retry-After"); ra != "1" { // jwks_min_refetch 1ns, rounded up
			t.Fatalf("%s: Retry-After %q, want 1", c.d, ra)
		}
		wantError(t, gjson.ParseBytes(b), c.d, -32603)
	}
}
