package proxy

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/readall"
	"github.com/a2agate/gateway/normalize"
	"github.com/a2agate/gateway/push"
	"github.com/a2agate/gateway/store"
)

// ServePush receives the backend's deliveries at {path}/push/{relay}: the
// one path of the agent that takes the relay's token instead of a JWT.
func (a *Agent) ServePush(w http.ResponseWriter, r *http.Request) {
	p := a.push
	r, span := a.startPushTrace(r)
	outcome := p.receive(w, r)
	endPushTrace(span, outcome)
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
	receivedAfterFinal  = "after_final" // would move a task out of a final state: 409
)

// receivedOutcomes lists them, for pre-creating metric series.
var receivedOutcomes = []string{receivedAccepted, receivedRefused, receivedTooLarge, receivedInvalid, receivedQueueFull, receivedUnavailable, receivedAfterFinal}

// notFound is every refusal of a relay: an unknown id and a wrong token get
// the same answer, so that neither can be probed.
func notFound(w http.ResponseWriter) string {
	http.Error(w, "not found", http.StatusNotFound)
	return receivedRefused
}

// indexUnavailable answers a delivery the task index failed to read or
// write (op) for, counted: the backend is to retry it later.
func (p *pushRelay) indexUnavailable(w http.ResponseWriter, op string) string {
	p.a.metrics.storeError(op)
	http.Error(w, "the gateway's task index cannot be reached: retry later", http.StatusServiceUnavailable)
	return receivedUnavailable
}

// tooLarge answers a delivery over the agent's body limit, whether its
// Content-Length said so or its body ran past it.
func (p *pushRelay) tooLarge(w http.ResponseWriter) string {
	http.Error(w, fmt.Sprintf("the delivery is larger than this agent's limit of %d bytes", p.cfg.MaxBodyBytes), http.StatusRequestEntityTooLarge)
	return receivedTooLarge
}

func (p *pushRelay) receive(w http.ResponseWriter, r *http.Request) string {
	// Not p.on(): a card that stops advertising push turns the relay off
	// for new configs, but the relays made before are where the backend
	// still posts those tasks' events, and their callers' webhooks would
	// lose them. With push.enabled false there is no relay (p is nil).
	if p == nil {
		return notFound(w)
	}
	ctx := r.Context()
	relay, err := p.configs.PushRelay(ctx, r.PathValue("relay"))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return notFound(w)
	case err != nil:
		return p.indexUnavailable(w, "read")
	}
	token := r.Header.Get(push.TokenHeader)
	if token == "" {
		token = r.Header.Get(push.TokenHeader10)
	}
	if relay.Agent != p.a.cfg.Name || !tokenEqual(token, relay.Token) {
		return notFound(w)
	}
	if r.ContentLength > p.cfg.MaxBodyBytes {
		return p.tooLarge(w)
	}
	// As for a caller's call: the server bounds only the headers, and a
	// sender that never finishes its body would hold the delivery open.
	deadline := readall.StartBodyDeadline(w, p.a.readTimeout)
	body, err := readSized(make([]byte, 0, min(max(r.ContentLength, 0), maxPresize)+1), http.MaxBytesReader(w, r.Body, p.cfg.MaxBodyBytes), r.ContentLength)
	deadline.End(err)
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return p.tooLarge(w)
	case readall.Expired(err):
		http.Error(w, "the delivery's body did not arrive within server.read_timeout ("+p.a.readTimeout.String()+")", http.StatusRequestTimeout)
		return receivedInvalid
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
	pushTaskSpan(ctx, info.TaskID)
	pending := relay.TaskID == "" && relay.Pending != nil
	if pending {
		switch err := p.a.notAnothers(ctx, relay.Pending.Owner, info.TaskID); {
		case errors.Is(err, errNotTheOwnersTask):
			http.Error(w, fmt.Sprintf("the delivery is for task %q, not a task of the send this push config was given in", info.TaskID), http.StatusBadRequest)
			return receivedInvalid
		case err != nil:
			return p.indexUnavailable(w, "read")
		}
	}
	snap, err := p.fold(ctx, canon, info)
	var big *snapshotTooLarge
	var final *afterFinal
	switch {
	case errors.As(err, &final):
		p.a.log.Warn("a push delivery would move a task out of its final state; the backend is answered 409 and nothing is relayed",
			"task_id", info.TaskID, "state", final.state, "delivered_state", final.to)
		http.Error(w, fmt.Sprintf("task %q is %s, a final state: a delivery cannot make it %s", info.TaskID, final.state, final.to), http.StatusConflict)
		return receivedAfterFinal
	case errors.As(err, &big):
		p.a.log.Warn("a push delivery would make the task the relay keeps larger than push.max_body_bytes; the backend is answered 413 and nothing is relayed",
			"task_id", info.TaskID, "bytes", big.n, "max_body_bytes", p.cfg.MaxBodyBytes)
		http.Error(w, fmt.Sprintf("the task as it stands after this delivery (%d bytes) is larger than this agent's limit of %d bytes", big.n, p.cfg.MaxBodyBytes), http.StatusRequestEntityTooLarge)
		return receivedTooLarge
	case err != nil:
		http.Error(w, "the delivery cannot be applied to the task: "+err.Error(), http.StatusBadRequest)
		return receivedInvalid
	}
	var configs []store.PushConfig
	if pending {
		// Given in a send whose answer has not come yet (a2a-go v2 posts the
		// first events before it answers). Only a delivery found sound gets
		// this far: it claims the task for the send's caller, as the send's
		// answer would (record), so that no other caller's call can record
		// it first, and binds the config to it (bindPending, the same write):
		// without the task's entry the store keeps no snapshot, and the
		// updates that follow would fold into an empty task, its state
		// unknown, for a 0.x caller.
		cfg := *relay.Pending
		if outcome := p.claim(ctx, w, relay, info, snap); outcome != "" {
			return outcome
		}
		cfg.TaskID = strings.Clone(info.TaskID)
		if cfg.ID == "" {
			cfg.ID = cfg.TaskID
		}
		switch _, err := p.configs.PutPushConfig(ctx, cfg, relay); {
		case errors.Is(err, store.ErrRelayBound):
			// The send's answer, or an earlier delivery, bound the relay
			// to another task since it was read.
			http.Error(w, fmt.Sprintf("the delivery is for task %q, not the task this push config was given for", info.TaskID), http.StatusBadRequest)
			return receivedInvalid
		case err != nil:
			return p.indexUnavailable(w, "write")
		}
		configs = []store.PushConfig{cfg}
	} else if configs, _, err = p.configs.PushConfigs(ctx, p.a.cfg.Name, info.TaskID); err != nil {
		return p.indexUnavailable(w, "read")
	}
	if err := p.configs.PutPushSnapshot(ctx, p.a.cfg.Name, info.TaskID, snap); err != nil {
		p.a.metrics.storeError("write")
	}
	traceCtx := pushTraceContext(ctx)
	deliveries := make([]push.Delivery, 0, len(configs))
	for _, cfg := range configs {
		d, err := p.delivery(cfg, canon, snap, traceCtx)
		if err != nil {
			p.a.log.Warn("a push delivery cannot be written in the caller's dialect; not sent", "task_id", cfg.TaskID, "config_id", cfg.ID, "error", err)
			continue
		}
		deliveries = append(deliveries, d)
	}
	// All or none: the backend's retry of a refused delivery must not
	// reach twice the webhooks that were queued before the queue filled.
	if err := p.queue.EnqueueAll(deliveries); err != nil {
		p.a.log.Warn("push delivery refused: the queue is full or closing, the backend is answered 503 and still holds it",
			"task_id", info.TaskID, "webhooks", len(deliveries), "queue_size", p.cfg.QueueSize, "queue_bytes", p.cfg.QueueBytes, "error", err)
		w.Header().Set("Retry-After", "1")
		http.Error(w, "the gateway's push queue is full: retry later", http.StatusServiceUnavailable)
		return receivedQueueFull
	}
	w.WriteHeader(http.StatusOK)
	return receivedAccepted
}

// snapshotTooLarge refuses a delivery that would make the task the relay
// keeps (and posts whole to 0.x callers) larger than push.max_body_bytes:
// each delivery is bounded, but artifact updates that append grow the task
// without end.
type snapshotTooLarge struct{ n int }

func (e *snapshotTooLarge) Error() string {
	return fmt.Sprintf("the task would be %d bytes", e.n)
}

// fold returns the task as it stands after the delivery, for 0.x callers,
// which is no larger than push.max_body_bytes.
func (p *pushRelay) fold(ctx context.Context, canon []byte, info normalize.EventInfo) ([]byte, error) {
	prev, err := p.configs.PushSnapshot(ctx, p.a.cfg.Name, info.TaskID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		p.a.metrics.storeError("read")
	}
	if int64(len(prev)) > p.cfg.MaxBodyBytes {
		// Kept under a larger limit, before a reload lowered it: not
		// folded into, which would take more memory still.
		return nil, &snapshotTooLarge{n: len(prev) + len(canon)}
	}
	// What the relay kept: the task as the deliveries so far left it. Its
	// state is judged from them alone, never from the index: deliveries lag
	// behind answers (@a2a-js/sdk posts each one after loading the task, one
	// at a time), so a blocking send's answer has often recorded the final
	// state before the working one is delivered. Its context, which never
	// changes (a delivery naming another would show the caller a context
	// that may be another caller's), falls back to the index's.
	var known normalize.EventInfo
	if len(prev) > 0 {
		if held := normalize.InspectTask(prev); held.TaskID == info.TaskID {
			known = held
		}
	}
	if known.ContextID == "" {
		if t, err := p.a.tasks.Get(ctx, p.a.cfg.Name, info.TaskID); err == nil {
			known.ContextID = t.ContextID
		}
	}
	if info.ContextID != "" && known.ContextID != "" && info.ContextID != known.ContextID {
		return nil, fmt.Errorf("the delivery names contextId %q, not the context of task %q", info.ContextID, info.TaskID)
	}
	snap, err := normalize.FoldWebhook(prev, canon, info)
	if err != nil {
		return nil, err
	}
	if dialect.TerminalState(known.State) {
		// A final task is done (A2A: it is not restarted); the backend's
		// retry of its last delivery repeats the state and passes.
		if to := normalize.InspectTask(snap).State; to != known.State {
			return nil, &afterFinal{state: known.State, to: to}
		}
	}
	if int64(len(snap)) > p.cfg.MaxBodyBytes {
		return nil, &snapshotTooLarge{n: len(snap)}
	}
	return snap, nil
}

// afterFinal refuses a delivery that would move a task out of the final
// state an earlier delivery left it in (to another state, final or not).
type afterFinal struct{ state, to string }

func (e *afterFinal) Error() string {
	return fmt.Sprintf("the task is %s, the delivery makes it %s", e.state, e.to)
}

// claim records the task an early delivery names (before the answer of the
// send whose relay it came to) for that send's caller, under the send's
// backend, in the state snap shows. It answers the delivery and returns its
// outcome when the task cannot be the caller's; "" when it is now.
func (p *pushRelay) claim(ctx context.Context, w http.ResponseWriter, relay store.PushRelay, info normalize.EventInfo, snap []byte) string {
	a := p.a
	backend := relay.Backend
	if backend == "" {
		backend = a.backend.name // a relay recorded before relays named it
	}
	t := store.Task{
		ID: strings.Clone(info.TaskID), ContextID: strings.Clone(info.ContextID), Owner: relay.Pending.Owner, Agent: a.cfg.Name,
		Backend: backend, State: normalize.InspectTask(snap).State, Updated: time.Now(),
	}
	err := a.tasks.Put(ctx, t)
	switch {
	case err == nil:
		return ""
	case errors.Is(err, store.ErrOwnerConflict):
		http.Error(w, fmt.Sprintf("the delivery is for task %q, not a task of the send this push config was given in", info.TaskID), http.StatusBadRequest)
		return receivedInvalid
	case errors.Is(err, store.ErrContextConflict):
		http.Error(w, fmt.Sprintf("the delivery puts task %q in contextId %q, which holds another caller's tasks", info.TaskID, info.ContextID), http.StatusBadRequest)
		return receivedInvalid
	case errors.Is(err, store.ErrOwnerQuota), errors.Is(err, store.ErrIndexFull):
		a.log.Warn("a delivery that came before its send's answer finds no room for its task in the index; the backend is answered 503", "task_id", t.ID, "error", err)
		w.Header().Set("Retry-After", "1")
		http.Error(w, "the gateway's task index has no room for the task now: retry later", http.StatusServiceUnavailable)
		return receivedUnavailable
	}
	a.log.Warn("a delivery that came before its send's answer cannot record its task; the backend is answered 503", "task_id", t.ID, "error", err)
	return p.indexUnavailable(w, "write")
}

// pushMeta labels a delivery for the metrics and the access log.
type pushMeta struct {
	configID string
	dialect  string
	start    time.Time
	trace    context.Context // of the backend's post, for the attempts; nil for none
}

func (p *pushRelay) delivery(cfg store.PushConfig, canon, snap []byte, traceCtx context.Context) (push.Delivery, error) {
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
		Meta: pushMeta{configID: cfg.ID, dialect: to.String(), start: time.Now(), trace: traceCtx}}, nil
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
