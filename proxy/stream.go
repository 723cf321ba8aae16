package proxy

import (
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/a2agate/gateway/dialect"
	sseframe "github.com/a2agate/gateway/internal/sse"
	"github.com/a2agate/gateway/normalize"
)

// stream forwards a streaming call and translates the backend's events one
// by one as they arrive. Nothing is buffered: each event is written, and
// flushed before the gateway waits for anything, so events the backend sent
// together go out together and none waits for a later one. The one
// exception is documented at holdsForFinal.
func (a *Agent) stream(w http.ResponseWriter, r *http.Request, c *call, method string, params []byte) {
	b := c.backend
	defer a.metrics.streamOpened(a.cfg.Name)()
	s := &sse{w: w, rc: http.NewResponseController(w), c: c, relayTime: a.metrics.eventRelayTime(a.cfg.Name), writeTimeout: a.streamWriteTimeout}
	defer s.releaseScratch()
	defer a.endStreamWrites(r.Context(), s)
	if e := a.finalStateAnswer(c); e != nil {
		a.streamFail(s, e)
		return
	}
	if c.env.Op == dialect.SubscribeToTask && c.indexedFinal() && b.dialect == dialect.V10 && a.finalSubscription(r, s) {
		return
	}
	var snapshot []byte
	if c.env.Op == dialect.SubscribeToTask && c.env.Dialect == dialect.V10 && b.dialect == dialect.V03 {
		first, final, e := a.subscribeSnapshot(r, c)
		if e != nil {
			a.streamFail(s, e)
			return
		}
		if err := s.event(first); err != nil || final {
			return
		}
		snapshot = first
	}
	bctx, span := a.startBackendCall(r.Context(), c, method)
	defer endBackendStream(span, c)
	res, err := b.post(bctx, r, c, method, params, true)
	if err != nil {
		a.streamFail(s, b.transportError(r.Context(), err))
		return
	}
	defer res.Body.Close()
	if mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); mt != "text/event-stream" {
		// Servers answer failures before the stream (validation, unknown
		// task) with a plain JSON-RPC response, bounded as a unary one is.
		body := b.replyDeadline(res.Body)
		defer body.Close()
		res.Body = body
		reply, e := a.readReply(res, b, c)
		switch {
		case e != nil:
			a.streamFail(s, e)
		case reply.Error != nil:
			a.refusedStream(s, r, a.backendError(c, reply.Error))
		default:
			a.streamFail(s, normalize.Errorf(dialect.ErrInvalidAgentResponse, "backend %q answered a stream request without an event stream", b.name))
		}
		return
	}
	if e := b.unrelayableStream(res); e != nil {
		a.streamFail(s, e)
		return
	}
	a.relay(s, r, res.Body, snapshot)
}

// refusedStream answers a backend's refusal of a streaming call before its
// first event: as the caller's spec answers a call about a task in a final
// state when that is why (refusedByFinal, finalSubscription), else with e.
func (a *Agent) refusedStream(s *sse, r *http.Request, e *normalize.Error) {
	var ae *normalize.AgentError
	if !errors.As(e, &ae) {
		a.streamFail(s, e)
		return
	}
	if fe := a.refusedByFinal(r, s.c); fe != nil {
		a.streamFail(s, fe)
		return
	}
	if !a.finalSubscription(r, s) {
		a.streamFail(s, e)
	}
}

// streamFail answers an error of a streaming call, before or during the
// backend's stream, as an SSE event whose data is the JSON-RPC error
// response, in a 200 stream, whatever the caller's dialect: the SDK clients
// read only the data lines of a stream request's answer (a2a-go v2 takes a
// JSON body for an empty, successful stream), and the 0.x ones reject a
// JSON answer outright. Refused authentication is the exception, answered
// by authenticate before any of this: a 401 with its challenge, which
// every client surfaces as an HTTP error.
func (a *Agent) streamFail(s *sse, e *normalize.Error) {
	_ = s.data(a.errorResponse(s.c, e))
}

// sse writes the caller's event stream.
type sse struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	c       *call
	started bool
	// sc is where the event being written is built, borrowed from
	// eventScratchPool for one event at a time.
	sc *eventScratch
	// batching is set while the relay handles an event: its flush waits
	// until the relay is about to wait for something (unflushed reports one
	// waiting), so a burst, such as a model's tokens, costs the caller's
	// connection one write rather than one per event.
	batching  bool
	unflushed bool
	// readAt is when the backend read that brought the events being
	// relayed returned, and unobserved counts the events written since the
	// last flush: the flush records each one's time in the gateway in
	// relayTime (nil without metrics).
	readAt     time.Time
	unobserved int
	relayTime  prometheus.Observer
	// writeTimeout bounds each write and flush to the caller
	// (server.stream_write_timeout); writeTimedOut is set once one missed
	// it and the caller was cut, writeFailed once one failed otherwise.
	writeTimeout  time.Duration
	writeTimedOut bool
	writeFailed   bool
	// pass is the id and retry of the backend event being relayed: the
	// next data event carries them to the caller, so that its
	// Last-Event-ID, forwarded on a reconnect, names the backend's event.
	// Events of the gateway's own (a snapshot, an error) carry none.
	pass sseframe.Event
}

// writeDeadline gives the next write to the caller writeTimeout from now.
func (s *sse) writeDeadline() {
	if s.writeTimeout > 0 {
		_ = s.rc.SetWriteDeadline(time.Now().Add(s.writeTimeout))
	}
}

// wrote notes a write error: the write deadline passing, or another.
func (s *sse) wrote(err error) error {
	switch {
	case err == nil:
	case errors.Is(err, os.ErrDeadlineExceeded):
		s.writeTimedOut = true
	default:
		s.writeFailed = true
	}
	return err
}

// endStreamWrites bounds what the server writes after the handler (the
// stream's last chunk), and logs and counts a caller cut for not taking
// an event within the stream write timeout. A stream whose writes failed
// because its caller went away (ctx is the call's) is the caller's leaving,
// whatever the write's error says.
func (a *Agent) endStreamWrites(ctx context.Context, s *sse) {
	s.writeDeadline()
	switch {
	case s.writeTimedOut:
		s.c.outcome, s.c.reason = outcomeCallerError, "stream_write_timeout"
		a.log.Warn("stream caller cut: it did not take an event within server.stream_write_timeout",
			"stream_write_timeout", s.writeTimeout.String(), "events", s.c.events)
	case s.writeFailed && s.c.outcome == "" && callerGone(ctx):
		s.c.outcome = outcomeCallerGone
	}
}

func (s *sse) start() {
	if !s.started {
		sseHeaders(s.w.Header())
		s.w.WriteHeader(http.StatusOK)
		s.started = true
	}
}

// eventScratch holds the buffers one stream event is read and written in:
// the translated result, the caller's JSON-RPC response and its SSE
// framing. A stream borrows them for
// one event, not for its life, so that a stream waiting for its backend
// holds none (5,000 idle streams: 48.5 KiB each rather than 50).
type eventScratch struct {
	result   []byte
	response []byte
	frame    []byte
}

var eventScratchPool = sync.Pool{New: func() any { return new(eventScratch) }}

// maxKeptEventBytes bounds what a pooled eventScratch keeps of a buffer
// that one large event grew.
const maxKeptEventBytes = 64 << 10

// scratch returns the event buffers, borrowing them if the stream holds
// none.
func (s *sse) scratch() *eventScratch {
	if s.sc == nil {
		s.sc = eventScratchPool.Get().(*eventScratch)
	}
	return s.sc
}

// releaseScratch gives the event buffers back once what was built in them
// has been written (or is no longer needed).
func (s *sse) releaseScratch() {
	sc := s.sc
	if sc == nil {
		return
	}
	s.sc = nil
	if cap(sc.result) > maxKeptEventBytes || cap(sc.response) > maxKeptEventBytes || cap(sc.frame) > maxKeptEventBytes {
		return
	}
	eventScratchPool.Put(sc)
}

// event writes one translated result as a JSON-RPC response event.
func (s *sse) event(result []byte) error {
	s.c.events++
	sc := s.scratch()
	sc.response = normalize.AppendResultResponse(sc.response[:0], s.c.env.ID, result)
	return s.data(sc.response)
}

// data writes one event and flushes it to the caller at once.
func (s *sse) data(payload []byte) error {
	s.start()
	sc := s.scratch()
	sc.frame = sseframe.AppendEvent(sc.frame[:0], sseframe.Event{ID: s.pass.ID, HasID: s.pass.HasID, Retry: s.pass.Retry, Data: payload})
	s.pass = sseframe.Event{}
	out := sc.frame
	s.c.bytes += len(out)
	s.writeDeadline()
	if _, err := s.w.Write(out); err != nil {
		return s.wrote(err)
	}
	s.unobserved++
	return s.flushUnlessBatching()
}

// passFields passes on an event of the backend's without data: a keep-alive
// comment, or an id or retry field of its own.
func (s *sse) passFields(ev sseframe.Event) error {
	s.start()
	out := sseframe.AppendEvent(nil, sseframe.Event{ID: ev.ID, HasID: ev.HasID, Retry: boundedRetry(ev.Retry), Comment: ev.Comment})
	s.writeDeadline()
	if _, err := s.w.Write(out); err != nil {
		return s.wrote(err)
	}
	return s.flushUnlessBatching()
}

func (s *sse) flushUnlessBatching() error {
	if s.batching {
		s.unflushed = true
		return nil
	}
	return s.flush()
}

// flush sends what was written to the caller at once.
func (s *sse) flush() error {
	s.unflushed = false
	s.writeDeadline()
	if err := s.rc.Flush(); err != nil {
		return s.wrote(err)
	}
	s.observeRelayed()
	return nil
}

// observeRelayed records the time the events just flushed spent in the
// gateway, from the backend read that brought them (or, for an event held
// for its final flag, the last read before its release). Events the
// gateway wrote of its own, before any read, are not relayed ones.
func (s *sse) observeRelayed() {
	n := s.unobserved
	s.unobserved = 0
	if s.relayTime == nil || s.readAt.IsZero() {
		return
	}
	d := time.Since(s.readAt).Seconds()
	for range n {
		s.relayTime.Observe(d)
	}
}

// flushPending flushes what batching held back, if anything.
func (s *sse) flushPending() error {
	if !s.unflushed {
		return nil
	}
	return s.flush()
}

// relay copies the backend's events to the caller, translated, on the
// handler's own goroutine: it reads one event, writes and flushes it, and
// only then reads the next, so nothing queues and backpressure reaches the
// backend. Two timers act while it waits in a read: the idle timeout closes
// the backend's body (the read then fails), and the interrupt grace sends a
// held event; the relay's mutex orders the grace timer's write with its own.
type relay struct {
	a         *Agent
	s         *sse
	r         *http.Request
	ctx       context.Context
	idleFired atomic.Bool

	mu        sync.Mutex
	held      []byte         // an interrupted-state event waiting for its final flag
	heldPass  sseframe.Event // its id and retry
	grace     *time.Timer    // sends held when the backend says nothing more
	finished  bool
	ended     bool   // the last event ends the exchange: a clean close may follow
	lastTask  string // what the task index last heard
	lastState string
	// messageContext is the context of a message (with no task) last
	// checked as the caller's or nobody's.
	messageContext string
	// snapshot is the task event the gateway opened the stream with, until
	// the backend's first event has been compared with it (subscribeSnapshot).
	snapshot []byte
	// opening is set until the first event has been relayed.
	opening bool
}

func (a *Agent) relay(s *sse, r *http.Request, body io.ReadCloser, snapshot []byte) {
	rl := &relay{a: a, s: s, r: r, ctx: r.Context(), snapshot: snapshot, opening: true}
	b := s.c.backend
	rd := sseframe.NewReader(body, a.cfg.MaxEventBytes)
	idle := startIdleTimer(b.cfg.StreamIdleTimeout, func() {
		rl.idleFired.Store(true)
		body.Close()
	})
	defer idle.stop()
	defer func() {
		rl.mu.Lock()
		rl.finished = true
		if rl.grace != nil {
			rl.grace.Stop()
		}
		rl.mu.Unlock()
	}()
	for {
		var readAt time.Time // zero: the event was buffered by an earlier read
		ev, err := rd.TryNext()
		if errors.Is(err, sseframe.ErrNeedsRead) {
			// The backend has sent nothing more yet: what was written goes
			// to the caller before the wait.
			if !rl.flush() {
				return
			}
			ev, err = rd.Next()
			readAt = time.Now()
			idle.activeAt(readAt)
		}
		rl.mu.Lock()
		if !readAt.IsZero() {
			s.readAt = readAt
		}
		s.batching = true
		more := rl.step(ev, err)
		s.batching = false
		// Written to the caller's connection, if not yet flushed: the
		// buffers are free.
		s.releaseScratch()
		rl.mu.Unlock()
		if !more {
			rl.flush()
			return
		}
	}
}

// flush sends the events written but not yet flushed, and reports whether
// the caller is still there.
func (rl *relay) flush() bool {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	return rl.s.flushPending() == nil
}

// step handles one read from the backend's stream and reports whether to
// read on. It runs with rl.mu held.
func (rl *relay) step(ev sseframe.Event, err error) bool {
	a, s := rl.a, rl.s
	b := s.c.backend
	switch {
	case err != nil && rl.idleFired.Load():
		rl.fail(backendFault(backendStreamIdle, "backend %q sent nothing for %s: stream closed", b.name, b.cfg.StreamIdleTimeout))
		return false
	case err != nil && rl.ctx.Err() != nil:
		switch {
		case errors.Is(context.Cause(rl.ctx), ErrShuttingDown):
			rl.fail(normalize.Errorf(dialect.ErrInternal, "the gateway is shutting down: subscribe to the task again to follow it"))
		case callerGone(rl.ctx):
			// The read ended with the call: nobody is left to tell.
			s.c.outcome = outcomeCallerGone
		}
		return false
	case err != nil:
		rl.end(err)
		return false
	case ev.Data == nil:
		// Keep-alives pass on, and so do id- or retry-only blocks: they
		// set the caller's last event id and reconnection time.
		return (ev.Comment == nil && !ev.HasID && ev.Retry == "") || s.passFields(ev) == nil
	}
	sc := s.scratch()
	reply, err := normalize.ParseReply(ev.Data)
	if err != nil {
		rl.fail(normalize.Errorf(dialect.ErrInvalidAgentResponse, "backend %q sent a stream event that is not a JSON-RPC response", b.name))
		return false
	}
	if e := answersCall(b, s.c, reply); e != nil {
		rl.fail(e)
		return false
	}
	if reply.Error != nil {
		e := a.backendError(s.c, reply.Error)
		if rl.opening {
			a.refusedStream(s, rl.r, e)
		} else {
			rl.fail(e)
		}
		return false
	}
	// A further event: the one held, if any, did not end the stream. It
	// goes first, and is translated in the result buffer this event's
	// translation then reuses.
	if !rl.release(false) {
		return false
	}
	out, info, err := normalize.AppendInspectedEvent(sc.result[:0], b.dialect, s.c.env.Dialect, &reply)
	if err != nil {
		a.metrics.translationError("event", dialect.ErrInvalidAgentResponse)
		a.streamFail(s, normalize.AsError(err, dialect.ErrInvalidAgentResponse))
		return false
	}
	keep(&sc.result, out, reply.Result)
	if e := answersTask(b, s.c, info); e != nil {
		// A subscription, or a message continuing a task, answered with
		// another task's events.
		a.streamFail(s, e)
		return false
	}
	s.c.streamEvent(info)
	if info.TaskID != rl.lastTask || (info.State != rl.lastState && info.State != "") || (info.ContextID != s.c.contextID && info.ContextID != "" && info.ContextID != rl.messageContext) {
		// The task index may be a network away: no event waits for it.
		if s.flushPending() != nil {
			return false
		}
		if e := a.record(rl.ctx, s.c, info); e != nil {
			a.streamFail(s, e)
			return false
		}
		// The event's bytes are the reader's, reused by the next read.
		rl.lastTask, rl.lastState = strings.Clone(info.TaskID), info.State
		if info.TaskID == "" {
			rl.messageContext = strings.Clone(info.ContextID)
		}
	}
	if s.c.retry != nil {
		a.streamAnswered(s.c, info, out)
	}
	rl.ended = endsExchange(info)
	opening, snapshot := rl.opening, rl.snapshot
	rl.opening, rl.snapshot = false, nil
	if snapshot != nil {
		update, repeat := normalize.RepeatedSnapshot(snapshot, out)
		switch {
		case repeat && update == nil:
			return true
		case repeat:
			out = update
		}
	}
	if opening && info.Kind == normalize.KindTask {
		if out, err = a.trimmedHistory(s.c, info, out); err != nil {
			a.streamFail(s, normalize.AsError(err, dialect.ErrInvalidAgentResponse))
			return false
		}
	}
	if a.holdsForFinal(s.c, info) {
		// Translated again, with its final flag, when released.
		rl.held = append([]byte(nil), reply.Result...)
		rl.heldPass = idAndRetry(ev)
		rl.grace = time.AfterFunc(a.interruptGrace, rl.graceOver)
		return true
	}
	if info.Kind == normalize.KindStatusUpdate && info.HasFinal && s.c.env.Dialect == dialect.V10 && s.c.callerDialect() == dialect.V03 {
		// A 0.3 gRPC or HTTP+JSON caller, served as 1.0: its front end
		// writes the backend's flag, true too where the relay ends.
		if out, err = normalize.WithFinalFlag(out, info.Final || finalEvent(info)); err != nil {
			a.streamFail(s, normalize.AsError(err, dialect.ErrInternal))
			return false
		}
	}
	s.pass = idAndRetry(ev)
	// After a final event the backend has nothing more to say: what it
	// sends on (a task done, then working again) is not relayed, nor
	// recorded over the final state.
	return s.event(out) == nil && !finalEvent(info)
}

// finalEvent reports whether an event ends its stream: a message, a task
// in a terminal state, or an event the backend marked final.
func finalEvent(info normalize.EventInfo) bool {
	return info.Kind == normalize.KindMessage || dialect.TerminalState(info.State) || (info.HasFinal && info.Final)
}

// passHeld gives the held event's id and retry to the next data event.
func (rl *relay) passHeld() {
	rl.s.pass, rl.heldPass = rl.heldPass, sseframe.Event{}
}

// idAndRetry is what of a backend's event passes to the caller: its id
// unchanged, its retry bounded (boundedRetry). The reader's strings are
// its own, not views of its buffer.
func idAndRetry(ev sseframe.Event) sseframe.Event {
	return sseframe.Event{ID: ev.ID, HasID: ev.HasID, Retry: boundedRetry(ev.Retry)}
}

// The reconnection times a backend's retry field may set for the caller,
// in milliseconds: the backend's word is not taken for an hour-long wait,
// which leaves a caller that lost its stream without its updates for that
// long, nor for none at all, which has every caller that lost one
// reconnect to the gateway at once, in a loop.
const (
	minSSERetry = 1000
	maxSSERetry = 60000
)

// boundedRetry is a backend's retry value (ASCII digits, or "" for none)
// within minSSERetry and maxSSERetry.
func boundedRetry(v string) string {
	if v == "" {
		return ""
	}
	ms, err := strconv.ParseUint(v, 10, 64)
	switch {
	case err != nil || ms > maxSSERetry: // err: digits past uint64
		return strconv.Itoa(maxSSERetry)
	case ms < minSSERetry:
		return strconv.Itoa(minSSERetry)
	}
	return v
}

// endsExchange reports whether a stream may end cleanly after this event.
func endsExchange(info normalize.EventInfo) bool {
	switch {
	case info.Kind == normalize.KindMessage:
		return true
	case info.HasFinal && info.Final:
		return true
	}
	return dialect.TerminalState(info.State) || dialect.InterruptedState(info.State)
}

// end handles the end of the backend's stream.
func (rl *relay) end(err error) {
	a, s := rl.a, rl.s
	b := s.c.backend
	switch {
	case errors.Is(err, io.EOF) && rl.held != nil:
		rl.release(true)
	case errors.Is(err, io.EOF) && rl.ended:
	case errors.Is(err, io.EOF):
		a.streamFail(s, backendFault(backendStreamCut, "backend %q ended the stream before the task reached a final or interrupted state", b.name))
	case errors.Is(err, sseframe.ErrTruncated):
		// What was held did not end the stream: the backend was saying
		// more when it stopped.
		if rl.release(false) {
			a.streamFail(s, truncatedStream(b))
		}
	case errors.Is(err, sseframe.ErrEventTooLarge):
		rl.fail(normalize.Errorf(dialect.ErrInvalidAgentResponse, "backend %q sent a stream event larger than %d bytes", b.name, a.cfg.MaxEventBytes))
	default:
		rl.fail(backendFault(backendStreamDropped, "backend %q dropped the stream: %s", b.name, describeTransportError(err, b.cfg)))
	}
}

// fail ends the stream with e, after the event held for its final flag, if
// any: that event happened, and the fault that follows it does not make it
// final (the backend was saying more when it failed).
func (rl *relay) fail(e *normalize.Error) {
	if rl.release(false) {
		rl.a.streamFail(rl.s, e)
	}
}

// truncatedStream is the answer to a backend stream that ended cleanly
// inside an event (data lines without the blank line that dispatches them,
// or half a line): the stream's bytes are malformed, and the part-event is
// neither delivered nor dropped unsaid.
func truncatedStream(b *backend) *normalize.Error {
	return normalize.Errorf(dialect.ErrInvalidAgentResponse, "backend %q ended its stream inside an event (its last lines lack the blank line that ends an event): that event is not delivered", b.name)
}

// ErrShuttingDown is the cause with which the server cancels the calls still
// running when its shutdown timeout passes: streams then end with an error
// event saying so, rather than a silent end.
var ErrShuttingDown = errors.New("the gateway is shutting down")

// backendFault is an internal error that is the backend's failure.
func backendFault(kind, format string, args ...any) *normalize.Error {
	e := normalize.Errorf(dialect.ErrInternal, format, args...)
	e.Err = backendFailure{kind: kind}
	return e
}
