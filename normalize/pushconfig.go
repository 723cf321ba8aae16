package normalize

import (
	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/jsonscan"
)

const (
	cTaskID = iota
	cConfig
	cTenant
	cID
	cURL
	cToken
	cAuthentication
)

// pushKeys covers both the 0.x TaskPushNotificationConfig (taskId plus a
// nested pushNotificationConfig) and the flat 1.0 one.
var pushKeys = [...]keySpec{
	cTaskID:         {"taskId", "task_id"},
	cConfig:         {"pushNotificationConfig", ""},
	cTenant:         {"tenant", ""},
	cID:             {"id", ""},
	cURL:            {"url", ""},
	cToken:          {"token", ""},
	cAuthentication: {"authentication", ""},
}

// pushConfig is a push notification config read in either dialect.
type pushConfig struct {
	outer, inner members
	nested       bool
	innerObj     gjson.Result
}

func (p *pushConfig) get(i int) gjson.Result {
	if p.nested && i >= cID {
		return p.inner.vals[i]
	}
	return p.outer.vals[i]
}

// The bounds of the members of a caller's push config. The gateway keeps a
// caller's config, and every delivery to the task carries its token and
// authentication: a caller must not make either as large as a body may be.
const (
	maxPushConfigID             = 1 << 10
	maxPushConfigURL            = 4 << 10
	maxPushConfigToken          = 4 << 10
	maxPushConfigAuthentication = 8 << 10
)

// readPushConfig reads a task push config; withTask tells whether the object
// is a TaskPushNotificationConfig (false: the bare config of a send), and
// bounded whether a caller sent it (its members' sizes bounded), not a
// backend.
func readPushConfig(obj gjson.Result, p *pushConfig, withTask, bounded bool) error {
	if err := collect(obj, pushKeys[:], &p.outer); err != nil {
		return err
	}
	if cfg := p.outer.vals[cConfig]; cfg.Exists() {
		p.nested, p.innerObj = true, cfg
		for _, i := range []int{cID, cURL, cToken, cAuthentication} {
			if p.outer.vals[i].Exists() {
				return fail("mixes the nested 0.x pushNotificationConfig with the flat 1.0 member %q", pushKeys[i].camel)
			}
		}
		if err := collect(cfg, pushKeys[:], &p.inner); err != nil {
			return at(err, "pushNotificationConfig")
		}
		for _, i := range []int{cTaskID, cConfig, cTenant} {
			if p.inner.vals[i].Exists() {
				return at(at(fail("does not belong inside pushNotificationConfig"), pushKeys[i].camel), "pushNotificationConfig")
			}
		}
	}
	if withTask {
		if err := requireString(p.get(cTaskID), "taskId"); err != nil {
			return err
		}
	}
	if t := p.get(cTenant); t.Exists() {
		if err := wantString(t, "tenant"); err != nil {
			return err
		}
	}
	err := checkPushConfigBody(p)
	if err == nil && bounded {
		err = boundPushConfigBody(p)
	}
	if err != nil {
		if p.nested {
			return at(err, "pushNotificationConfig")
		}
		return err
	}
	return nil
}

// checkPushConfigBody validates the members that sit inside the nested 0.x
// pushNotificationConfig, or directly in a flat 1.0 config.
func checkPushConfigBody(p *pushConfig) error {
	if err := requireString(p.get(cURL), "url"); err != nil {
		return err
	}
	for _, i := range []int{cID, cToken} {
		if v := p.get(i); v.Exists() {
			if err := wantString(v, pushKeys[i].camel); err != nil {
				return err
			}
		}
	}
	return wantObject(p.get(cAuthentication), "authentication")
}

// boundPushConfigBody refuses a caller's config whose id, url or token
// (decoded) or authentication (as sent) is over its bound.
func boundPushConfigBody(p *pushConfig) error {
	for _, b := range [...]struct {
		i, limit int
	}{{cID, maxPushConfigID}, {cURL, maxPushConfigURL}, {cToken, maxPushConfigToken}} {
		if n := len(p.get(b.i).Str); n > b.limit {
			return at(fail("is %d bytes, over the %d bytes (%d KiB) the gateway takes: send a shorter one", n, b.limit, b.limit>>10), pushKeys[b.i].camel)
		}
	}
	if n := len(p.get(cAuthentication).Raw); n > maxPushConfigAuthentication {
		return at(fail("is %d bytes of JSON, over the %d bytes (%d KiB) the gateway takes: send shorter credentials", n, maxPushConfigAuthentication, maxPushConfigAuthentication>>10), "authentication")
	}
	// Every delivery sends the token and the credentials as header values,
	// which net/http refuses to write with a control byte in them: such a
	// config would be taken and each delivery to it fail, unseen.
	if err := wantHeaderValue(p.get(cToken)); err != nil {
		return at(err, "token")
	}
	if err := wantHeaderValue(p.get(cAuthentication).Get("credentials")); err != nil {
		return at(at(err, "credentials"), "authentication")
	}
	return nil
}

// wantHeaderValue refuses a string holding a byte an HTTP header value
// cannot carry: a control byte other than a tab (RFC 9110, field-value).
func wantHeaderValue(v gjson.Result) error {
	if v.Type != gjson.String {
		return nil
	}
	for i := 0; i < len(v.Str); i++ {
		if c := v.Str[i]; (c < 0x20 && c != '\t') || c == 0x7f {
			return fail("holds the control byte 0x%02x at byte %d, which an HTTP header (where it is sent) cannot carry", c, i)
		}
	}
	return nil
}

// taskPushConfig writes a TaskPushNotificationConfig in dialect to;
// bounded as readPushConfig's.
func (c *conv) taskPushConfig(obj gjson.Result, to dialect.ID, bounded bool) error {
	var p pushConfig
	if err := readPushConfig(obj, &p, true, bounded); err != nil {
		return err
	}
	return c.writePushConfig(obj, &p, to, true)
}

// writePushConfig writes p; withTask false writes the 0.x bare
// PushNotificationConfig (no taskId) or the 1.0 config of a send.
func (c *conv) writePushConfig(obj gjson.Result, p *pushConfig, to dialect.ID, withTask bool) error {
	w := c.w
	w.changed = w.changed || p.outer.renamed || p.inner.renamed || p.nested != (to == dialect.V03 && withTask)
	// 0.x has no tenant, and its bare config of a send no taskId: dropping
	// either means the input cannot pass through.
	if to == dialect.V03 && (p.get(cTenant).Exists() || (!withTask && p.get(cTaskID).Exists())) {
		w.changed = true
	}
	w.open('{')
	if to == dialect.V10 {
		if t := p.get(cTenant); t.Exists() && !c.skipDefault(t, to) {
			w.key("tenant")
			w.raw(t.Raw)
		}
	}
	if t := p.get(cTaskID); t.Exists() && (withTask || to == dialect.V10) && !c.skipDefault(t, to) {
		w.key("taskId")
		w.raw(t.Raw)
	}
	if to == dialect.V03 && withTask {
		w.key("pushNotificationConfig")
		w.open('{')
	}
	if err := c.pushConfigBody(p, to); err != nil {
		if p.nested {
			return at(err, "pushNotificationConfig")
		}
		return err
	}
	if p.nested && p.inner.unknown {
		w.unknownMembers(p.innerObj, pushKeys[:])
	}
	if to == dialect.V03 && withTask {
		w.close('}')
	}
	if p.outer.unknown {
		w.unknownMembers(obj, pushKeys[:])
	}
	w.close('}')
	return nil
}

func (c *conv) pushConfigBody(p *pushConfig, to dialect.ID) error {
	w := c.w
	for _, i := range []int{cID, cURL, cToken} {
		if v := p.get(i); v.Exists() && !c.skipDefault(v, to) {
			w.key(pushKeys[i].camel)
			w.raw(v.Raw)
		}
	}
	if a := p.get(cAuthentication); a.Exists() {
		w.key("authentication")
		if err := c.authentication(a, to); err != nil {
			return at(err, "authentication")
		}
	}
	return nil
}

const (
	auScheme = iota
	auSchemes
	auCredentials
)

var authKeys = [...]keySpec{
	auScheme:      {"scheme", ""},
	auSchemes:     {"schemes", ""},
	auCredentials: {"credentials", ""},
}

// authentication maps 0.x schemes (a list) to the single 1.0 scheme. 1.0
// keeps only the first, as the Python, Go and JS SDKs do.
func (c *conv) authentication(obj gjson.Result, to dialect.ID) error {
	var m members
	if err := collect(obj, authKeys[:], &m); err != nil {
		return err
	}
	v := &m.vals
	scheme := v[auScheme]
	switch {
	case scheme.Exists() && v[auSchemes].Exists():
		return fail("has both scheme and schemes")
	case scheme.Exists():
		if err := requireString(scheme, "scheme"); err != nil {
			return err
		}
	case v[auSchemes].Exists():
		if err := wantStringArray(v[auSchemes], "schemes"); err != nil {
			return err
		}
		scheme = v[auSchemes].Get("0")
		if !scheme.Exists() {
			return at(fail("must name at least one scheme"), "schemes")
		}
		if scheme.Str == "" {
			// 1.0 keeps only this one, and requires it.
			return at(atIndex(fail("must not be empty"), 0), "schemes")
		}
	default:
		return at(fail("is required"), "scheme")
	}
	w := c.w
	w.open('{')
	if to == dialect.V10 {
		w.changed = w.changed || v[auSchemes].Exists()
		w.key("scheme")
		w.raw(scheme.Raw)
	} else {
		w.key("schemes")
		if s := v[auSchemes]; s.Exists() {
			w.raw(s.Raw)
		} else {
			w.changed = true
			w.open('[')
			w.raw(scheme.Raw)
			w.close(']')
		}
	}
	if cr := v[auCredentials]; cr.Exists() && !c.skipDefault(cr, to) {
		w.key("credentials")
		w.raw(cr.Raw)
	}
	if m.unknown {
		w.unknownMembers(obj, authKeys[:])
	}
	w.close('}')
	return nil
}

// PushConfigTaskID is the taskId a TaskPushNotificationConfig result names,
// in either dialect, as AppendResult wrote it.
func PushConfigTaskID(result []byte) string {
	return jsonscan.Member(jsonscan.Parse(result), "taskId").Str
}

// PushConfigsOfTask keeps, of a ListPushConfigs result in dialect d as
// AppendResult wrote it, the configs of task taskID, and returns how many
// it left out. It returns list itself when it leaves out none; a 1.0 list
// it cuts keeps its nextPageToken.
func PushConfigsOfTask(d dialect.ID, list []byte, taskID string) ([]byte, int) {
	root := jsonscan.Parse(list)
	configs := root
	if d == dialect.V10 {
		configs = jsonscan.Member(root, "configs")
	}
	var kept [][]byte
	dropped := 0
	jsonscan.Each(configs, func(_, v gjson.Result) bool {
		if jsonscan.Member(v, "taskId").Str == taskID {
			kept = append(kept, []byte(v.Raw))
		} else {
			dropped++
		}
		return true
	})
	if dropped == 0 {
		return list, 0
	}
	var next string
	if d == dialect.V10 {
		next = jsonscan.Member(root, "nextPageToken").Str
	}
	return ListPushConfigsResult(d, kept, next), dropped
}
