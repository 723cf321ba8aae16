package normalize

import (
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/jsonscan"
)

// The documents of the push relay (proxy/push*.go): the gateway keeps every
// caller's push config and gives the backend one of its own per task, so it
// reads the callers' configs from their set/Create and send params, writes
// the relay's config into the backend's params in the backend's dialect,
// and answers get, list and delete from what it kept, in the caller's.

// WebhookConfig is what the relay keeps of a caller's push config: where
// and how to deliver. It holds copies, never views into the request, since
// it outlives the call.
type WebhookConfig struct {
	ID, URL, Token string
	// Authentication is the caller's authentication object as given, in the
	// caller's dialect; Schemes and Credentials are read from it (a 1.0
	// scheme, or the 0.x schemes in order).
	Authentication []byte
	Schemes        []string
	Credentials    string
	// Unknown names the members of the config the relay has no field for
	// (quoted, with where they are), "" for none: the gateway keeps the
	// config, not the backend, so it would drop them.
	Unknown string
}

// The members of a push config the relay keeps: a bare config's, a
// TaskPushNotificationConfig's, and the 0.x set params around the former.
var (
	webhookKeys     = [...]keySpec{{"id", ""}, {"url", ""}, {"token", ""}, {"authentication", ""}}
	taskWebhookKeys = [...]keySpec{{"id", ""}, {"url", ""}, {"token", ""}, {"authentication", ""}, {"taskId", "task_id"}, {"tenant", ""}}
	setParamsKeys   = [...]keySpec{{"taskId", "task_id"}, {"pushNotificationConfig", ""}, {"tenant", ""}}
)

// unknownIn names where obj is and the members of it specs does not know,
// "" for none.
func unknownIn(obj gjson.Result, specs []keySpec, where string) string {
	if names := unknownNames(obj, specs); names != "" {
		return where + " has " + names
	}
	return ""
}

// CreatedPushConfig reads the config of set/Create params in dialect d
// (0.x tasks/pushNotificationConfig/set nests it in pushNotificationConfig,
// 1.0 CreateTaskPushNotificationConfig is flat), already validated by
// Params. urlPath names its url in the caller's params, for an error about
// it.
func CreatedPushConfig(d dialect.ID, params []byte) (cfg WebhookConfig, urlPath string) {
	obj := jsonscan.Parse(params)
	if d == dialect.V03 {
		inner := jsonscan.Member(obj, "pushNotificationConfig")
		cfg = readWebhookConfig(inner)
		cfg.Unknown = unknownIn(obj, setParamsKeys[:], "params")
		if cfg.Unknown == "" {
			cfg.Unknown = unknownIn(inner, webhookKeys[:], "params.pushNotificationConfig")
		}
		return cfg, "params.pushNotificationConfig.url"
	}
	cfg = readWebhookConfig(obj)
	cfg.Unknown = unknownIn(obj, taskWebhookKeys[:], "params")
	return cfg, "params.url"
}

// InlinePushConfig reads the config send params give inline, already
// validated by Params: 0.x configuration.pushNotificationConfig, 1.0
// configuration.taskPushNotificationConfig or its snake_case spelling. ok
// is false when the send gives none.
func InlinePushConfig(params []byte) (cfg WebhookConfig, urlPath string, ok bool) {
	var m members
	conf := jsonscan.Member(jsonscan.Parse(params), "configuration")
	if !conf.IsObject() || collect(conf, configurationKeys[:], &m) != nil {
		return WebhookConfig{}, "", false
	}
	if obj := m.vals[scPushConfig]; obj.Exists() {
		cfg = readWebhookConfig(obj)
		cfg.Unknown = unknownIn(obj, webhookKeys[:], "params.configuration.pushNotificationConfig")
		return cfg, "params.configuration.pushNotificationConfig.url", true
	}
	if obj := m.vals[scTaskPushConfig]; obj.Exists() {
		cfg = readWebhookConfig(obj)
		cfg.Unknown = unknownIn(obj, taskWebhookKeys[:], "params.configuration.taskPushNotificationConfig")
		return cfg, "params.configuration.taskPushNotificationConfig.url", true
	}
	return WebhookConfig{}, "", false
}

// readWebhookConfig reads a 0.x PushNotificationConfig or a 1.0
// TaskPushNotificationConfig: id, url, token and authentication are
// spelled alike in both.
func readWebhookConfig(obj gjson.Result) WebhookConfig {
	c := WebhookConfig{
		ID:    strings.Clone(jsonscan.Member(obj, "id").Str),
		URL:   strings.Clone(jsonscan.Member(obj, "url").Str),
		Token: strings.Clone(jsonscan.Member(obj, "token").Str),
	}
	au := jsonscan.Member(obj, "authentication")
	if !au.IsObject() {
		return c
	}
	c.Authentication = []byte(au.Raw)
	c.Credentials = strings.Clone(jsonscan.Member(au, "credentials").Str)
	if s := jsonscan.Member(au, "scheme"); s.Exists() {
		c.Schemes = []string{strings.Clone(s.Str)}
	}
	jsonscan.Each(jsonscan.Member(au, "schemes"), func(_, s gjson.Result) bool {
		c.Schemes = append(c.Schemes, strings.Clone(s.Str))
		return true
	})
	return c
}

// RelayPushConfig writes the config the gateway gives a backend in place
// of its callers': the bare config of a send, spelled alike in both
// dialects.
func RelayPushConfig(id, url, token string) []byte {
	out := gjson.AppendJSONString([]byte(`{"id":`), id)
	out = gjson.AppendJSONString(append(out, `,"url":`...), url)
	out = gjson.AppendJSONString(append(out, `,"token":`...), token)
	return append(out, '}')
}

// CreatePushConfigParams writes the set/Create params that give a backend
// of dialect to config (RelayPushConfig's) for the task taskID of tenant
// ("" for none; 0.x has no tenants).
func CreatePushConfigParams(to dialect.ID, tenant, taskID string, config []byte) []byte {
	if to == dialect.V03 {
		out := gjson.AppendJSONString([]byte(`{"taskId":`), taskID)
		out = append(append(out, `,"pushNotificationConfig":`...), config...)
		return append(out, '}')
	}
	obj := jsonscan.Parse(config)
	out := appendTenant([]byte{'{'}, tenant)
	out = gjson.AppendJSONString(append(out, `"taskId":`...), taskID)
	jsonscan.Each(obj, func(k, v gjson.Result) bool {
		out = append(append(append(append(out, ','), k.Raw...), ':'), v.Raw...)
		return true
	})
	return append(out, '}')
}

// DeletePushConfigParams writes the delete params, in dialect to, of the
// config configID of the task taskID of tenant ("" for none; 0.x has no
// tenants). The dialects swap the names: 0.x names the task "id", 1.0
// names the config so.
func DeletePushConfigParams(to dialect.ID, tenant, taskID, configID string) []byte {
	var out []byte
	if to == dialect.V03 {
		out = gjson.AppendJSONString([]byte(`{"id":`), taskID)
		out = gjson.AppendJSONString(append(out, `,"pushNotificationConfigId":`...), configID)
	} else {
		out = appendTenant([]byte{'{'}, tenant)
		out = gjson.AppendJSONString(append(out, `"taskId":`...), taskID)
		out = gjson.AppendJSONString(append(out, `,"id":`...), configID)
	}
	return append(out, '}')
}

// appendTenant appends a 1.0 request's "tenant" member and its comma, or
// nothing for none.
func appendTenant(dst []byte, tenant string) []byte {
	if tenant == "" {
		return dst
	}
	return append(gjson.AppendJSONString(append(dst, `"tenant":`...), tenant), ',')
}

// WithInlinePushConfig replaces the push config given inline in send params
// of dialect to (translated for the backend already) with config, in that
// dialect's spelling; a 1.0 snake_case spelling passed through goes.
func WithInlinePushConfig(to dialect.ID, params, config []byte) ([]byte, error) {
	member := "configuration.pushNotificationConfig"
	if to == dialect.V10 {
		member = "configuration.taskPushNotificationConfig"
	}
	out, err := sjson.DeleteBytes(params, "configuration.task_push_notification_config")
	if err == nil {
		out, err = sjson.SetRawBytes(out, member, config)
	}
	if err != nil {
		return nil, AsError(err, dialect.ErrInternal)
	}
	return out, nil
}

// PushConfigResult writes a kept config of the task taskID as the
// TaskPushNotificationConfig a get answers in dialect to; from is the
// dialect the caller gave it in, the spelling of its authentication.
func PushConfigResult(from, to dialect.ID, taskID string, cfg WebhookConfig) ([]byte, error) {
	body := gjson.AppendJSONString([]byte(`{"id":`), cfg.ID)
	body = gjson.AppendJSONString(append(body, `,"url":`...), cfg.URL)
	if cfg.Token != "" {
		body = gjson.AppendJSONString(append(body, `,"token":`...), cfg.Token)
	}
	if len(cfg.Authentication) > 0 {
		body = append(append(body, `,"authentication":`...), cfg.Authentication...)
	}
	var out []byte
	if from == dialect.V10 {
		out = gjson.AppendJSONString(append(body, `,"taskId":`...), taskID)
		out = append(out, '}')
	} else {
		out = gjson.AppendJSONString([]byte(`{"taskId":`), taskID)
		out = append(append(append(out, `,"pushNotificationConfig":`...), body...), "}}"...)
	}
	res, err := Result(dialect.GetPushConfig, from, to, out)
	if err != nil {
		return nil, AsError(err, dialect.ErrInternal)
	}
	return res, nil
}

// ListPushConfigsPage reads the paging of 1.0 ListTaskPushNotificationConfigs
// params, already validated by Params, in either spelling; zero values when
// absent.
func ListPushConfigsPage(params []byte) (pageToken string, pageSize int64) {
	var m members
	if collect(jsonscan.Parse(params), pushParamsKeys[:], &m) != nil {
		return "", 0
	}
	return m.vals[ppPageToken].Str, m.vals[ppPageSize].Int()
}

// ListPushConfigsResult writes a list result in dialect d from configs,
// each PushConfigResult's in d: 0.x a bare array, 1.0 the configs member
// and, when another page follows, its nextPageToken, each left out when
// empty as ProtoJSON does.
func ListPushConfigsResult(d dialect.ID, configs [][]byte, nextPageToken string) []byte {
	var out []byte
	if d == dialect.V10 {
		if len(configs) == 0 && nextPageToken == "" {
			return []byte(`{}`)
		}
		out = append(out, `{"configs":`...)
	}
	out = append(out, '[')
	for i, c := range configs {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, c...)
	}
	out = append(out, ']')
	if d != dialect.V10 {
		return out
	}
	if nextPageToken != "" {
		out = gjson.AppendJSONString(append(out, `,"nextPageToken":`...), nextPageToken)
	}
	return append(out, '}')
}

// DeletePushConfigResult is a delete's answer in dialect d: 0.x null, 1.0
// the empty object.
func DeletePushConfigResult(d dialect.ID) []byte {
	if d == dialect.V10 {
		return []byte(`{}`)
	}
	return []byte(`null`)
}
