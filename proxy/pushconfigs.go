package proxy

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/normalize"
	"github.com/a2agate/gateway/store"
)

// The callers' push configs: set, get, list and delete answered from the
// gateway's store, and configs given inline in a send.

// callerConfig is the record of the push config a caller of dialect d
// sent, as normalize read it.
func callerConfig(d dialect.ID, w normalize.WebhookConfig, owner, agent string) store.PushConfig {
	return store.PushConfig{Agent: agent, Owner: owner, Dialect: d.String(), ID: w.ID, URL: w.URL, Token: w.Token,
		Authentication: w.Authentication, AuthCredentials: w.Credentials, AuthSchemes: w.Schemes, Created: time.Now().UTC()}
}

// relays reports whether the relay takes the push config calls of task
// taskID: while it is on, and, left to the card, for a task whose relay
// was made while the card advertised push. That relay outlives the card
// (deliveries to it are still relayed), so its calls must not pass to the
// backend, which would show the caller the relay's URL and token, delete
// the relay under the gateway's record, or take a caller's webhook without
// the target policy.
func (p *pushRelay) relays(ctx context.Context, taskID string) bool {
	if p.on() {
		return true
	}
	if p == nil || p.cfg.Enabled != nil || taskID == "" {
		return false
	}
	_, relay, err := p.configs.PushConfigs(ctx, p.a.cfg.Name, taskID)
	// A failed read is answered by the relay, which names it, rather
	// than passed on unseen.
	return err != nil || relay.ID != ""
}

// configsAtBackend reports whether the backend, not the gateway, holds the
// configs of the call's task: the gateway holds no relay of it, and the
// backend lists configs other than a relay's. Those are configs a caller set
// while the relay was off, left to a card without push or turned off, until a
// card refresh or a reload turned it on: only the backend can show or delete
// them. A backend that cannot list them leaves the call to the gateway.
func (a *Agent) configsAtBackend(r *http.Request, c *call) bool {
	p := a.push
	if _, relay, err := p.configs.PushConfigs(r.Context(), a.cfg.Name, c.info.TaskID); err != nil || relay.ID != "" {
		return false
	}
	params, err := normalize.TaskParams(dialect.ListPushConfigs, c.backend.dialect, c.info.Tenant, c.info.TaskID, -1)
	if err != nil {
		return false
	}
	method, _ := dialect.MethodName(c.backend.dialect, dialect.ListPushConfigs)
	list, e := a.unary(r.Context(), r, c, dialect.ListPushConfigs, method, params)
	return e == nil && normalize.HoldsPushConfigBut(c.env.Dialect, list, relayConfigID)
}

// checkTarget applies the webhook target policy to a caller's URL, and
// refuses a config with members the gateway, which keeps it, would drop.
func (p *pushRelay) checkTarget(path, rawURL string, w normalize.WebhookConfig) *normalize.Error {
	if w.Unknown != "" {
		return normalize.Errorf(dialect.ErrInvalidParams, "invalid params: %s, which a push notification config has no field for: the gateway keeps the config, and would drop it", w.Unknown)
	}
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
	if c.unchecked || !p.relays(r.Context(), c.info.TaskID) {
		return false
	}
	if c.env.Op != dialect.CreatePushConfig && a.configsAtBackend(r, c) {
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
	out := normalize.AppendResultResponse(nil, c.env.ID, result)
	c.bytes += len(out)
	writeJSON(w, http.StatusOK, out)
	return true
}

func (p *pushRelay) set(r *http.Request, c *call) ([]byte, *normalize.Error) {
	w, path := normalize.CreatedPushConfig(c.env.Dialect, c.env.Params)
	cfg := callerConfig(c.env.Dialect, w, c.owner, p.a.cfg.Name)
	cfg.TaskID = strings.Clone(c.info.TaskID) // a view into the request
	if e := p.checkTarget(path, cfg.URL, w); e != nil {
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
	configs, relay, err := p.configs.PushConfigs(ctx, cfg.Agent, cfg.TaskID)
	if err != nil {
		return p.a.indexUnavailable("read", err)
	}
	if e := roomForConfig(configs, cfg.ID); e != nil {
		return e
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

// maxPushConfigsPerTask bounds the configs of one task: each delivery to the
// task fans out to every one of them through the agent's one queue, so a
// caller with configs without end would fill it for everyone.
const maxPushConfigsPerTask = 32

// roomForConfig refuses a config of a new id for a task that holds
// maxPushConfigsPerTask already (configs); replacing one is always room.
func roomForConfig(configs []store.PushConfig, id string) *normalize.Error {
	if len(configs) < maxPushConfigsPerTask || slices.ContainsFunc(configs, func(c store.PushConfig) bool { return c.ID == id }) {
		return nil
	}
	return normalize.Errorf(dialect.ErrInvalidParams, "invalid params: the task has %d push notification configs, the most one task may have: delete one, or replace one by its id", maxPushConfigsPerTask)
}

// register gives the backend the task's relay config.
func (p *pushRelay) register(r *http.Request, c *call, taskID string, relay store.PushRelay) *normalize.Error {
	b := c.backend
	params := normalize.CreatePushConfigParams(b.dialect, c.info.Tenant, taskID, p.relayConfig(relay))
	method, _ := dialect.MethodName(b.dialect, dialect.CreatePushConfig)
	_, e := p.a.unary(r.Context(), r, c, dialect.CreatePushConfig, method, params)
	return e
}

// unregister removes the backend's relay config of a task whose last
// caller config was deleted. A backend that cannot (0.2.5 has no delete)
// keeps it, but the gateway forgot the relay: its deliveries are refused.
func (p *pushRelay) unregister(r *http.Request, c *call, taskID string) {
	b := c.backend
	params := normalize.DeletePushConfigParams(b.dialect, c.info.Tenant, taskID, relayConfigID)
	method, _ := dialect.MethodName(b.dialect, dialect.DeletePushConfig)
	if _, e := p.a.unary(r.Context(), r, c, dialect.DeletePushConfig, method, params); e != nil {
		p.a.log.Info("the backend did not delete the task's relay push config; the gateway refuses its deliveries from now on",
			"backend", b.name, "error", e.Message)
	}
}

// render writes a stored config as a TaskPushNotificationConfig in dialect
// to: the caller's own URL, token and authentication.
func (p *pushRelay) render(to dialect.ID, cfg store.PushConfig) ([]byte, *normalize.Error) {
	from := dialect.V03
	if cfg.Dialect == dialect.V10.String() {
		from = dialect.V10
	}
	res, err := normalize.PushConfigResult(from, to, cfg.TaskID, normalize.WebhookConfig{
		ID: cfg.ID, URL: cfg.URL, Token: cfg.Token, Authentication: cfg.Authentication})
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
	// 1.0 pages the list; a task has few configs, listed oldest first, so
	// a page is addressed by its offset.
	start, end, next := 0, len(configs), ""
	if c.env.Dialect == dialect.V10 {
		tok, size := normalize.ListPushConfigsPage(c.env.Params)
		if tok != "" {
			n, ok := parsePageOffset(tok)
			if !ok {
				return nil, normalize.Errorf(dialect.ErrInvalidParams, "invalid params: params.pageToken: not a page token this gateway gave")
			}
			start = min(n, len(configs))
		}
		if size < 0 {
			return nil, normalize.Errorf(dialect.ErrInvalidParams, "invalid params: params.pageSize: must not be negative, got %d", size)
		}
		if size > 0 && start+int(size) < end {
			end = start + int(size)
			next = pageOffsetToken(end)
		}
	}
	page := make([][]byte, 0, end-start)
	for _, cfg := range configs[start:end] {
		one, e := p.render(c.env.Dialect, cfg)
		if e != nil {
			return nil, e
		}
		page = append(page, one)
	}
	return normalize.ListPushConfigsResult(c.env.Dialect, page, next), nil
}

func pageOffsetToken(n int) string {
	return base64.RawURLEncoding.EncodeToString([]byte("push-offset:" + strconv.Itoa(n)))
}

func parsePageOffset(tok string) (int, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return 0, false
	}
	s, ok := strings.CutPrefix(string(raw), "push-offset:")
	n, err := strconv.Atoi(s)
	return n, ok && err == nil && n >= 0
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
	return normalize.DeletePushConfigResult(c.env.Dialect), nil
}

// inlineConfig replaces a push config given in a send with the task's relay
// config, in the backend's params. For a send that continues a task the
// caller's config is stored now; for a new task, once the backend names the
// task (bindPending, from record).
func (a *Agent) inlineConfig(r *http.Request, c *call, params []byte) ([]byte, *normalize.Error) {
	p := a.push
	if (c.env.Op != dialect.SendMessage && c.env.Op != dialect.SendStreamingMessage) || c.unchecked || p == nil {
		return params, nil
	}
	w, path, ok := normalize.InlinePushConfig(c.env.Params)
	if !ok || !p.relays(r.Context(), c.info.TaskID) {
		return params, nil
	}
	cfg := callerConfig(c.env.Dialect, w, c.owner, a.cfg.Name)
	if e := p.checkTarget(path, cfg.URL, w); e != nil {
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
		configs, existing, err := p.configs.PushConfigs(ctx, a.cfg.Name, taskID)
		if err != nil {
			return nil, a.indexUnavailable("read", err)
		}
		if e := roomForConfig(configs, cfg.ID); e != nil {
			return nil, e
		}
		if existing.ID == "" {
			existing = newRelay(a.cfg.Name)
		}
		if relay, err = p.configs.PutPushConfig(ctx, cfg, existing); err != nil {
			return nil, a.indexUnavailable("write", err)
		}
	} else {
		relay = newRelay(a.cfg.Name)
		relay.Pending, relay.Backend = &cfg, c.backend.name
		if err := p.configs.PutPendingRelay(ctx, relay); err != nil {
			return nil, a.indexUnavailable("write", err)
		}
		c.pushPending = &relay
	}
	out, err := normalize.WithInlinePushConfig(c.backend.dialect, params, p.relayConfig(relay))
	if err != nil {
		return nil, normalize.AsError(err, dialect.ErrInternal)
	}
	return out, nil
}

// bindPending stores the config a send gave inline under the task the
// backend created for it. It refuses an answer naming another task than
// a delivery to the config's relay named before the answer came: that
// delivery recorded its task for the caller and bound the config to it
// (pushRelay.claim), and the caller's webhook was sent it, so the caller
// is told of that task, and an answer of a second one, which the gateway
// would record too and move the config to, is withheld.
func (a *Agent) bindPending(ctx context.Context, c *call, taskID string) *normalize.Error {
	relay := c.pushPending
	c.pushPending = nil
	withhold := func(bound string) *normalize.Error {
		a.log.Warn("a send's answer names another task than the push deliveries of its config did before it; the answer is withheld",
			"task_id", taskID, "delivered_task_id", bound)
		return backendFault(backendInvalidReply, "backend %q answered the send with task %q after its push deliveries for this send named task %q, which the gateway recorded as yours and your webhook was sent: follow task %q",
			c.backend.name, truncateHeader(taskID), truncateHeader(bound), truncateHeader(bound))
	}
	if bound, err := a.push.configs.PushRelay(ctx, relay.ID); err == nil && bound.TaskID != "" && bound.TaskID != taskID {
		return withhold(bound.TaskID)
	}
	cfg := *relay.Pending
	// A backend naming another caller's task would otherwise have that
	// task's updates posted to this caller's webhook.
	if err := a.notAnothers(ctx, cfg.Owner, taskID); err != nil {
		if !errors.Is(err, errNotTheOwnersTask) {
			a.metrics.storeError("read")
		}
		a.log.Warn("a push config given in a send is not bound to the task the backend answered with", "task_id", taskID, "error", err)
		return nil
	}
	cfg.TaskID = strings.Clone(taskID) // a view into the backend's reply
	if cfg.ID == "" {
		cfg.ID = taskID
	}
	_, err := a.push.configs.PutPushConfig(ctx, cfg, *relay)
	if errors.Is(err, store.ErrRelayBound) {
		// A delivery bound the relay since the read above.
		bound, _ := a.push.configs.PushRelay(ctx, relay.ID)
		return withhold(bound.TaskID)
	}
	if err != nil {
		a.metrics.storeError("write")
		a.log.Error("recording a push config given in a send failed; its deliveries are refused", "task_id", taskID, "error", err)
	}
	return nil
}
