package proxy

import (
	"net/http"
	"strings"
	"testing"

	"github.com/a2agate/gateway/dialect"
)

// TestPushConfigMembersNotDropped: the gateway keeps the callers' push
// configs, so a member a push config has no field for is refused naming
// it, in every form a caller sends one (1.0 create, 0.x set inside and
// around pushNotificationConfig, a send's inline config, 0.3 REST), not
// stored without it; a config without one is kept. Before, each was
// answered as set, the member gone.
func TestPushConfigMembersNotDropped(t *testing.T) {
	g := newGateway(t, backends[1].handler(t, nil), dialect.Version10, withAuth(t))
	tok := token(t, "alice")
	alice := g.as(tok)
	c10, c03 := callers[1], callers[0]
	id := c10.task(t, mustResult(t, alice.call("1", c10.method(dialect.SendMessage), c10.send("m1", c10.text("input please"), "")))).Get("id").Str
	cases := []struct {
		c            caller
		method       string
		params, says string
	}{
		{c10, "CreateTaskPushNotificationConfig", `{"taskId":"` + id + `","url":"https://hooks.example/a","x":1}`, `params has "x"`},
		{c03, "tasks/pushNotificationConfig/set", `{"taskId":"` + id + `","pushNotificationConfig":{"url":"https://hooks.example/a","extra":1}}`, `params.pushNotificationConfig has "extra"`},
		{c03, "tasks/pushNotificationConfig/set", `{"taskId":"` + id + `","pushNotificationConfig":{"url":"https://hooks.example/a"},"other":1}`, `params has "other"`},
		{c10, "SendMessage", `{"message":{"messageId":"m2","taskId":"` + id + `","role":"ROLE_USER","parts":[{"text":"x"}]},"configuration":{"taskPushNotificationConfig":{"url":"https://hooks.example/a","x":1}}}`,
			`params.configuration.taskPushNotificationConfig has "x"`},
		{c03, "message/send", `{"message":{"kind":"message","messageId":"m3","taskId":"` + id + `","role":"user","parts":[{"kind":"text","text":"x"}]},"configuration":{"pushNotificationConfig":{"url":"https://hooks.example/a","x":1}}}`,
			`params.configuration.pushNotificationConfig has "x"`},
	}
	for _, tc := range cases {
		r := alice.call("1", tc.method, tc.params)
		wantErrorSaying(t, r, tc.c.d, -32602, tc.says)
	}
	status, _, body := restDo(t, g, "POST", "/v1/tasks/"+id+"/pushNotificationConfigs", "application/json",
		`{"pushNotificationConfig":{"url":"https://hooks.example/a","x-ext":1}}`, tok)
	if status != http.StatusBadRequest || !strings.Contains(body.Get("message").Str, `"x-ext"`) {
		t.Errorf("0.3 REST: HTTP %d %s", status, body.Raw)
	}
	if r := mustResult(t, alice.call("1", "ListTaskPushNotificationConfigs", `{"taskId":"`+id+`"}`)); len(r.Get("configs").Array()) != 0 {
		t.Errorf("configs kept: %s", r.Raw)
	}
	mustResult(t, alice.call("1", "CreateTaskPushNotificationConfig", `{"taskId":"`+id+`","url":"https://hooks.example/a"}`))
}
