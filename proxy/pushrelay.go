package proxy

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/normalize"
	"github.com/a2agate/gateway/push"
	"github.com/a2agate/gateway/store"
)

// The push relay: the gateway keeps every caller's push config (URL, token,
// authentication, dialect) in the task index store and gives the backend a
// config of its own, one per task, pointing at {public_url}/push/{relay id}
// with a token of its own. Deliveries the backend posts there are checked,
// translated into each caller's dialect and forwarded by a push.Queue.

// relayConfigID is the id of the config the gateway gives a backend: one
// per task, so a set of it replaces the last.
const relayConfigID = "a2a-gateway-relay"

// pushRelay is an agent's relay; nil when the agent's store keeps no push
// configs or agents[].push.enabled is false.
type pushRelay struct {
	a       *Agent
	cfg     push.Config
	policy  *push.Policy
	configs store.PushStore
	queue   *push.Queue
	closed  sync.Once
}

// newPushRelay builds the relay of a, or returns nil when it is off.
func newPushRelay(a *Agent) (*pushRelay, error) {
	cfg := a.cfg.Push
	if cfg.Enabled != nil && !*cfg.Enabled {
		return nil, nil
	}
	ps, ok := a.tasks.(store.PushStore)
	if !ok {
		a.log.Warn("the task index keeps no push configs: push configs pass through to the backend unrelayed")
		return nil, nil
	}
	policy, err := cfg.Policy()
	if err != nil {
		return nil, fmt.Errorf("agent %q: push: %w", a.cfg.Name, err)
	}
	p := &pushRelay{a: a, cfg: cfg, policy: policy, configs: ps}
	p.queue = push.NewQueue(&cfg, push.NewSender(&cfg, policy), push.Observer{OnOutcome: p.delivered})
	a.metrics.pushQueue(a.cfg.Name, p.queue.Len)
	return p, nil
}

// on reports whether the relay serves now: agents[].push.enabled, or by
// default whether the backend's card advertises push notifications.
func (p *pushRelay) on() bool {
	if p == nil {
		return false
	}
	if p.cfg.Enabled != nil {
		return *p.cfg.Enabled
	}
	p.a.cards.mu.RLock()
	defer p.a.cards.mu.RUnlock()
	return gjson.GetBytes(p.a.cards.canon, "capabilities.pushNotifications").Bool()
}

// close drains the queue until ctx ends; see push.Queue.Close.
func (p *pushRelay) close(ctx context.Context) (abandoned int, err error) {
	if p == nil {
		return 0, nil
	}
	p.closed.Do(func() { abandoned, err = p.queue.Close(ctx) })
	return abandoned, err
}

// ClosePush stops the agent's push relay from taking deliveries and sends
// the queued ones until ctx ends (server.shutdown_timeout); it reports how
// many were abandoned.
func (a *Agent) ClosePush(ctx context.Context) (abandoned int, err error) {
	return a.push.close(ctx)
}

// randomID returns 128 random bits, base64url: unguessable, URL-safe.
func randomID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func newRelay(agent string) store.PushRelay {
	return store.PushRelay{ID: randomID(), Token: randomID() + randomID(), Agent: agent}
}

// relayURL is where the backend posts a relay's deliveries.
func (p *pushRelay) relayURL(relayID string) string {
	return strings.TrimSuffix(p.a.cfg.PublicURL, "/") + "/push/" + relayID
}

// relayConfig is the push config the backend holds for a relay, in the
// backend's spelling of a send's config (url, token, id are the same in
// both dialects).
func (p *pushRelay) relayConfig(r store.PushRelay) []byte {
	out := []byte(`{"id":"` + relayConfigID + `"}`)
	out, _ = sjson.SetBytes(out, "url", p.relayURL(r.ID))
	out, _ = sjson.SetBytes(out, "token", r.Token)
	return out
}

// callerConfig reads the push config a caller sent (validated by the
// params translator already) in the caller's dialect: obj is a 0.x
// PushNotificationConfig or a 1.0 TaskPushNotificationConfig.
func callerConfig(d dialect.ID, obj gjson.Result, owner, agent string) store.PushConfig {
	c := store.PushConfig{Agent: agent, Owner: owner, Dialect: d.String(), ID: obj.Get("id").Str,
		URL: obj.Get("url").Str, Token: obj.Get("token").Str, Created: time.Now().UTC()}
	if au := obj.Get("authentication"); au.IsObject() {
		c.Authentication = []byte(au.Raw)
		c.AuthCredentials = au.Get("credentials").Str
		if s := au.Get("scheme"); s.Exists() {
			c.AuthSchemes = []string{s.Str}
		}
		au.Get("schemes").ForEach(func(_, s gjson.Result) bool {
			c.AuthSchemes = append(c.AuthSchemes, s.Str)
			return true
		})
	}
	return c
}

// checkTarget applies the webhook target policy to a caller's URL.
func (p *pushRelay) checkTarget(path, rawURL string) *normalize.Error {
	if err := p.policy.CheckURL(rawURL); err != nil {
		return normalize.Errorf(dialect.ErrInvalidParams, "invalid params: %s: %v", path, err)
	}
	return nil
}

// servePushConfig answers a push config call from the gateway's store. It
// reports false for the calls it does not take (anything but set, get,
// list and delete, or the relay off). The call's task was checked to be the
// caller's by route.
func (a *Agent) servePushConfig(w http.ResponseWriter, r *http.Request, c *call) bool {
	p := a.push
	switch c.env.Op {
	case dialect.CreatePushConfig, dialect.GetPushConfig, dialect.ListPushConfigs, dialect.DeletePushConfig:
	default:
		return false
	}
	// A task the gateway never saw (tasks.allow_unknown) is the backend's
	// to answer for: the gateway holds no configs of it.
	if !p.on() || c.unchecked {
		return false
	}
	var result []byte
	var e *normalize.Error
	switch c.env.Op {
	case dialect.CreatePushConfig:
		result, e = p.set(r, c)
	case dialect.GetPushConfig:
		result, e = p.get(r.Context(), c)
	case dialect.ListPushConfigs:
		result, e = p.list(r.Context(), c)
	case dialect.DeletePushConfig:
		result, e = p.delete(r, c)
	}
	if e != nil {
		a.fail(w, c, e)
		return true
	}
	out := normalize.AppendResult(nil, c.env.ID, result)
	c.bytes += len(out)
	writeJSON(w, http.StatusOK, out)
	return true
}

func (p *pushRelay) set(r *http.Request, c *call) ([]byte, *normalize.Error) {
	root := gjson.ParseBytes(c.env.Params)
	obj, path := root, "params.url"
	if c.env.Dialect == dialect.V03 {
		obj, path = root.Get("pushNotificationConfig"), "params.pushNotificationConfig.url"
	}
	cfg := callerConfig(c.env.Dialect, obj, c.owner, p.a.cfg.Name)
	cfg.TaskID = strings.Clone(c.info.TaskID) // a view into the request
	if e := p.checkTarget(path, cfg.URL); e != nil {
		return nil, e
	}
	if cfg.ID == "" {
		// 0.x SDKs take the task id for a config that names none; 1.0
		// servers assign one.
		cfg.ID = cfg.TaskID
		if c.env.Dialect == dialect.V10 {
			cfg.ID = randomID()
		}
	}
	if e := p.save(r, c, cfg); e != nil {
		return nil, e
	}
	return p.render(c.env.Dialect, cfg)
}

// save records cfg and makes sure the backend holds the task's relay.
func (p *pushRelay) save(r *http.Request, c *call, cfg store.PushConfig) *normalize.Error {
	ctx := r.Context()
	_, relay, err := p.configs.PushConfigs(ctx, cfg.Agent, cfg.TaskID)
	if err != nil {
		return p.a.indexUnavailable("read", err)
	}
	fresh := relay.ID == ""
	if fresh {
		relay = newRelay(cfg.Agent)
		// The backend first: a relay it refused must not be recorded.
		if e := p.register(r, c, cfg.TaskID, relay); e != nil {
			return e
		}
	}
	kept, err := p.configs.PutPushConfig(ctx, cfg, relay)
	if err != nil {
		return p.a.indexUnavailable("write", err)
	}
	if fresh && kept.ID != relay.ID {
		// Another replica gave the task its relay first: the backend must
		// hold that one.
		return p.register(r, c, cfg.TaskID, kept)
	}
	return nil
}

// register gives the backend the task's relay config.
func (p *pushRelay) register(r *http.Request, c *call, taskID string, relay store.PushRelay) *normalize.Error {
	b := c.backend
	cfg := p.relayConfig(relay)
	var params []byte
	if b.dialect == dialect.V03 {
		params = append(gjson.AppendJSONString([]byte(`{"taskId":`), taskID), `,"pushNotificationConfig":`...)
		params = append(append(params, cfg...), '}')
	} else {
		params, _ = sjson.SetBytes(cfg, "taskId", taskID)
	}
	method, _ := dialect.MethodName(b.dialect, dialect.CreatePushConfig)
	_, e := p.a.unary(r.Context(), r, c, dialect.CreatePushConfig, method, params)
	return e
}

// unregister removes the backend's relay config of a task whose last
// caller config was deleted. A backend that cannot (0.2.5 has no delete)
// keeps it, but the gateway forgot the relay: its deliveries are refused.
func (p *pushRelay) unregister(r *http.Request, c *call, taskID string) {
	b := c.backend
	var params []byte
	if b.dialect == dialect.V03 {
		params = append(gjson.AppendJSONString([]byte(`{"id":`), taskID), `,"pushNotificationConfigId":"`+relayConfigID+`"}`...)
	} else {
		params = append(gjson.AppendJSONString([]byte(`{"taskId":`), taskID), `,"id":"`+relayConfigID+`"}`...)
	}
	method, _ := dialect.MethodName(b.dialect, dialect.DeletePushConfig)
	if _, e := p.a.unary(r.Context(), r, c, dialect.DeletePushConfig, method, params); e != nil {
		p.a.log.Info("the backend did not delete the task's relay push config; the gateway refuses its deliveries from now on",
			"backend", b.name, "error", e.Message)
	}
}

// render writes a stored config as a TaskPushNotificationConfig in dialect
// to: the caller's own URL, token and authentication.
func (p *pushRelay) render(to dialect.ID, cfg store.PushConfig) ([]byte, *normalize.Error) {
	body := []byte(`{}`)
	body, _ = sjson.SetBytes(body, "id", cfg.ID)
	body, _ = sjson.SetBytes(body, "url", cfg.URL)
	if cfg.Token != "" {
		body, _ = sjson.SetBytes(body, "token", cfg.Token)
	}
	if len(cfg.Authentication) > 0 {
		body, _ = sjson.SetRawBytes(body, "authentication", cfg.Authentication)
	}
	from := dialect.V03
	var out []byte
	if cfg.Dialect == dialect.V10.String() {
		from = dialect.V10
		out, _ = sjson.SetBytes(body, "taskId", cfg.TaskID)
	} else {
		out = append(gjson.AppendJSONString([]byte(`{"taskId":`), cfg.TaskID), `,"pushNotificationConfig":`...)
		out = append(append(out, body...), '}')
	}
	res, err := normalize.Result(dialect.GetPushConfig, from, to, out)
	if err != nil {
		return nil, normalize.AsError(err, dialect.ErrInternal)
	}
	return res, nil
}

func errPushConfigNotFound() *normalize.Error {
	return normalize.Errorf(dialect.ErrTaskNotFound, "this task has no push notification config of that id")
}

func (p *pushRelay) get(ctx context.Context, c *call) ([]byte, *normalize.Error) {
	configs, _, err := p.configs.PushConfigs(ctx, p.a.cfg.Name, c.info.TaskID)
	if err != nil {
		return nil, p.a.indexUnavailable("read", err)
	}
	for _, cfg := range configs {
		// A 0.x get that names no config answers one of the task's.
		if cfg.ID == c.info.PushConfigID || c.info.PushConfigID == "" {
			return p.render(c.env.Dialect, cfg)
		}
	}
	if len(configs) == 0 {
		return nil, normalize.Errorf(dialect.ErrTaskNotFound, "task %s has no push notification config", c.info.TaskID)
	}
	return nil, errPushConfigNotFound()
}

func (p *pushRelay) list(ctx context.Context, c *call) ([]byte, *normalize.Error) {
	configs, _, err := p.configs.PushConfigs(ctx, p.a.cfg.Name, c.info.TaskID)
	if err != nil {
		return nil, p.a.indexUnavailable("read", err)
	}
	out := []byte{'['}
	for i, cfg := range configs {
		one, e := p.render(c.env.Dialect, cfg)
		if e != nil {
			return nil, e
		}
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, one...)
	}
	out = append(out, ']')
	if c.env.Dialect == dialect.V10 {
		out = append(append([]byte(`{"configs":`), out...), '}')
	}
	return out, nil
}

func (p *pushRelay) delete(r *http.Request, c *call) ([]byte, *normalize.Error) {
	id := c.info.PushConfigID
	if id == "" {
		id = c.info.TaskID
	}
	relay, err := p.configs.DeletePushConfig(r.Context(), p.a.cfg.Name, c.info.TaskID, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, errPushConfigNotFound()
	case err != nil:
		return nil, p.a.indexUnavailable("write", err)
	}
	if relay.ID != "" {
		p.unregister(r, c, c.info.TaskID)
	}
	if c.env.Dialect == dialect.V10 {
		return []byte(`{}`), nil
	}
	return []byte(`null`), nil
}

// inlineConfig replaces a push config given in a send with the task's relay
// config, in the backend's params. For a send that continues a task the
// caller's config is stored now; for a new task, once the backend names the
// task (bindPending, from record).
func (a *Agent) inlineConfig(r *http.Request, c *call, params []byte) ([]byte, *normalize.Error) {
	p := a.push
	if (c.env.Op != dialect.SendMessage && c.env.Op != dialect.SendStreamingMessage) || !p.on() || c.unchecked {
		return params, nil
	}
	conf := gjson.GetBytes(c.env.Params, "configuration")
	obj, path := conf.Get("pushNotificationConfig"), "params.configuration.pushNotificationConfig.url"
	if !obj.Exists() {
		obj, path = conf.Get("taskPushNotificationConfig"), "params.configuration.taskPushNotificationConfig.url"
	}
	if !obj.Exists() {
		if obj = conf.Get("task_push_notification_config"); !obj.Exists() {
			return params, nil
		}
	}
	cfg := callerConfig(c.env.Dialect, obj, c.owner, a.cfg.Name)
	if e := p.checkTarget(path, cfg.URL); e != nil {
		return nil, e
	}
	if cfg.ID == "" && c.env.Dialect == dialect.V10 {
		cfg.ID = randomID()
	}
	var relay store.PushRelay
	ctx := r.Context()
	if taskID := strings.Clone(c.info.TaskID); taskID != "" {
		cfg.TaskID = taskID
		if cfg.ID == "" {
			cfg.ID = taskID
		}
		_, existing, err := p.configs.PushConfigs(ctx, a.cfg.Name, taskID)
		if err != nil {
			return nil, a.indexUnavailable("read", err)
		}
		if existing.ID == "" {
			existing = newRelay(a.cfg.Name)
		}
		if relay, err = p.configs.PutPushConfig(ctx, cfg, existing); err != nil {
			return nil, a.indexUnavailable("write", err)
		}
	} else {
		relay = newRelay(a.cfg.Name)
		relay.Pending = &cfg
		if err := p.configs.PutPendingRelay(ctx, relay); err != nil {
			return nil, a.indexUnavailable("write", err)
		}
		c.pushPending = &relay
	}
	member := "configuration.pushNotificationConfig"
	if c.backend.dialect == dialect.V10 {
		member = "configuration.taskPushNotificationConfig"
	}
	out, err := sjson.DeleteBytes(params, "configuration.task_push_notification_config")
	if err == nil {
		out, err = sjson.SetRawBytes(out, member, p.relayConfig(relay))
	}
	if err != nil {
		return nil, normalize.AsError(err, dialect.ErrInternal)
	}
	return out, nil
}

// bindPending stores the config a send gave inline under the task the
// backend created for it.
func (a *Agent) bindPending(ctx context.Context, c *call, taskID string) {
	relay := c.pushPending
	c.pushPending = nil
	cfg := *relay.Pending
	cfg.TaskID = strings.Clone(taskID) // a view into the backend's reply
	if cfg.ID == "" {
		cfg.ID = taskID
	}
	if _, err := a.push.configs.PutPushConfig(ctx, cfg, *relay); err != nil {
		a.metrics.storeError("write")
		a.log.Error("recording a push config given in a send failed; its deliveries are refused", "task_id", taskID, "error", err)
	}
}

// ServePush receives the backend's deliveries at {path}/push/{relay}: the
// one path of the agent that takes the relay's token instead of a JWT.
func (a *Agent) ServePush(w http.ResponseWriter, r *http.Request) {
	p := a.push
	outcome := p.receive(w, r)
	a.metrics.pushReceived(a.cfg.Name, outcome)
}

// Outcomes of a delivery received, the values of the outcome label.
const (
	receivedAccepted    = "accepted"
	receivedRefused     = "refused"     // unknown relay or wrong token
	receivedTooLarge    = "too_large"   // over push.max_body_bytes
	receivedInvalid     = "invalid"     // not an A2A task or event
	receivedQueueFull   = "queue_full"  // answered 503
	receivedUnavailable = "unavailable" // the store could not be read
)

// receivedOutcomes lists them, for pre-creating metric series.
var receivedOutcomes = []string{receivedAccepted, receivedRefused, receivedTooLarge, receivedInvalid, receivedQueueFull, receivedUnavailable}

// notFound is every refusal of a relay: an unknown id and a wrong token get
// the same answer, so that neither can be probed.
func notFound(w http.ResponseWriter) string {
	http.Error(w, "not found", http.StatusNotFound)
	return receivedRefused
}

func (p *pushRelay) receive(w http.ResponseWriter, r *http.Request) string {
	if !p.on() {
		return notFound(w)
	}
	ctx := r.Context()
	relay, err := p.configs.PushRelay(ctx, r.PathValue("relay"))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return notFound(w)
	case err != nil:
		p.a.metrics.storeError("read")
		http.Error(w, "the gateway's task index cannot be reached: retry later", http.StatusServiceUnavailable)
		return receivedUnavailable
	}
	token := r.Header.Get(push.TokenHeader)
	if token == "" {
		token = r.Header.Get(push.TokenHeader10)
	}
	if relay.Agent != p.a.cfg.Name || !tokenEqual(token, relay.Token) {
		return notFound(w)
	}
	if r.ContentLength > p.cfg.MaxBodyBytes {
		http.Error(w, fmt.Sprintf("the delivery is larger than this agent's limit of %d bytes", p.cfg.MaxBodyBytes), http.StatusRequestEntityTooLarge)
		return receivedTooLarge
	}
	body, err := readSized(make([]byte, 0, min(max(r.ContentLength, 0), maxPresize)+1), http.MaxBytesReader(w, r.Body, p.cfg.MaxBodyBytes), r.ContentLength)
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		http.Error(w, fmt.Sprintf("the delivery is larger than this agent's limit of %d bytes", p.cfg.MaxBodyBytes), http.StatusRequestEntityTooLarge)
		return receivedTooLarge
	case err != nil:
		http.Error(w, "reading the delivery failed", http.StatusBadRequest)
		return receivedInvalid
	}
	canon, info, err := normalize.WebhookCanonical(body)
	if err == nil && relay.TaskID != "" && info.TaskID != relay.TaskID {
		err = fmt.Errorf("the delivery is for task %q, not the task this push config was given for", info.TaskID)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return receivedInvalid
	}
	var configs []store.PushConfig
	if relay.TaskID == "" && relay.Pending != nil {
		// Given in a send whose answer has not come yet.
		cfg := *relay.Pending
		cfg.TaskID = info.TaskID
		if cfg.ID == "" {
			cfg.ID = info.TaskID
		}
		configs = []store.PushConfig{cfg}
	} else if configs, _, err = p.configs.PushConfigs(ctx, p.a.cfg.Name, info.TaskID); err != nil {
		p.a.metrics.storeError("read")
		http.Error(w, "the gateway's task index cannot be reached: retry later", http.StatusServiceUnavailable)
		return receivedUnavailable
	}
	snap, err := p.fold(ctx, canon, info)
	if err != nil {
		http.Error(w, "the delivery cannot be applied to the task: "+err.Error(), http.StatusBadRequest)
		return receivedInvalid
	}
	for _, cfg := range configs {
		d, err := p.delivery(cfg, canon, snap)
		if err != nil {
			p.a.log.Warn("a push delivery cannot be written in the caller's dialect; not sent", "task_id", cfg.TaskID, "config_id", cfg.ID, "error", err)
			continue
		}
		if err := p.queue.Enqueue(d); err != nil {
			p.a.log.Warn("push delivery refused: the queue is full or closing, the backend is answered 503 and still holds it",
				"task_id", cfg.TaskID, "queue_size", p.cfg.QueueSize, "error", err)
			w.Header().Set("Retry-After", "1")
			http.Error(w, "the gateway's push queue is full: retry later", http.StatusServiceUnavailable)
			return receivedQueueFull
		}
	}
	w.WriteHeader(http.StatusOK)
	return receivedAccepted
}

// fold keeps the task as it now stands, for 0.x callers, and returns it.
func (p *pushRelay) fold(ctx context.Context, canon []byte, info normalize.EventInfo) ([]byte, error) {
	prev, err := p.configs.PushSnapshot(ctx, p.a.cfg.Name, info.TaskID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		p.a.metrics.storeError("read")
	}
	snap, err := normalize.FoldWebhook(prev, canon, info)
	if err != nil {
		return nil, err
	}
	if err := p.configs.PutPushSnapshot(ctx, p.a.cfg.Name, info.TaskID, snap); err != nil {
		p.a.metrics.storeError("write")
	}
	return snap, nil
}

// pushMeta labels a delivery for the metrics and the access log.
type pushMeta struct {
	configID string
	dialect  string
	start    time.Time
}

func (p *pushRelay) delivery(cfg store.PushConfig, canon, snap []byte) (push.Delivery, error) {
	to := dialect.V03
	if cfg.Dialect == dialect.V10.String() {
		to = dialect.V10
	}
	body, err := normalize.WebhookFor(to, canon, snap)
	if err != nil {
		return push.Delivery{}, err
	}
	var auth *push.Auth
	if cfg.AuthCredentials != "" {
		auth = &push.Auth{Schemes: cfg.AuthSchemes, Credentials: cfg.AuthCredentials}
	}
	return push.Delivery{TaskID: cfg.TaskID, URL: cfg.URL, Header: push.Headers(to, cfg.Token, auth), Body: body,
		Meta: pushMeta{configID: cfg.ID, dialect: to.String(), start: time.Now()}}, nil
}

// delivered records a delivery's outcome: metrics and one access-log line,
// which never holds a token or credential.
func (p *pushRelay) delivered(d *push.Delivery, res push.Result) {
	a := p.a
	a.metrics.pushDelivered(a.cfg.Name, res)
	meta, _ := d.Meta.(pushMeta)
	h := a.log.Handler()
	level := slog.LevelInfo
	if res.Outcome != push.Delivered {
		level = slog.LevelWarn
	}
	if !h.Enabled(context.Background(), level) {
		return
	}
	attrs := []slog.Attr{
		slog.String("task_id", d.TaskID),
		slog.String("config_id", meta.configID),
		slog.String("caller_dialect", meta.dialect),
		slog.String("url", shownURL(d.URL)),
		slog.String("outcome", string(res.Outcome)),
		slog.Int("attempts", res.Attempts),
		slog.Duration("duration", res.Latency),
	}
	if res.Status != 0 {
		attrs = append(attrs, slog.Int("status", res.Status))
	}
	if res.Err != nil {
		attrs = append(attrs, slog.String("error", res.Err.Error()))
	}
	rec := slog.NewRecord(time.Now(), level, "push delivery", 0)
	rec.AddAttrs(attrs...)
	_ = h.Handle(context.Background(), rec)
}

// shownURL is a webhook URL without userinfo, query or fragment.
func shownURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
}

// tokenEqual compares a presented token in constant time.
func tokenEqual(got, want string) bool {
	return want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}
