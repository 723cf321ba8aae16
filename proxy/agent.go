package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/a2agate/gateway/auth"
	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/readall"
	"github.com/a2agate/gateway/normalize"
	"github.com/a2agate/gateway/store"
	"github.com/a2agate/gateway/telemetry"
)

// Agent serves one published agent: its JSON-RPC endpoint and its cards.
type Agent struct {
	cfg AgentConfig
	// backend is the agent's own backend; routes maps skill ids to the
	// backends of skill routes, byName finds a task's backend again.
	backend *backend
	routes  map[string]*backend
	byName  map[string]*backend
	log     *slog.Logger
	// accessLogs holds, per accessLabels seen, the access log's handler
	// with those labels already formatted: slog's JSON handler writes a
	// handler's attributes once, where a record's are written on every
	// call, and a record with more attributes than it holds inline
	// allocates for the rest. The label sets are few: three bindings, and
	// each dialect is 0.x, 1.0 or not yet known.
	accessLogs sync.Map // accessLabels → slog.Handler
	// verifier checks Bearer tokens; nil when the agent has no auth.
	verifier Verifier
	metrics  *Metrics
	tracing  *telemetry.Tracing
	tasks    store.Store
	// ownsTasks is set when the agent made its own index and must close it.
	ownsTasks bool
	// interruptGrace is how long a 0.x caller's input-required event waits
	// to learn whether the backend ends the stream after it.
	interruptGrace time.Duration
	cards          cards
	retries        *retries
	// readTimeout and streamWriteTimeout are Options' ReadTimeout and
	// StreamWriteTimeout.
	readTimeout, streamWriteTimeout time.Duration
	// push relays push notifications (pushrelay.go); nil when off.
	push *pushRelay
	// calls counts each caller's calls in flight (callerlimit.go).
	calls *callerCalls
}

// Verifier checks a caller's Authorization header; *auth.Verifier is one.
type Verifier interface {
	Verify(ctx context.Context, authorizationHeader string) (auth.Principal, error)
}

// Options are an agent's dependencies.
type Options struct {
	Logger *slog.Logger
	// Transport replaces the connection pool to the backends; benchmarks use
	// it to measure the handler alone. Nil means pools built from the config.
	Transport http.RoundTripper
	// Verifier checks tokens when the config has auth; required then.
	Verifier Verifier
	// Tasks is the task index, shared by the agents of one gateway (and, with
	// Redis, by its replicas). Nil means a private in-memory index.
	Tasks store.Store
	// Metrics records the agent's traffic; nil records nothing.
	Metrics *Metrics
	// ReadTimeout bounds reading a request's body, from the end of its
	// headers (server.read_timeout); zero is no bound.
	ReadTimeout time.Duration
	// StreamWriteTimeout bounds writing one stream event to the caller
	// (server.stream_write_timeout); zero is no bound.
	StreamWriteTimeout time.Duration
	// Tracing traces the agent's calls (tracing.go); nil traces nothing,
	// and the caller's trace context still reaches the backend.
	Tracing *telemetry.Tracing
}

// NewAgent builds the handler of one published agent from a validated,
// defaulted config. Backends whose dialect is "auto" are asked for their
// card now, all of them within card.fetch_timeout, so a backend that cannot
// be understood stops the start, and one that hangs stops it in time.
func NewAgent(ctx context.Context, cfg AgentConfig, opts Options) (*Agent, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.Card.FetchTimeout)
	defer cancel()
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("agent", cfg.Name)
	resolve := func(bc BackendConfig) (dialect.Version, error) {
		if bc.Dialect != dialect.VersionAuto {
			return bc.Dialect, nil
		}
		v, why, err := ResolveDialect(ctx, bc)
		if err != nil {
			return "", err
		}
		log.Info("backend dialect chosen from its card", "backend", bc.URL, "dialect", string(v), "why", why)
		return v, nil
	}
	a := &Agent{cfg: cfg, log: log, verifier: opts.Verifier, tasks: opts.Tasks, metrics: opts.Metrics, tracing: opts.Tracing,
		routes: map[string]*backend{}, byName: map[string]*backend{}, interruptGrace: DefaultInterruptGrace,
		readTimeout: opts.ReadTimeout, streamWriteTimeout: opts.StreamWriteTimeout, calls: newCallerCalls(cfg.MaxCallsPerCaller, cfg.trustedProxies())}
	add := func(name string, bc BackendConfig) (*backend, error) {
		v, err := resolve(bc)
		if err != nil {
			return nil, fmt.Errorf("agent %q backend %q: %w", cfg.Name, name, err)
		}
		b, err := newBackend(name, bc, v, opts.Transport)
		if err != nil {
			return nil, fmt.Errorf("agent %q: %w", cfg.Name, err)
		}
		b.traced = opts.Tracing.Enabled()
		a.byName[name] = b
		return b, nil
	}
	var err error
	// Backend names appear in errors and in the task index.
	if a.backend, err = add(cfg.Name, cfg.Backend); err != nil {
		return nil, err
	}
	for _, r := range cfg.Skills.Routes {
		if a.routes[r.Skill], err = add(cfg.Name+"/"+r.Skill, r.Backend); err != nil {
			return nil, err
		}
	}
	if cfg.Auth != nil && a.verifier == nil {
		return nil, fmt.Errorf("agent %q: auth is configured but no verifier was given", cfg.Name)
	}
	if a.tasks == nil {
		a.tasks, a.ownsTasks = store.NewMemory(store.MemoryConfig{}), true
	}
	a.cards.publish = a.cardPublish()
	a.retries = newRetries(cfg.Retries)
	if a.push, err = newPushRelay(a); err != nil {
		return nil, err
	}
	a.metrics.agentSeries(cfg.Name, cfg.Auth != nil)
	return a, nil
}

// Close releases what the agent made for itself.
func (a *Agent) Close() {
	a.retries.close()
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	_, _ = a.push.close(ended) // a drain, if any, was ClosePush's
	for _, b := range a.byName {
		b.closeIdle()
	}
	if a.ownsTasks {
		_ = a.tasks.Close()
	}
}

// Config returns the agent's configuration.
func (a *Agent) Config() AgentConfig { return a.cfg }

// call is one JSON-RPC exchange through the gateway, for the access log.
type call struct {
	start   time.Time
	env     normalize.Envelope
	info    normalize.RequestInfo
	backend *backend
	// owner is the caller's principal key in the task index ("" without auth).
	owner string
	// unchecked marks a call for a task the gateway never saw, served
	// because the agent allows those; it is not recorded under the caller.
	unchecked bool
	// taskState is the state the index holds for the task the call names
	// (a 1.0 state name; "" when it holds none).
	taskState string
	// indexedState and indexedAt are the state and status time the index
	// holds for the call's task as far as the call knows: read before it
	// was forwarded, then what each record wrote ("" and zero for none).
	indexedState string
	indexedAt    time.Time
	code         int // JSON-RPC error code answered; 0 on success
	reason       string
	outcome      string // one of the outcome constants; "" is ok
	events       int
	bytes        int
	// retry is the send's retry key and what the index knew of it; nil
	// for calls without one. answer is what the last unary backend call
	// answered (views into its reply).
	retry  *sendRetry
	answer normalize.EventInfo
	// sentID is the JSON-RPC id of the call's latest request to the
	// backend (backend.post), in sentIDBuf.
	sentID    []byte
	sentIDBuf [20]byte
	// failure is the error answered, for the span's status.
	failure error
	// span is the call's server span (nil without tracing); streamEvents
	// records a stream's events on it while it records, and attrs is the
	// buffer its spans' attributes are written in (tracing.go).
	// backendMethod, taskID and contextID are for its attributes: the
	// method the backend got, and the task the call made when its request
	// named none; taskIDCopy is the copy of the task id the request named.
	span              trace.Span
	streamEvents      telemetry.StreamEvents
	attrs             *attrBuffer
	backendMethod     string
	taskID, contextID string
	taskIDCopy        string
	// namedTask is the task an event without a state named while no task
	// was recorded yet (a copy): a stream is about one task, from its
	// first event on.
	namedTask string
	// lent are the pooled buffers the call reads and writes in: a unary
	// call's request, params, backend request, reply, result and answer.
	lent       []*[]byte
	lentInline [6]*[]byte
	// pushPending is the relay of a push config given in a send, until the
	// backend names the task (pushrelay.go).
	pushPending *store.PushRelay
	// replyLimit bounds the read of a unary reply; in the call, which is
	// on the heap already, where io.LimitReader would allocate per call.
	replyLimit io.LimitedReader
	// length is the Content-Length value of the call's answer
	// (writeJSONIn).
	length [1]string
	// replyCancel ends the reply deadline of a unary backend request
	// (post, endReply).
	replyCancel context.CancelFunc
	// first is the context of a first send (firstSend) while it runs, in
	// the call, which is on the heap already; zero otherwise.
	first outliving
	// binding is the binding the call came through and caller, when not
	// 0, the dialect its caller spoke, as the front end that made the
	// JSON-RPC request recorded them in its context.
	binding dialect.Binding
	caller  dialect.ID
}

// ServeRPC serves the agent's JSON-RPC endpoint.
func (a *Agent) ServeRPC(w http.ResponseWriter, r *http.Request) {
	c := &call{start: time.Now(), backend: a.backend, binding: dialect.BindingOf(r.Context()), caller: dialect.CallerDialectOf(r.Context())}
	c.lent = c.lentInline[:0]
	defer c.giveBack()
	r = a.startTrace(r, c)
	defer a.logCall(r.Context(), c)
	defer a.endTrace(r.Context(), c)
	refused := a.checkAuth(r, w.Header(), c)
	over := false
	if refused == nil {
		switch earlyOf(r) {
		case notCounted:
			// Counted from before its body is read: a caller whose bodies
			// arrive slowly holds as much as one whose backend is slow.
			key := a.calls.callerKey(r, c)
			if over = !a.calls.acquire(key); !over {
				defer a.calls.release(key)
			}
		case overEarly:
			over = true
		}
	}
	body, err := a.readBody(w, r, c)
	if refused != nil || over {
		// A caller learns nothing of its request before it is
		// authenticated, nor is any of it judged past the caller's bound:
		// the body is read only to answer its id in its dialect, whatever
		// is wrong with it.
		if err == nil {
			c.env, _ = normalize.ParseRequest(body)
		}
		if c.env.Dialect == 0 {
			c.env.Dialect = guessDialect(body, r)
		}
		if refused != nil {
			a.refuse(w, c, refused)
			return
		}
		out := a.errorResponse(c, a.tooManyCalls())
		c.bytes += len(out)
		c.outcome = outcomeCallerLimited
		w.Header().Set("Retry-After", "1")
		writeJSON(w, http.StatusTooManyRequests, out)
		return
	}
	if err != nil {
		c.env.Dialect = guessDialect(body, r)
		a.fail(w, c, normalize.AsError(err, dialect.ErrInvalidRequest))
		return
	}
	if ct := firstValue(r.Header, "Content-Type"); !jsonContentType(ct) {
		c.env.Dialect = guessDialect(body, r)
		out := a.errorResponse(c, normalize.Errorf(dialect.ErrInvalidRequest, "Content-Type %q is not accepted: send JSON-RPC requests as application/json (or application/a2a+json), in UTF-8", truncateHeader(ct)))
		c.bytes += len(out)
		writeJSON(w, http.StatusUnsupportedMediaType, out)
		return
	}
	if ce := r.Header["Content-Encoding"]; len(ce) > 0 && !readall.IdentityEncoding(ce) {
		c.env.Dialect = guessDialect(nil, r)
		out := a.errorResponse(c, normalize.Errorf(dialect.ErrInvalidRequest, "Content-Encoding %q is not accepted: send the request body uncompressed", truncateHeader(strings.Join(ce, ", "))))
		c.bytes += len(out)
		writeJSON(w, http.StatusUnsupportedMediaType, out)
		return
	}
	c.env, err = normalize.ParseRequest(body)
	if err != nil {
		if c.env.Dialect == 0 {
			c.env.Dialect = guessDialect(body, r)
		}
		a.fail(w, c, normalize.AsError(err, dialect.ErrInvalidRequest))
		return
	}
	if msg := versionConflict(r); msg != "" {
		a.fail(w, c, normalize.Errorf(dialect.ErrInvalidRequest, "%s", msg))
		return
	}
	if v := requestVersion(r); !dialect.SupportedVersionHeader(v) {
		a.fail(w, c, normalize.Errorf(dialect.ErrVersionNotSupported, "A2A-Version %q is not supported: this gateway speaks 0.2, 0.3 and 1.0", truncateHeader(v)))
		return
	}
	a.forward(w, r, c)
}

// jsonContentType reports whether a request's Content-Type is one A2A
// sends JSON-RPC in, in UTF-8. Anything else is refused: a web page can send a
// cross-site text/plain or form POST without a preflight, but not JSON.
func jsonContentType(ct string) bool {
	if ct == "application/json" {
		return true // what every SDK client sends: no parse
	}
	mt, params, err := mime.ParseMediaType(ct)
	return err == nil && (mt == "application/json" || mt == "application/a2a+json") && readall.UTF8Charset(params)
}

func truncateHeader(v string) string {
	if len(v) > 32 {
		return v[:32] + "…"
	}
	return v
}

// readBody reads the request body up to the agent's limit, within the read
// timeout. A declared length over the limit is refused before any of the
// body is read.
func (a *Agent) readBody(w http.ResponseWriter, r *http.Request, c *call) ([]byte, error) {
	limit := a.cfg.MaxBodyBytes
	tooLarge := func() *normalize.Error {
		return normalize.Errorf(dialect.ErrInvalidRequest, "the request body is larger than this agent's limit of %d bytes", limit)
	}
	deadline := readall.StartBodyDeadline(w, a.readTimeout)
	if r.ContentLength > limit {
		// Only a prefix is read, within the read deadline (which stays: the
		// connection closes after the answer): where the method fits in it,
		// the refusal comes in the method's dialect, as on the chunked path.
		prefix := make([]byte, min(limit, oversizedPrefixBytes))
		n, _ := io.ReadFull(r.Body, prefix)
		return prefix[:n], tooLarge()
	}
	buf := c.buffer(int(min(max(r.ContentLength, 0), maxPresize)) + 1)
	body, err := readSized(*buf, http.MaxBytesReader(w, r.Body, limit), r.ContentLength)
	*buf = body
	deadline.End(err)
	switch {
	case err == nil:
		return body, nil
	case isMaxBytesError(err):
		return body, tooLarge()
	case readall.Expired(err):
		return body, normalize.Errorf(dialect.ErrInvalidRequest, "the request body did not arrive within server.read_timeout (%s)", a.readTimeout)
	default:
		return body, normalize.Errorf(dialect.ErrInvalidRequest, "reading the request body failed: %v", err)
	}
}

// isMaxBytesError reports whether err says a body passed its limit; a
// function of its own, so that its errors.As target, which escapes, is
// allocated only for a failed read.
func isMaxBytesError(err error) bool {
	var mbe *http.MaxBytesError
	return errors.As(err, &mbe)
}

// oversizedPrefixBytes is how much of a body declared over the limit is
// read to find its method: the envelope's members come first in what every
// SDK writes, and an id is at most 256 bytes.
const oversizedPrefixBytes = 4 << 10

// requestVersion is the A2A version the caller asks for: the A2A-Version
// header, or, as the spec allows in its place, the query parameter.
// versionConflict describes a request that names two versions (two
// A2A-Version headers, or the header and the query parameter, that
// differ), "" for one that names at most one: the one requestVersion
// takes would drop the other unread.
func versionConflict(r *http.Request) string {
	vs := r.Header[keyVersion]
	for _, v := range vs[min(1, len(vs)):] {
		if v != vs[0] {
			return "A2A-Version is given twice, " + strconv.Quote(truncateHeader(vs[0])) + " and " + strconv.Quote(truncateHeader(v)) + ": name one version"
		}
	}
	if r.URL.RawQuery == "" {
		return "" // the query is parsed only when there is one: its key may be percent-encoded (A2A%2DVersion)
	}
	qs := r.URL.Query()[dialect.HeaderVersion]
	if len(vs) > 0 {
		qs = append(qs, vs[0])
	}
	for _, v := range qs[min(1, len(qs)):] {
		if v != qs[0] {
			return "A2A-Version is given twice, " + strconv.Quote(truncateHeader(qs[0])) + " and " + strconv.Quote(truncateHeader(v)) + " (header and query): name one version"
		}
	}
	return ""
}

func requestVersion(r *http.Request) string {
	if v := firstValue(r.Header, keyVersion); v != "" || r.URL.RawQuery == "" {
		return v
	}
	return r.URL.Query().Get(dialect.HeaderVersion)
}

// guessDialect picks the dialect to answer a request in when it could not be
// read: from whatever method name is readable, else the version asked for.
func guessDialect(body []byte, r *http.Request) dialect.ID {
	if d, ok := normalize.GuessRequestDialect(body); ok {
		return d
	}
	if strings.HasPrefix(requestVersion(r), "1.") {
		return dialect.V10
	}
	return dialect.V03
}

// fail answers the call with an error in the caller's dialect.
func (a *Agent) fail(w http.ResponseWriter, c *call, e *normalize.Error) {
	if c.env.Op.Streaming() {
		a.streamFail(&sse{w: w, rc: http.NewResponseController(w), c: c, writeTimeout: a.streamWriteTimeout}, e)
		return
	}
	out := a.errorResponse(c, e)
	c.bytes += len(out)
	writeJSONIn(w, http.StatusOK, out, &c.length)
}

// errorResponse renders e in the caller's dialect and notes it for the log.
func (a *Agent) errorResponse(c *call, e *normalize.Error) []byte {
	var ae *normalize.AgentError
	if errors.As(e, &ae) {
		c.code, c.reason, c.outcome, c.failure = ae.Code, "agent_error", outcomeAgentError, e
		return normalize.AppendErrorResponse(make([]byte, 0, len(ae.Object)+64), c.env.ID, ae.Object)
	}
	c.failure = e
	row := e.Kind.Error()
	c.code, c.reason = row.Code, row.Reason
	var bf backendFailure
	switch {
	case errors.Is(e, errCallerGone):
		// Nobody hears this answer, and no backend failed.
		c.outcome = outcomeCallerGone
	case errors.As(e, &bf):
		c.outcome = outcomeBackendFailure
		a.metrics.backendError(a.cfg.Name, bf.kind)
	default:
		c.outcome = outcomeOf(e.Kind)
		if e.Kind == dialect.ErrInvalidAgentResponse {
			a.metrics.backendError(a.cfg.Name, backendInvalidReply)
		}
	}
	return errorResponse(c.env.Dialect, c.env.ID, e)
}

// FrontEndRefused counts and logs, as the core does its own calls, a call
// that the front end of binding b refused before the core saw it (a REST
// body or query, a gRPC message, it could not take): started at start,
// its caller speaking caller, for op, refused with kind. Without it such a
// call left no trace in the metrics or the log.
func (a *Agent) FrontEndRefused(ctx context.Context, start time.Time, b dialect.Binding, caller dialect.ID, op dialect.Op, kind dialect.ErrorKind) {
	c := &call{start: start, backend: a.backend, binding: b, caller: caller}
	c.env.Dialect, c.env.Op = caller, op
	row := kind.Error()
	c.code, c.reason, c.outcome = row.Code, row.Reason, outcomeOf(kind)
	a.logCall(ctx, c)
}

// outcomeOf is the outcome of a call answered with an error of kind.
func outcomeOf(kind dialect.ErrorKind) string {
	switch kind {
	case dialect.ErrUnauthenticated:
		return outcomeUnauthenticated
	case dialect.ErrInvalidAgentResponse:
		return outcomeBackendFailure
	case dialect.ErrInternal:
		return outcomeGatewayError
	}
	return outcomeCallerError
}

// restRefused is the HTTP+JSON front end's Options.Refused.
func (a *Agent) restRefused(r *http.Request, start time.Time, caller dialect.ID, op dialect.Op, kind dialect.ErrorKind) {
	a.FrontEndRefused(r.Context(), start, dialect.HTTPJSON, caller, op, kind)
}

func (a *Agent) logCall(ctx context.Context, c *call) {
	end := time.Now()
	a.metrics.observe(a.cfg.Name, c, end.Sub(c.start))
	// Straight to the handler: Logger.LogAttrs would also record the
	// caller's program counter, which the access log never shows.
	h := a.accessLog(c)
	if !h.Enabled(ctx, slog.LevelInfo) {
		return
	}
	outcome := c.outcome
	if outcome == "" {
		outcome = outcomeOK
	}
	rec := slog.NewRecord(end, slog.LevelInfo, "call", 0)
	rec.AddAttrs(
		slog.String("op", c.env.Op.String()),
		slog.String("outcome", outcome),
		slog.Duration("duration", end.Sub(c.start)),
		slog.Int("bytes", c.bytes),
	)
	if c.code != 0 {
		rec.AddAttrs(slog.Int("code", c.code), slog.String("reason", c.reason))
	}
	if c.env.Op.Streaming() {
		rec.AddAttrs(slog.Int("events", c.events))
	}
	_ = h.Handle(ctx, rec)
}

// accessLabels are the access log's attributes that a handler can hold.
type accessLabels struct {
	binding         dialect.Binding
	caller, backend dialect.ID
}

// accessLog is the handler of c's access log line, holding its binding and
// dialects.
func (a *Agent) accessLog(c *call) slog.Handler {
	key := accessLabels{binding: c.binding, caller: c.callerDialect(), backend: c.backend.dialect}
	if h, ok := a.accessLogs.Load(key); ok {
		return h.(slog.Handler)
	}
	h, _ := a.accessLogs.LoadOrStore(key, a.log.Handler().WithAttrs([]slog.Attr{
		slog.String("binding", key.binding.String()),
		slog.String("caller_dialect", key.caller.String()),
		slog.String("backend_dialect", key.backend.String()),
	}))
	return h.(slog.Handler)
}

// forward sends a parsed call to the right backend and answers it.
func (a *Agent) forward(w http.ResponseWriter, r *http.Request, c *call) {
	env := &c.env
	switch env.Op {
	case dialect.GetExtendedCard:
		a.serveExtendedCardRPC(w, r, c)
		return
	case dialect.ListTasks:
		a.listTasks(w, r, c)
		return
	}
	params, e := a.route(r, c)
	if e == nil {
		if a.servePushConfig(w, r, c) {
			return
		}
		params, e = a.inlineConfig(r, c, params)
	}
	if e != nil {
		a.abandonSend(c)
		a.fail(w, c, e)
		return
	}
	b := c.backend
	if env.Op == dialect.GetPushConfig && c.info.PushConfigID == "" && b.dialect == dialect.V10 {
		a.firstPushConfig(w, r, c)
		return
	}
	method, _ := dialect.MethodName(b.dialect, env.Op)
	switch {
	case c.retry != nil && !c.retry.claimed:
		// Answered from the first send, which the checks below saw.
		a.serveRetry(w, r, c)
		return
	case env.Op.Streaming() && c.retry != nil:
		a.firstStream(w, r, c, method, params)
		return
	case env.Op.Streaming():
		a.stream(w, r, c, method, params)
		return
	}
	if e := a.finalStateAnswer(c); e != nil {
		a.abandonSend(c)
		a.fail(w, c, e)
		return
	}
	if e := a.finishedBeforeCancel(r, c); e != nil {
		a.fail(w, c, e)
		return
	}
	if c.retry != nil {
		a.firstSend(w, r, c, method, params)
		return
	}
	result, e := a.unary(r.Context(), r, c, env.Op, method, params)
	a.answerUnary(w, r, c, result, e)
}

// answerUnary writes a unary call's answer: its result, or its error, a
// backend's refusal replaced by the caller's spec's answer when the task
// turns out to be final (refusedByFinal).
func (a *Agent) answerUnary(w http.ResponseWriter, r *http.Request, c *call, result []byte, e *normalize.Error) {
	if e != nil {
		// Declared here: errors.As makes its target escape, and the
		// answer of every successful call would allocate it.
		var ae *normalize.AgentError
		if errors.As(e, &ae) {
			if fe := a.refusedByFinal(r, c); fe != nil {
				e = fe
			}
		}
		a.fail(w, c, e)
		return
	}
	a.writeResult(w, c, result)
}

// resultWriter is the ResponseWriter of a front end that answers with the
// bare result (binding/rest): it gets the result as it is, rather than in
// an envelope it would have to search again for the result's end.
type resultWriter interface {
	WriteResult(result []byte)
}

func (a *Agent) writeResult(w http.ResponseWriter, c *call, result []byte) {
	if rw, ok := w.(resultWriter); ok {
		c.bytes += len(result)
		rw.WriteResult(result)
		return
	}
	buf := c.buffer(len(result) + len(c.env.ID) + 40)
	*buf = normalize.AppendResultResponse(*buf, c.env.ID, result)
	c.bytes += len(*buf)
	writeJSONIn(w, http.StatusOK, *buf, &c.length)
}

// unary makes one non-streaming backend call and returns its result in the
// caller's dialect.
func (a *Agent) unary(ctx context.Context, r *http.Request, c *call, op dialect.Op, method string, params []byte) ([]byte, *normalize.Error) {
	b := c.backend
	bctx, span := a.startBackendCall(ctx, c, method)
	res, err := b.post(bctx, r, c, method, params, false)
	defer c.endReply() // after the body's Close
	if err != nil {
		e := b.transportError(ctx, err)
		endBackendCall(span, c, e, nil)
		return nil, e
	}
	defer res.Body.Close()
	reply, e := a.readReply(res, b, c)
	if !c.first.unbound() {
		// The reply was read as its deadline passed, which ended ctx:
		// the index writes still have to land.
		ctx = c.first.values
	}
	endBackendCall(span, c, e, reply.Error)
	if e != nil {
		return nil, e
	}
	if reply.Error != nil {
		return nil, a.backendError(c, reply.Error)
	}
	buf := c.buffer(len(reply.Result) + 512)
	result, info, err := normalize.AppendResult((*buf)[:0], op, b.dialect, c.env.Dialect, &reply)
	keep(buf, result, reply.Result)
	if err != nil {
		a.metrics.translationError("response", dialect.ErrInvalidAgentResponse)
		return nil, normalize.AsError(err, dialect.ErrInvalidAgentResponse)
	}
	c.answer = info
	switch op {
	case dialect.GetTask, dialect.CancelTask, dialect.SendMessage:
		if e := answersTask(b, c, info); e != nil {
			return nil, e
		}
	case dialect.CreatePushConfig, dialect.GetPushConfig:
		if got := normalize.PushConfigTaskID(result); got != c.info.TaskID {
			a.log.Warn("the backend answered a push config call with a config of another task; answer withheld", "op", op.String(), "backend", b.name)
			return nil, backendFault(backendInvalidReply, "the backend answered about another task: backend %q answered a %s for task %q with the push notification config of a different task, which the gateway withholds",
				b.name, c.env.Method, truncateHeader(c.info.TaskID))
		}
	case dialect.ListPushConfigs:
		// The other configs are still the task's: only those of another
		// task, which may be another caller's, are left out.
		var dropped int
		if result, dropped = normalize.PushConfigsOfTask(c.env.Dialect, result, c.info.TaskID); dropped > 0 {
			a.log.Warn("the backend listed push configs of another task; those are withheld", "backend", b.name, "withheld", dropped)
			a.metrics.backendError(a.cfg.Name, backendInvalidReply)
		}
	}
	switch op {
	case dialect.SendMessage, dialect.GetTask, dialect.CancelTask:
		if e := a.record(ctx, c, info); e != nil {
			return nil, e
		}
	}
	// A cancel answered with a task that had already finished otherwise.
	if op == dialect.CancelTask && crossCancel(c) && dialect.TerminalState(info.State) && info.State != "TASK_STATE_CANCELED" {
		return nil, notCancelable(c, info.State)
	}
	if (op == dialect.SendMessage || op == dialect.GetTask) && op == c.env.Op {
		if result, err = a.trimmedHistory(c, info, result); err != nil {
			return nil, normalize.AsError(err, dialect.ErrInvalidAgentResponse)
		}
	}
	return result, nil
}

// trimmedHistory cuts a task's history, in a send or get result or the
// task event opening a stream, to what the caller's historyLength asked: a
// history longer than asked for, or any history member when none was. The
// backend was asked for at least that much (normalize.AllHistory).
func (a *Agent) trimmedHistory(c *call, info normalize.EventInfo, result []byte) ([]byte, error) {
	n := c.info.HistoryLength
	if !c.info.HasHistoryLength || !info.HasHistory || (info.History <= n && n != 0) {
		return result, nil
	}
	if c.env.Op.Streaming() {
		return normalize.TrimEventHistory(c.env.Dialect, result, n)
	}
	return normalize.TrimHistory(c.env.Op, c.env.Dialect, result, n)
}

// readReply reads a backend's unary JSON-RPC reply, whatever its status:
// an A2A server may answer an error with 4xx/5xx and a JSON-RPC body.
func (a *Agent) readReply(res *http.Response, b *backend, c *call) (normalize.Reply, *normalize.Error) {
	if e := b.undecoded(res); e != nil {
		return normalize.Reply{}, e
	}
	buf := c.buffer(int(min(max(res.ContentLength, 0), maxPresize)) + 1)
	c.replyLimit = io.LimitedReader{R: res.Body, N: a.cfg.MaxReplyBytes + 1}
	body, err := readSized(*buf, &c.replyLimit, res.ContentLength)
	c.replyLimit.R = nil
	*buf = body
	if err != nil {
		return normalize.Reply{}, b.transportError(res.Request.Context(), err)
	}
	if int64(len(body)) > a.cfg.MaxReplyBytes {
		return normalize.Reply{}, normalize.Errorf(dialect.ErrInvalidAgentResponse, "backend %q answered more than %d bytes", b.name, a.cfg.MaxReplyBytes)
	}
	reply, err := normalize.ParseReply(body)
	if err == nil && (res.StatusCode == http.StatusOK || reply.Error != nil) {
		return reply, answersCall(b, c, reply)
	}
	if res.StatusCode != http.StatusOK {
		return reply, &normalize.Error{Kind: dialect.ErrInternal, Message: fmt.Sprintf("backend %q answered HTTP %d %s", b.name, res.StatusCode, http.StatusText(res.StatusCode)), Err: backendFailure{kind: backendHTTPStatus}}
	}
	e := normalize.AsError(err, dialect.ErrInvalidAgentResponse)
	e.Message = fmt.Sprintf("backend %q: %s", b.name, e.Message)
	return reply, e
}

// answersCall refuses a reply or stream event that answers another
// request than the one the gateway sent: relayed, it would hand the caller
// another call's result (a backend's mix-up, or a stale response). An error
// without an id is the backend's answer to a request it could not read,
// which JSON-RPC lets it send with a null id.
func answersCall(b *backend, c *call, reply normalize.Reply) *normalize.Error {
	if reply.Error != nil && (reply.ID == nil || string(reply.ID) == "null") {
		return nil
	}
	if normalize.SameID(c.sentID, reply.ID) {
		return nil
	}
	got := "no id"
	if reply.ID != nil {
		got = "id " + truncateHeader(string(reply.ID))
	}
	return backendFault(backendInvalidReply, "the backend answered another request: backend %q replied with %s to the gateway's request with id %s", b.name, got, c.sentID)
}

// answersTask refuses a task, or an event of one, that is not the task the
// call asked about (got, canceled, subscribed to, or continued by a
// message): delivered, it would show the caller another task, and
// recorded, make that task the caller's.
func answersTask(b *backend, c *call, info normalize.EventInfo) *normalize.Error {
	if c.info.TaskID == "" || info.TaskID == "" || info.TaskID == c.info.TaskID {
		return nil
	}
	return backendFault(backendInvalidReply, "the backend answered about another task: backend %q answered a %s for task %q with a different task, which the gateway withholds", b.name, c.env.Method, truncateHeader(c.info.TaskID))
}

// maxAgentMessage bounds a backend's error message as the caller gets it:
// a longer one is cut (saying so), so that no backend makes every error a
// large answer, or over gRPC trailers larger than many clients take.
const maxAgentMessage = 2048

// maxAgentData bounds a backend's error data likewise: a larger one is left
// out, saying so in the message.
const maxAgentData = 4096

// backendError carries a backend's JSON-RPC error to the caller: same code
// and message (prefixed with whose it is when the backend speaks the other
// dialect), data in the caller's dialect.
func (a *Agent) backendError(c *call, obj []byte) *normalize.Error {
	ae, err := normalize.ParseAgentError(c.backend.dialect, c.env.Dialect, obj)
	if err != nil {
		return normalize.AsError(err, dialect.ErrInvalidAgentResponse)
	}
	if e := uncheckedAnswer(c, ae); e != nil {
		return e
	}
	ae.LimitMessage(maxAgentMessage)
	ae.LimitData(maxAgentData)
	if b := c.backend; b.dialect != c.env.Dialect {
		// The backend's words name its own methods and field paths: the
		// caller is told whose they are, and what its call is called there.
		theirs, _ := dialect.MethodName(b.dialect, c.env.Op)
		ae.PrefixMessage(fmt.Sprintf("backend %q (A2A %s; your %s is its %s) answered: ", b.name, b.version, c.env.Method, theirs))
	}
	return normalize.AsError(ae, dialect.ErrInternal)
}
