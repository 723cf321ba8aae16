package proxy

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"maps"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/normalize"
	"github.com/a2agate/gateway/store"
)

// Safe retries: a unary send that starts new work is remembered under its
// key (the Idempotency-Key header, else message.messageId) for the agent's
// retries.window. The same caller sending the same key again gets the first
// send's answer, and the backend never sees the message twice.

// Outcomes of a retry, the values of the retries counter's outcome label.
const (
	retryDeduplicated      = "deduplicated"
	retryJoinedInFlight    = "joined_in_flight"
	retryResentNotAccepted = "resent_not_accepted"
	retryRefusedKeyReuse   = "refused_key_reuse"
)

// HeaderIdempotencyKey names a send's retry key; without it the message id is.
const HeaderIdempotencyKey = "Idempotency-Key"

// maxRetryKey bounds a key as stored; a longer one is stored as its digest.
const maxRetryKey = 256

const (
	// retryLease is how long a first send's claim holds without renewal:
	// past it, its replica is taken for dead.
	retryLease = 15 * time.Second
	// retryPollFirst and retryPollMax pace the polls of a retry waiting on
	// another replica's send or on a task to finish.
	retryPollFirst = 50 * time.Millisecond
	retryPollMax   = time.Second
	// retrySaveTimeout bounds writing a first send's outcome, which runs
	// after its caller may have gone.
	retrySaveTimeout = 5 * time.Second
)

// retries is an agent's state for retries: this replica's running first
// sends, which a retry reaching the same replica waits on without polling.
type retries struct {
	cfg RetriesConfig
	// now is the clock of windows and leases; tests set their own.
	now    atomic.Pointer[func() time.Time]
	holder string // names this replica in claims

	mu      sync.Mutex
	flights map[store.SendKey]*flight
	closed  chan struct{}
	once    sync.Once
	// renewing starts the one goroutine renewing this replica's claims.
	renewing sync.Once
	// waitHook, when set, is called as a retry starts waiting on a flight
	// of this replica (tests synchronise on it).
	waitHook atomic.Pointer[func()]
}

func (rs *retries) setWaitHook(f func()) { rs.waitHook.Store(&f) }

// flight is a first send running on this replica.
type flight struct {
	// done is closed once the flight settles; made by its first waiter,
	// under the retries' lock (most sends have none).
	done chan struct{}
	rec  store.SendRecord // the outcome, once done is closed
	// mu orders the claim's renewals before its outcome: a renewal written
	// after the outcome would bring the claim back.
	mu       sync.Mutex
	claim    store.SendRecord
	finished bool
	// renewalInDoubt: a renewal's write gave up waiting, so it may still
	// land. The outcome then goes the renewal's own ordered way
	// (SaveSend), never in the task's script, which could overtake it.
	renewalInDoubt bool
}

func newRetries(cfg RetriesConfig) *retries {
	var id [8]byte
	_, _ = rand.Read(id[:])
	rs := &retries{cfg: cfg, holder: hex.EncodeToString(id[:]),
		flights: map[store.SendKey]*flight{}, closed: make(chan struct{})}
	rs.setClock(time.Now)
	return rs
}

func (rs *retries) setClock(now func() time.Time) { rs.now.Store(&now) }

func (rs *retries) clock() time.Time { return (*rs.now.Load())() }

// close stops the lease renewals: the replica is going away, and its
// claims must lapse for the retries other replicas serve.
func (rs *retries) close() { rs.once.Do(func() { close(rs.closed) }) }

// sendRetry is what route learned of a send's key.
type sendRetry struct {
	key     store.SendKey
	digest  string
	rec     store.SendRecord // the claim, when claimed
	claimed bool
	prior   store.SendRecord
	// flight is a claimed send's, while it runs on this replica: own,
	// in the send's retry rather than an allocation of its own.
	flight *flight
	own    flight
}

// newSendRetry is the claim a send (unary or streaming) with a key would
// make; nil for other calls and for a send whose digest cannot be taken.
func (a *Agent) newSendRetry(r *http.Request, c *call, params []byte, to dialect.ID) *sendRetry {
	if op := c.env.Op; op != dialect.SendMessage && op != dialect.SendStreamingMessage {
		return nil
	}
	key := retryKey(r, c)
	if key == "" {
		return nil
	}
	digest, err := sendDigest(c, params, to)
	if err != nil {
		// The params were validated already: a digest that cannot be taken
		// only leaves this send without retries.
		a.log.Warn("a send's retry digest could not be taken; it is forwarded without retries", "error", err)
		return nil
	}
	rs := a.retries
	now := rs.clock()
	return &sendRetry{key: store.SendKey{Agent: a.cfg.Name, Owner: c.owner, Key: key}, digest: digest,
		rec: store.SendRecord{Digest: digest, State: store.SendRunning, Holder: rs.holder, Lease: now.Add(retryLease), Expires: now.Add(rs.cfg.Window)}}
}

// admitSend admits a send starting new work as Store.Admit does; a send
// with a key also claims it in the same round trip, or learns the send it
// retries (c.retry).
func (a *Agent) admitSend(ctx context.Context, c *call, rt *sendRetry) (string, error) {
	adm := store.Admission{Agent: a.cfg.Name, Owner: c.owner, ContextID: c.info.ContextID}
	if rt == nil {
		return a.tasks.Admit(ctx, adm)
	}
	owner, prior, claimed, err := a.tasks.ClaimSend(ctx, adm, rt.key, rt.rec, a.retries.clock())
	if err == nil || errors.Is(err, store.ErrNotFound) {
		rt.claimed, rt.prior = claimed, prior
		c.retry = rt
	}
	return owner, err
}

// getTask reads the task a call names; a send with a key continuing it
// also claims the key in the same round trip, or learns the send it
// retries (c.retry).
func (a *Agent) getTask(ctx context.Context, c *call, rt *sendRetry) (store.Task, error) {
	if rt == nil {
		return a.tasks.Get(ctx, a.cfg.Name, c.info.TaskID)
	}
	t, prior, claimed, err := a.tasks.GetClaimSend(ctx, a.cfg.Name, c.info.TaskID, rt.key, rt.rec, a.retries.clock())
	if err == nil || errors.Is(err, store.ErrNotFound) {
		rt.claimed, rt.prior = claimed, prior
		c.retry = rt
	}
	return t, err
}

// retryKey is the send's key: the Idempotency-Key header, else its message
// id; a long one is replaced by its digest.
func retryKey(r *http.Request, c *call) string {
	key := firstValue(r.Header, HeaderIdempotencyKey)
	if key == "" {
		key = strings.Clone(c.info.MessageID) // read while the params were translated
	}
	if len(key) > maxRetryKey {
		sum := sha256.Sum256([]byte(key))
		key = "sha256:" + hex.EncodeToString(sum[:])
	}
	return key
}

// sendDigest identifies what a send asks for (normalize.AppendSendDigest),
// from its params in 1.0 form as the gateway forwards them: a 0.x caller's
// as translated, a 1.0 caller's as sent.
func sendDigest(c *call, params []byte, to dialect.ID) (string, error) {
	v10 := c.env.Params
	switch {
	case to == dialect.V10:
		v10 = params
	case c.env.Dialect != dialect.V10:
		buf := borrowBuffer(len(c.env.Params) + 256)
		defer returnBuffer(buf)
		out, _, err := normalize.AppendCanonicalParams((*buf)[:0], &c.env)
		keep(buf, out, c.env.Params)
		if err != nil {
			return "", err
		}
		v10 = out
	}
	// Borrowed, not lent to the call: nothing keeps the canonical bytes,
	// and a stream would keep its call's buffers while it is open.
	buf := borrowBuffer(len(v10))
	digest, room, err := normalize.AppendSendDigest((*buf)[:0], v10)
	*buf = room
	returnBuffer(buf)
	return digest, err
}

// serveRetry answers a send whose key the index knew: from the first
// send with it, unary or streaming, without forwarding it.
func (a *Agent) serveRetry(w http.ResponseWriter, r *http.Request, c *call) {
	rt := c.retry
	// A digest of another length was written by a gateway of another
	// version (sha256 before xxHash64), which a rolling upgrade runs beside
	// this one on a shared index: it cannot be compared, and the key is the
	// caller's word that this is the same message.
	if len(rt.prior.Digest) == len(rt.digest) && rt.prior.Digest != rt.digest {
		a.metrics.retry(a.cfg.Name, retryRefusedKeyReuse)
		a.fail(w, c, normalize.Errorf(dialect.ErrInvalidParams, "invalid params: this %s was already used for another message within the retry window (%s): a retry must send the same message again; new work needs a new key", keyName(r), a.retries.cfg.Window))
		return
	}
	rec, e := a.firstOutcome(r, c)
	if e != nil {
		a.fail(w, c, e)
		return
	}
	if c.env.Op.Streaming() {
		a.streamRetry(w, r, c, rec)
		return
	}
	result, e := a.retryAnswer(r, c, rec)
	if e != nil {
		a.fail(w, c, e)
		return
	}
	a.writeResult(w, c, result)
}

// firstOutcome is the first send's record as a retry goes by it: once the
// first send's answer, or its task, is known. It counts the retry.
func (a *Agent) firstOutcome(r *http.Request, c *call) (store.SendRecord, *normalize.Error) {
	rec := c.retry.prior
	if rec.State != store.SendRunning {
		a.metrics.retry(a.cfg.Name, retryDeduplicated)
		return rec, nil
	}
	a.metrics.retry(a.cfg.Name, retryJoinedInFlight)
	return a.awaitFirst(r.Context(), c.retry, rec)
}

// claimedSend notes the flight of a send that claimed its key, before it
// is forwarded.
func (a *Agent) claimedSend(c *call) *flight {
	rs, rt := a.retries, c.retry
	if rt.prior.State == store.SendNotAccepted {
		a.metrics.retry(a.cfg.Name, retryResentNotAccepted)
	}
	fl := &rt.own
	fl.claim = rt.rec
	rt.flight = fl
	rs.mu.Lock()
	rs.flights[rt.key] = fl
	rs.mu.Unlock()
	rs.renewing.Do(func() { go a.renewClaims() })
	return fl
}

// settle keeps a first send's outcome for its retries, once: in the index
// for other replicas, and for this replica's waiters on its flight. ctx
// must outlive the caller (the index's own timeouts bound the write).
func (a *Agent) settle(ctx context.Context, rt *sendRetry, rec store.SendRecord) {
	a.settleBy(rt, rec, func() bool {
		if err := a.tasks.SaveSend(ctx, rt.key, rec); err != nil {
			a.metrics.storeError("write")
			a.log.Error("a send's outcome could not be kept for its retries: a retry will wait out the claim's lease", "error", err)
		}
		return true
	})
}

// settleBy settles rt's flight with rec, once, written by write under the
// flight's lock (so after any renewal of its claim); a write that reports
// failure leaves the flight running. It reports whether it settled.
func (a *Agent) settleBy(rt *sendRetry, rec store.SendRecord, write func() bool) bool {
	fl := rt.flight
	if fl == nil {
		return false
	}
	fl.mu.Lock()
	if fl.finished || !write() {
		fl.mu.Unlock()
		return false
	}
	fl.finished = true
	fl.rec = rec
	fl.mu.Unlock()
	rs := a.retries
	rs.mu.Lock()
	delete(rs.flights, rt.key)
	done := fl.done
	rs.mu.Unlock()
	if done != nil {
		close(done)
	}
	return true
}

// putTask records t, the task c made or touched. A first send still
// running records its task with its outcome, in one round trip
// (store.Retries.PutSend), which settles it: the outcome's write then
// adds no wait to the answer.
func (a *Agent) putTask(ctx context.Context, c *call, t store.Task) error {
	rt := c.retry
	if rt == nil {
		return a.tasks.Put(ctx, t)
	}
	rec := store.SendRecord{Digest: rt.digest, State: store.SendTask, TaskID: t.ID, Expires: rt.rec.Expires}
	var err error
	putSend := func() bool {
		if rt.flight.renewalInDoubt {
			return false
		}
		err = a.tasks.PutSend(ctx, t, rt.key, rec)
		return err == nil
	}
	if a.settleBy(rt, rec, putSend) || err != nil {
		return err
	}
	return a.tasks.Put(ctx, t)
}

func keyName(r *http.Request) string {
	if firstValue(r.Header, HeaderIdempotencyKey) != "" {
		return "Idempotency-Key"
	}
	return "message.messageId"
}

// firstSend forwards a claimed unary send. The backend call outlives the
// caller (bounded by the backend's own timeouts), so that its outcome is
// kept for the retry a caller that timed out or lost its connection will
// send. A blocking send may be served from the backend's stream
// (viastream.go), and is sent as a plain one when the backend refused the
// stream as a method it does not serve.
func (a *Agent) firstSend(w http.ResponseWriter, r *http.Request, c *call, method string, params []byte) {
	a.claimedSend(c)
	var ctx context.Context
	ctx, c.first = outlivingCaller(r.Context())
	defer c.first.stop()
	var result []byte
	var e *normalize.Error
	plain := !a.viaStream(c)
	if !plain {
		if result, e, plain = a.sendViaStream(ctx, r, c, params); plain {
			a.viaStreamRefused(c, e)
		}
	}
	if plain {
		result, e = a.unary(ctx, r, c, dialect.SendMessage, method, params)
	}
	// Not in ctx, which response_timeout or the shutdown may have ended:
	// the outcome is for the retry such a send's caller will make.
	a.settle(c.first.values, c.retry, a.sendOutcome(c, c.retry, result, e))
	a.answerUnary(w, r, c, result, e)
}

// firstStream forwards a claimed streaming send. Its caller's disconnect
// ends the backend stream as for any stream: the task is kept as soon as
// an event names it (streamAnswered), and a retry subscribes to it.
func (a *Agent) firstStream(w http.ResponseWriter, r *http.Request, c *call, method string, params []byte) {
	a.claimedSend(c)
	a.stream(w, r, c, method, params)
	// No event named a task or was a message.
	rec := store.SendRecord{Digest: c.retry.digest, Expires: c.retry.rec.Expires, State: store.SendUnknown}
	var e *normalize.Error
	if errors.As(c.failure, &e) && notAccepted(e) {
		rec.State = store.SendNotAccepted
	}
	a.settle(context.WithoutCancel(r.Context()), c.retry, rec)
}

// streamAnswered keeps what a first streaming send's event tells its
// retries: the task it names, or the message that answers the send. out
// is the event in the caller's dialect.
func (a *Agent) streamAnswered(c *call, info normalize.EventInfo, out []byte) {
	rt := c.retry
	if rt.flight == nil || rt.flight.finished { // settle runs on this goroutine too
		return
	}
	rec := store.SendRecord{Digest: rt.digest, Expires: rt.rec.Expires}
	switch {
	case info.TaskID != "":
		rec.State, rec.TaskID = store.SendTask, strings.Clone(info.TaskID)
	case info.Kind != normalize.KindMessage:
		return
	case int64(len(out)) > a.retries.cfg.MaxMessageBytes:
		rec.State = store.SendAnswerDropped
	default:
		rec.State, rec.Answer, rec.AnswerDialect = store.SendMessage, slices.Clone(out), strconv.Itoa(int(c.env.Dialect))
	}
	a.settle(context.Background(), rt, rec)
}

// outlivingCaller is the context of a first send: not ended by its caller
// going away, but by the gateway's shutdown (ErrShuttingDown, the cause the
// server ends calls with), so that a held send cannot keep the gateway up.
// The backend timeouts bound it otherwise: a plain send's reply deadline
// ends this same context (outliving.bound), where a context derived for the
// backend request would be a second one, with a timer and children of its
// own, on every send. The store's own timeouts bound the write of the
// outcome, in values.
func outlivingCaller(parent context.Context) (context.Context, outliving) {
	values := context.WithoutCancel(parent)
	ctx, cancel := context.WithCancelCause(values)
	stopAfter := context.AfterFunc(parent, func() {
		if cause := context.Cause(parent); errors.Is(cause, ErrShuttingDown) {
			cancel(cause)
		}
	})
	return ctx, outliving{values: values, stopAfter: stopAfter, cancel: cancel}
}

// outliving ends a first send's context (outlivingCaller) once the send
// is answered; a value in the call, where a closure joining its calls
// would be one more allocation per send.
type outliving struct {
	// values are the caller's context's values, never ended: the context
	// of the writes that must land whatever ended the send.
	values    context.Context
	stopAfter func() bool
	cancel    context.CancelCauseFunc
	// timer is the reply deadline (bound), while it runs.
	timer *time.Timer
}

// bound ends the context with cause once d has passed, unless unbound
// first: the deadline of a plain send's reply, head and body.
func (o *outliving) bound(d time.Duration, cause error) {
	o.unbound()
	cancel := o.cancel
	o.timer = time.AfterFunc(d, func() { cancel(cause) })
}

// unbound stops the reply deadline, once the reply is read: the index
// writes after it are not the reply's. It reports false when the deadline
// had passed already (and ended the context).
func (o *outliving) unbound() bool {
	t := o.timer
	if t == nil {
		return true
	}
	o.timer = nil
	return t.Stop()
}

func (o *outliving) stop() {
	o.unbound()
	o.stopAfter()
	o.cancel(nil)
	*o = outliving{}
}

// renewClaims renews the claims of this replica's running sends until the
// agent closes: one goroutine for all, rather than one per send.
func (a *Agent) renewClaims() {
	rs := a.retries
	tick := time.NewTicker(retryLease / 3)
	defer tick.Stop()
	for {
		select {
		case <-rs.closed:
			return
		case <-tick.C:
		}
		rs.mu.Lock()
		running := make(map[store.SendKey]*flight, len(rs.flights))
		maps.Copy(running, rs.flights)
		rs.mu.Unlock()
		for key, fl := range running {
			fl.mu.Lock()
			if !fl.finished {
				rec := fl.claim
				rec.Lease = rs.clock().Add(retryLease)
				ctx, cancel := context.WithTimeout(context.Background(), retryLease/3)
				if err := a.tasks.SaveSend(ctx, key, rec); err != nil {
					fl.renewalInDoubt = true
					a.log.Warn("renewing a running send's claim failed", "error", err)
				}
				cancel()
			}
			fl.mu.Unlock()
		}
	}
}

// sendOutcome is the record a first send leaves for its retries.
func (a *Agent) sendOutcome(c *call, rt *sendRetry, result []byte, e *normalize.Error) store.SendRecord {
	rec := store.SendRecord{Digest: rt.digest, Expires: rt.rec.Expires}
	switch {
	case e != nil && notAccepted(e):
		rec.State = store.SendNotAccepted
	case e != nil:
		rec.State = store.SendUnknown
	case c.answer.Kind == normalize.KindTask && c.answer.TaskID == c.taskID && c.taskID != "":
		rec.State, rec.TaskID = store.SendTask, c.taskID // the index's copy
	case c.answer.Kind == normalize.KindTask && c.answer.TaskID != "":
		rec.State, rec.TaskID = store.SendTask, strings.Clone(c.answer.TaskID)
	case int64(len(result)) > a.retries.cfg.MaxMessageBytes:
		rec.State = store.SendAnswerDropped
	default:
		rec.State, rec.Answer, rec.AnswerDialect = store.SendMessage, result, strconv.Itoa(int(c.env.Dialect))
	}
	return rec
}

// notAccepted reports whether a failed send never reached the backend's
// work: it could not connect, or the backend answered with an error
// (JSON-RPC, or an HTTP status without a reply). A timeout, a cut reply or
// one the gateway could not read may come after the backend took the work.
func notAccepted(e *normalize.Error) bool {
	var ae *normalize.AgentError
	if errors.As(e, &ae) {
		return true
	}
	var bf backendFailure
	if !errors.As(e, &bf) {
		// Refused by the gateway before forwarding; an invalid answer is
		// the backend's, after it had the message.
		return e.Kind != dialect.ErrInternal && e.Kind != dialect.ErrInvalidAgentResponse
	}
	if bf.kind == backendHTTPStatus {
		return true
	}
	var op *net.OpError
	return errors.As(bf.err, &op) && op.Op == "dial"
}

// retryAnswer answers a retry from the first send's record.
func (a *Agent) retryAnswer(r *http.Request, c *call, rec store.SendRecord) ([]byte, *normalize.Error) {
	switch rec.State {
	case store.SendTask:
		return a.retryTask(r, c, rec.TaskID)
	case store.SendMessage:
		return keptMessage(c, rec)
	}
	return nil, a.retryRefusal(rec)
}

// keptMessage is the direct message that answered the first send, as the
// result of a send in the caller's dialect (the same as a stream's event).
func keptMessage(c *call, rec store.SendRecord) ([]byte, *normalize.Error) {
	from, _ := strconv.Atoi(rec.AnswerDialect)
	result, err := normalize.Result(dialect.SendMessage, dialect.ID(from), c.env.Dialect, rec.Answer)
	if err != nil {
		return nil, normalize.AsError(err, dialect.ErrInternal)
	}
	return result, nil
}

// retryRefusal is a retry's answer when the first send left neither a
// task nor a message.
func (a *Agent) retryRefusal(rec store.SendRecord) *normalize.Error {
	switch rec.State {
	case store.SendAnswerDropped:
		return normalize.Errorf(dialect.ErrInternal, "the first send with this key was answered with a message larger than this agent keeps for retries (retries.max_message_bytes, %d bytes): send with a new key to ask again", a.retries.cfg.MaxMessageBytes)
	case store.SendNotAccepted:
		// The first failed before the backend took it while this retry
		// waited: the caller may send again, and that send is forwarded.
		return normalize.Errorf(dialect.ErrInternal, "the first send with this key failed before the agent accepted it: send the same message again to have it forwarded")
	case store.SendRunning:
		return normalize.Errorf(dialect.ErrInternal, "the gateway replica running the first send with this key stopped before the agent answered, and the gateway cannot tell whether the agent took the work, so it will not send it again: list your tasks (ListTasks) to find it, or send with a new key to run it again")
	}
	return normalize.Errorf(dialect.ErrInternal, "the first send with this key ended without an answer from the agent (a timeout or a cut reply), so the gateway cannot tell whether the agent took the work and will not send it again: list your tasks (ListTasks) to find it, or send with a new key to run it again")
}

// streamRetry answers a streaming retry: the task the first send made and
// then its updates, as a subscription to it gives them, or the message
// that answered it, as the stream's one event.
func (a *Agent) streamRetry(w http.ResponseWriter, r *http.Request, c *call, rec store.SendRecord) {
	switch rec.State {
	case store.SendTask:
		a.resubscribe(w, r, c, rec.TaskID)
		return
	case store.SendMessage:
		result, e := keptMessage(c, rec)
		if e != nil {
			a.fail(w, c, e)
			return
		}
		s := &sse{w: w, rc: http.NewResponseController(w), c: c, writeTimeout: a.streamWriteTimeout}
		defer s.releaseScratch()
		defer a.endStreamWrites(r.Context(), s)
		_ = s.event(result)
		return
	}
	a.fail(w, c, a.retryRefusal(rec))
}

// resubscribe serves a streaming retry as a subscription to the first
// send's task, on the backend that has it. A task the index holds final is
// answered as one event of the task, which a subscription cannot follow.
func (a *Agent) resubscribe(w http.ResponseWriter, r *http.Request, c *call, taskID string) {
	if t, err := a.tasks.Get(r.Context(), a.cfg.Name, taskID); err == nil && t.Owner == c.owner {
		if b := a.byName[t.Backend]; b != nil {
			c.backend = b
		}
		c.taskState = t.State
		c.indexedState, c.indexedAt = t.State, t.Updated
	}
	c.env.Op, c.info.TaskID = dialect.SubscribeToTask, taskID
	if c.indexedFinal() {
		if task, _ := a.finalTask(r, c); task != nil {
			if c.env.Dialect == dialect.V10 {
				task = normalize.TaskEvent(task)
			}
			s := &sse{w: w, rc: http.NewResponseController(w), c: c, writeTimeout: a.streamWriteTimeout}
			defer s.releaseScratch()
			defer a.endStreamWrites(r.Context(), s)
			_ = s.event(task)
			return
		}
	}
	method, _ := dialect.MethodName(c.backend.dialect, dialect.SubscribeToTask)
	a.stream(w, r, c, method, normalize.GetTaskParams(taskID))
}

// awaitFirst waits for a running first send's outcome, within ctx: on this
// replica by its flight, on another by polling its record until it ends or
// its claim lapses (its replica died; the lapsed record is returned).
func (a *Agent) awaitFirst(ctx context.Context, rt *sendRetry, rec store.SendRecord) (store.SendRecord, *normalize.Error) {
	rs := a.retries
	rs.mu.Lock()
	fl := rs.flights[rt.key]
	var done chan struct{}
	if fl != nil {
		if fl.done == nil {
			fl.done = make(chan struct{})
		}
		done = fl.done
	}
	rs.mu.Unlock()
	if fl != nil {
		if hook := rs.waitHook.Load(); hook != nil {
			(*hook)()
		}
		select {
		case <-done:
			return fl.rec, nil
		case <-ctx.Done():
			return rec, waitEnded(ctx)
		}
	}
	wait := retryPollFirst
	for {
		if rec.State != store.SendRunning || !rec.Lease.After(rs.clock()) {
			return rec, nil
		}
		if !pollPause(ctx, &wait) {
			return rec, waitEnded(ctx)
		}
		next, err := a.tasks.LoadSend(ctx, rt.key, rs.clock())
		switch {
		case errors.Is(err, store.ErrNotFound):
			return store.SendRecord{State: store.SendNotAccepted}, nil
		case err != nil:
			return rec, a.indexUnavailable("read", err)
		}
		rec = next
	}
}

func waitEnded(ctx context.Context) *normalize.Error {
	return &normalize.Error{Kind: dialect.ErrInternal, Err: endOf(ctx), Message: "this retry ended before the first send with its key was answered: send it again to keep waiting"}
}

// retryTask answers a retry of a send that created taskID with the task:
// as it is now for a non-blocking retry, once final or interrupted for a
// blocking one. It polls GetTask rather than subscribing: every backend
// serves GetTask (not all stream), one path serves both dialects, and the
// cost is at most retryPollMax of latency on a task that runs on anyway.
func (a *Agent) retryTask(r *http.Request, c *call, taskID string) ([]byte, *normalize.Error) {
	b := c.backend
	if t, err := a.tasks.Get(r.Context(), a.cfg.Name, taskID); err == nil && t.Owner == c.owner {
		if tb := a.byName[t.Backend]; tb != nil {
			b = tb
		}
	}
	// Waiting for the task as a blocking send waits for its backend: up to
	// response_timeout, not for as long as the task runs.
	ctx, cancel := context.WithTimeout(r.Context(), b.cfg.ResponseTimeout)
	defer cancel()
	runsOn := func() *normalize.Error {
		return normalize.Errorf(dialect.ErrInternal, "this retry ended before the task of the first send finished: it waited agents[].backend.response_timeout (%s); send it again to keep waiting, or get the task", b.cfg.ResponseTimeout)
	}
	method, _ := dialect.MethodName(b.dialect, dialect.GetTask)
	params := normalize.GetTaskParams(taskID)
	wait := retryPollFirst
	for {
		pc := &call{start: c.start, env: c.env, backend: b, owner: c.owner}
		pc.lent = pc.lentInline[:0]
		pc.env.Op = dialect.GetTask
		pc.info.TaskID = taskID
		task, e := a.unary(ctx, r, pc, dialect.GetTask, method, params)
		done := pc.answer.State == "" || !c.info.Blocking || dialect.TerminalState(pc.answer.State) ||
			pc.answer.State == "TASK_STATE_INPUT_REQUIRED" || pc.answer.State == "TASK_STATE_AUTH_REQUIRED"
		var result []byte
		if e == nil && done {
			result = normalize.SendResultOfTask(c.env.Dialect, task)
			if n := c.info.HistoryLength; c.info.HasHistoryLength {
				var err error
				if result, err = normalize.TrimHistory(dialect.SendMessage, c.env.Dialect, result, n); err != nil {
					e = normalize.AsError(err, dialect.ErrInvalidAgentResponse)
				}
			}
		}
		pc.giveBack()
		if e != nil && ctx.Err() != nil && r.Context().Err() == nil {
			return nil, runsOn()
		}
		if e != nil || done {
			return result, e
		}
		if !pollPause(ctx, &wait) {
			if r.Context().Err() == nil {
				return nil, runsOn()
			}
			return nil, &normalize.Error{Kind: dialect.ErrInternal, Err: endOf(ctx), Message: "this retry ended before the task of the first send finished: send it again to keep waiting, or get the task"}
		}
	}
}

// pollPause waits out one pause of a retry's polling and doubles the next,
// up to retryPollMax; false when ctx ends first.
func pollPause(ctx context.Context, wait *time.Duration) bool {
	t := time.NewTimer(*wait)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
	}
	*wait = min(*wait*2, retryPollMax)
	return true
}

// abandonSend frees the key of a claimed send the gateway refused before
// forwarding it: no work was done, so a retry is sent as a first send.
func (a *Agent) abandonSend(c *call) {
	rt := c.retry
	if rt == nil || !rt.claimed {
		return
	}
	c.retry = nil
	rec := store.SendRecord{Digest: rt.digest, State: store.SendNotAccepted, Expires: rt.rec.Expires}
	ctx, cancel := context.WithTimeout(context.Background(), retrySaveTimeout)
	defer cancel()
	if err := a.tasks.SaveSend(ctx, rt.key, rec); err != nil {
		a.metrics.storeError("write")
		a.log.Warn("freeing the key of a refused send failed: its retries wait out the claim's lease", "error", err)
	}
}
