package normalize

import (
	"reflect"
	"testing"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/protojsontest"
)

func TestCreatedPushConfig(t *testing.T) {
	for _, tt := range []struct {
		d        dialect.ID
		params   string
		want     WebhookConfig
		wantPath string
	}{
		{dialect.V03, `{"taskId":"t1","pushNotificationConfig":{"id":"c1","url":"https://h.example/a\"b","token":"tok","authentication":{"schemes":["Bearer","Basic"],"credentials":"s"}}}`,
			WebhookConfig{ID: "c1", URL: `https://h.example/a"b`, Token: "tok", Authentication: []byte(`{"schemes":["Bearer","Basic"],"credentials":"s"}`), Schemes: []string{"Bearer", "Basic"}, Credentials: "s"},
			"params.pushNotificationConfig.url"},
		{dialect.V03, `{"taskId":"t1","pushNotificationConfig":{"url":"https://h.example"}}`,
			WebhookConfig{URL: "https://h.example"}, "params.pushNotificationConfig.url"},
		{dialect.V10, `{"taskId":"t1","id":"c1","url":"https://h.example","authentication":{"scheme":"Bearer","credentials":"s"}}`,
			WebhookConfig{ID: "c1", URL: "https://h.example", Authentication: []byte(`{"scheme":"Bearer","credentials":"s"}`), Schemes: []string{"Bearer"}, Credentials: "s"},
			"params.url"},
	} {
		params := []byte(tt.params)
		got, path := CreatedPushConfig(tt.d, params)
		if !reflect.DeepEqual(got, tt.want) || path != tt.wantPath {
			t.Errorf("CreatedPushConfig(%s, %s) = %+v, %q; want %+v, %q", tt.d, tt.params, got, path, tt.want, tt.wantPath)
		}
		// The config outlives the request: nothing may alias its bytes.
		for i := range params {
			params[i] = ' '
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("CreatedPushConfig(%s, %s) holds views into the params: %+v", tt.d, tt.params, got)
		}
	}
}

func TestInlinePushConfig(t *testing.T) {
	const cfg = `{"id":"c1","url":"https://h.example","token":"tok"}`
	want := WebhookConfig{ID: "c1", URL: "https://h.example", Token: "tok"}
	for _, tt := range []struct {
		name, params, wantPath string
		want                   WebhookConfig
	}{
		{"0.x", `{"message":{},"configuration":{"blocking":true,"pushNotificationConfig":` + cfg + `}}`, "params.configuration.pushNotificationConfig.url", want},
		{"1.0", `{"message":{},"configuration":{"taskPushNotificationConfig":` + cfg + `}}`, "params.configuration.taskPushNotificationConfig.url", want},
		{"1.0 snake_case", `{"message":{},"configuration":{"task_push_notification_config":` + cfg + `}}`, "params.configuration.taskPushNotificationConfig.url", want},
		{"no config", `{"message":{},"configuration":{"blocking":false}}`, "", WebhookConfig{}},
		{"no configuration", `{"message":{}}`, "", WebhookConfig{}},
	} {
		got, path, ok := InlinePushConfig([]byte(tt.params))
		if !reflect.DeepEqual(got, tt.want) || path != tt.wantPath || ok != (tt.wantPath != "") {
			t.Errorf("%s: InlinePushConfig = %+v, %q, %v; want %+v, %q", tt.name, got, path, ok, tt.want, tt.wantPath)
		}
	}
}

// TestRelayPushConfigParams holds the params the relay sends a backend to
// the shapes Params accepts in the backend's dialect.
func TestRelayPushConfigParams(t *testing.T) {
	cfg := RelayPushConfig("a2a-gateway-relay", `https://gw.example/a/push/r"1`, "tok")
	if want := `{"id":"a2a-gateway-relay","url":"https://gw.example/a/push/r\"1","token":"tok"}`; string(cfg) != want {
		t.Errorf("RelayPushConfig = %s, want %s", cfg, want)
	}
	for _, tt := range []struct {
		op   dialect.Op
		to   dialect.ID
		got  []byte
		want string
	}{
		{dialect.CreatePushConfig, dialect.V03, CreatePushConfigParams(dialect.V03, "acme", `t"1`, cfg),
			`{"taskId":"t\"1","pushNotificationConfig":{"id":"a2a-gateway-relay","url":"https://gw.example/a/push/r\"1","token":"tok"}}`},
		{dialect.CreatePushConfig, dialect.V10, CreatePushConfigParams(dialect.V10, "", `t"1`, cfg),
			`{"taskId":"t\"1","id":"a2a-gateway-relay","url":"https://gw.example/a/push/r\"1","token":"tok"}`},
		{dialect.CreatePushConfig, dialect.V10, CreatePushConfigParams(dialect.V10, `a"b`, `t"1`, cfg),
			`{"tenant":"a\"b","taskId":"t\"1","id":"a2a-gateway-relay","url":"https://gw.example/a/push/r\"1","token":"tok"}`},
		{dialect.DeletePushConfig, dialect.V10, DeletePushConfigParams(dialect.V10, `a"b`, `t"1`, "a2a-gateway-relay"),
			`{"tenant":"a\"b","taskId":"t\"1","id":"a2a-gateway-relay"}`},
		{dialect.DeletePushConfig, dialect.V03, DeletePushConfigParams(dialect.V03, "acme", `t"1`, "a2a-gateway-relay"),
			`{"id":"t\"1","pushNotificationConfigId":"a2a-gateway-relay"}`},
		{dialect.DeletePushConfig, dialect.V10, DeletePushConfigParams(dialect.V10, "", `t"1`, "a2a-gateway-relay"),
			`{"taskId":"t\"1","id":"a2a-gateway-relay"}`},
	} {
		if string(tt.got) != tt.want {
			t.Errorf("%s params for %s = %s\nwant %s", tt.op, tt.to, tt.got, tt.want)
		}
		if _, _, err := Params(tt.op, tt.to, tt.to, tt.got); err != nil {
			t.Errorf("%s params for %s are refused in that dialect: %v", tt.op, tt.to, err)
		}
		if tt.to == dialect.V10 {
			protojsontest.Check(t, requestMessage(t, tt.op), tt.got)
		}
	}
}

func TestWithInlinePushConfig(t *testing.T) {
	relay := []byte(`{"id":"r","url":"https://gw.example/push/x","token":"k"}`)
	for _, tt := range []struct {
		name   string
		to     dialect.ID
		params string
		want   string
	}{
		{"0.x", dialect.V03, `{"message":{"messageId":"m"},"configuration":{"acceptedOutputModes":[],"pushNotificationConfig":{"url":"https://caller.example"},"blocking":true}}`,
			`{"message":{"messageId":"m"},"configuration":{"acceptedOutputModes":[],"pushNotificationConfig":{"id":"r","url":"https://gw.example/push/x","token":"k"},"blocking":true}}`},
		{"1.0", dialect.V10, `{"message":{"messageId":"m"},"configuration":{"taskPushNotificationConfig":{"url":"https://caller.example"}}}`,
			`{"message":{"messageId":"m"},"configuration":{"taskPushNotificationConfig":{"id":"r","url":"https://gw.example/push/x","token":"k"}}}`},
		{"1.0 snake_case passed through", dialect.V10, `{"message":{"messageId":"m"},"configuration":{"task_push_notification_config":{"url":"https://caller.example"}}}`,
			`{"message":{"messageId":"m"},"configuration":{"taskPushNotificationConfig":{"id":"r","url":"https://gw.example/push/x","token":"k"}}}`},
	} {
		got, err := WithInlinePushConfig(tt.to, []byte(tt.params), relay)
		if err != nil || !jsonEqual(got, []byte(tt.want)) {
			t.Errorf("%s: WithInlinePushConfig = %s, %v\nwant %s", tt.name, got, err, tt.want)
		}
	}
}

func TestPushConfigResult(t *testing.T) {
	v03 := WebhookConfig{ID: "c1", URL: "https://h.example", Token: "tok", Authentication: []byte(`{"schemes":["Bearer"],"credentials":"s"}`)}
	v10 := WebhookConfig{ID: "c1", URL: "https://h.example", Token: "tok", Authentication: []byte(`{"scheme":"Bearer","credentials":"s"}`)}
	const (
		want03 = `{"taskId":"t1","pushNotificationConfig":{"id":"c1","url":"https://h.example","token":"tok","authentication":{"schemes":["Bearer"],"credentials":"s"}}}`
		want10 = `{"taskId":"t1","id":"c1","url":"https://h.example","token":"tok","authentication":{"scheme":"Bearer","credentials":"s"}}`
	)
	for _, tt := range []struct {
		from, to dialect.ID
		cfg      WebhookConfig
		want     string
	}{
		{dialect.V03, dialect.V03, v03, want03},
		{dialect.V03, dialect.V10, v03, want10},
		{dialect.V10, dialect.V10, v10, want10},
		{dialect.V10, dialect.V03, v10, want03},
		{dialect.V10, dialect.V10, WebhookConfig{ID: "c\"2", URL: "https://h.example"}, `{"taskId":"t1","id":"c\"2","url":"https://h.example"}`},
		{dialect.V03, dialect.V03, WebhookConfig{ID: "t1", URL: "https://h.example"}, `{"taskId":"t1","pushNotificationConfig":{"id":"t1","url":"https://h.example"}}`},
	} {
		got, err := PushConfigResult(tt.from, tt.to, "t1", tt.cfg)
		if err != nil || !jsonEqual(got, []byte(tt.want)) {
			t.Errorf("PushConfigResult(%s, %s, %+v) = %s, %v\nwant %s", tt.from, tt.to, tt.cfg, got, err, tt.want)
		}
		if err == nil && tt.to == dialect.V10 {
			protojsontest.Check(t, resultMessage(t, dialect.GetPushConfig), got)
		}
	}
	if _, err := PushConfigResult(dialect.V10, dialect.V03, "t1", WebhookConfig{ID: "c", URL: "u", Authentication: []byte(`{"credentials":"s"}`)}); err == nil {
		t.Error("an authentication without a scheme is rendered")
	}
}

func TestListPushConfigsPage(t *testing.T) {
	for params, want := range map[string]struct {
		tok  string
		size int64
	}{
		`{"taskId":"t","pageToken":"p","pageSize":2}`:    {"p", 2},
		`{"task_id":"t","page_token":"p","page_size":3}`: {"p", 3},
		`{"taskId":"t"}`: {"", 0},
	} {
		tok, size := ListPushConfigsPage([]byte(params))
		if tok != want.tok || size != want.size {
			t.Errorf("ListPushConfigsPage(%s) = %q, %d; want %q, %d", params, tok, size, want.tok, want.size)
		}
	}
}

func TestListAndDeletePushConfigsResult(t *testing.T) {
	a03, b03 := `{"taskId":"t","pushNotificationConfig":{"id":"a","url":"https://h.example"}}`, `{"taskId":"t","pushNotificationConfig":{"id":"b","url":"https://h.example"}}`
	a10, b10 := `{"taskId":"t","id":"a","url":"https://h.example"}`, `{"taskId":"t","id":"b","url":"https://h.example"}`
	for _, tt := range []struct {
		d       dialect.ID
		configs []string
		next    string
		want    string
	}{
		{dialect.V03, []string{a03, b03}, "", `[` + a03 + `,` + b03 + `]`},
		{dialect.V03, nil, "", `[]`},
		{dialect.V10, []string{a10, b10}, "", `{"configs":[` + a10 + `,` + b10 + `]}`},
		{dialect.V10, []string{a10}, `n"x`, `{"configs":[` + a10 + `],"nextPageToken":"n\"x"}`},
		{dialect.V10, nil, "", `{}`},
	} {
		var configs [][]byte
		for _, c := range tt.configs {
			configs = append(configs, []byte(c))
		}
		got := ListPushConfigsResult(tt.d, configs, tt.next)
		if string(got) != tt.want {
			t.Errorf("ListPushConfigsResult(%s, %d configs, %q) = %s, want %s", tt.d, len(configs), tt.next, got, tt.want)
		}
		if _, err := Result(dialect.ListPushConfigs, tt.d, tt.d, got); err != nil {
			t.Errorf("ListPushConfigsResult(%s, %d configs) is refused as a list result: %v", tt.d, len(configs), err)
		}
		if tt.d == dialect.V10 {
			protojsontest.Check(t, resultMessage(t, dialect.ListPushConfigs), got)
		}
	}
	for d, want := range map[dialect.ID]string{dialect.V03: `null`, dialect.V10: `{}`} {
		got := DeletePushConfigResult(d)
		if string(got) != want {
			t.Errorf("DeletePushConfigResult(%s) = %s, want %s", d, got, want)
		}
		if _, err := Result(dialect.DeletePushConfig, d, d, got); err != nil {
			t.Errorf("DeletePushConfigResult(%s) is refused as a delete result: %v", d, err)
		}
		if d == dialect.V10 {
			protojsontest.Check(t, resultMessage(t, dialect.DeletePushConfig), got)
		}
	}
}
