package push

import (
	"net/http"
	"testing"

	"github.com/a2agate/gateway/dialect"
)

func TestHeaders(t *testing.T) {
	cases := []struct {
		name  string
		d     dialect.ID
		token string
		auth  *Auth
		want  http.Header
	}{
		{"0.x token", dialect.V03, "tok", nil, http.Header{
			"Content-Type": {"application/json"}, "X-A2a-Notification-Token": {"tok"}}},
		{"1.0 token in both spellings", dialect.V10, "tok", nil, http.Header{
			"Content-Type": {"application/json"}, "X-A2a-Notification-Token": {"tok"}, "A2a-Notification-Token": {"tok"}}},
		{"0.x bearer", dialect.V03, "", &Auth{Schemes: []string{"bearer"}, Credentials: "c1"}, http.Header{
			"Content-Type": {"application/json"}, "Authorization": {"Bearer c1"}}},
		{"1.0 basic and token", dialect.V10, "tok", &Auth{Schemes: []string{"Basic"}, Credentials: "dTpw"}, http.Header{
			"Content-Type": {"application/json"}, "X-A2a-Notification-Token": {"tok"}, "A2a-Notification-Token": {"tok"}, "Authorization": {"Basic dTpw"}}},
		{"first sendable scheme wins", dialect.V03, "", &Auth{Schemes: []string{"ApiKey", "Basic", "Bearer"}, Credentials: "c"}, http.Header{
			"Content-Type": {"application/json"}, "Authorization": {"Basic c"}}},
		{"other schemes not sent", dialect.V10, "", &Auth{Schemes: []string{"ApiKey", "OAuth2"}, Credentials: "c"}, http.Header{
			"Content-Type": {"application/json"}}},
		{"no credentials, no header", dialect.V10, "", &Auth{Schemes: []string{"Bearer"}}, http.Header{
			"Content-Type": {"application/json"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Headers(c.d, c.token, c.auth)
			if len(got) != len(c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
			for k, v := range c.want {
				if g := got.Values(k); len(g) != 1 || g[0] != v[0] {
					t.Errorf("%s = %q, want %q", k, g, v)
				}
			}
		})
	}
}
