package proxy

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/grpc/codes"

	"github.com/a2agate/gateway/dialect"
)

// TestPushConfigTokenNotAHeaderValue: a push config whose token or
// credentials hold a byte an HTTP header value cannot carry (a control
// byte: CR, LF, NUL, DEL) is refused as invalid params in every binding and
// dialect, set or inline, naming the member: every delivery sends them as a
// header, which net/http refuses to write, so such a config was taken and
// each of its deliveries failed, retried, unseen by the caller.
func TestPushConfigTokenNotAHeaderValue(t *testing.T) {
	g := newGateway(t, backends[1].handler(t, nil), backends[1].version, allowLoopback)
	c10 := callers[1]
	id := c10.task(t, mustResult(t, g.call("1", c10.method(dialect.SendMessage), c10.send("m1", c10.text("input please"), "")))).Get("id").Str
	grpcG := newGRPCGateway(t, g)
	hook := newReceiver(t, 0).url
	for _, bad := range []struct{ name, json, raw string }{
		{"CRLF", `a\r\nX-Injected: 1`, "a\r\nX-Injected: 1"},
		{"NUL", `a\u0000b`, "a\x00b"},
		{"DEL", `a` + "\x7f" + `b`, "a\x7fb"},
	} {
		t.Run(bad.name, func(t *testing.T) {
			for _, member := range []string{"token", "credentials"} {
				for i, c := range callers {
					body := `"url":"` + hook + `","token":"` + bad.json + `"`
					if member == "credentials" {
						scheme := `"scheme":"Bearer"`
						if c.d == dialect.V03 {
							scheme = `"schemes":["Bearer"]`
						}
						body = `"url":"` + hook + `","authentication":{` + scheme + `,"credentials":"` + bad.json + `"}`
					}
					params := `{"taskId":"` + id + `",` + body + `}`
					if c.d == dialect.V03 {
						params = `{"taskId":"` + id + `","pushNotificationConfig":{` + body + `}}`
					}
					wantErrorSaying(t, g.call(strconv.Itoa(10+i), c.method(dialect.CreatePushConfig), params), c.d, -32602, member)
					inline := `"pushNotificationConfig":{` + body + `}`
					if c.d == dialect.V10 {
						inline = `"taskPushNotificationConfig":{` + body + `}`
					}
					wantErrorSaying(t, g.call(strconv.Itoa(20+i), c.method(dialect.SendMessage), c.send("m2"+member, c.text("hi"), inline)), c.d, -32602, member)
				}
				body := `{"url":"` + hook + `","token":"` + bad.json + `"}`
				cfg := &a2apb.TaskPushNotificationConfig{TaskId: id, Url: hook, Token: bad.raw}
				if member == "credentials" {
					body = `{"url":"` + hook + `","authentication":{"scheme":"Bearer","credentials":"` + bad.json + `"}}`
					cfg = &a2apb.TaskPushNotificationConfig{TaskId: id, Url: hook, Authentication: &a2apb.AuthenticationInfo{Scheme: "Bearer", Credentials: bad.raw}}
				}
				status, _, r := restDo(t, g, http.MethodPost, "/tasks/"+id+"/pushNotificationConfigs", "application/json", body, "")
				if status != http.StatusBadRequest || r.Get("error.status").Str != "INVALID_ARGUMENT" || !strings.Contains(r.Get("error.message").Str, member) {
					t.Errorf("REST %s: HTTP %d %s", member, status, r.Raw)
				}
				_, err := grpcG.raw.CreateTaskPushNotificationConfig(context.Background(), cfg)
				if st := wantStatus(t, err, codes.InvalidArgument, "INVALID_PARAMS"); !strings.Contains(st.Message(), member) {
					t.Errorf("gRPC %s: %v", member, err)
				}
			}
		})
	}
	t.Run("a tab and bytes over 0x7f are header bytes", func(t *testing.T) {
		mustResult(t, g.call("30", c10.method(dialect.CreatePushConfig), `{"taskId":"`+id+`","url":"`+hook+`","token":"a\tb é"}`))
	})
}
