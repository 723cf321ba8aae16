package proxy

import (
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/a2agate/gateway/dialect"
	sseframe "github.com/a2agate/gateway/internal/sse"
	"github.com/a2agate/gateway/normalize"
)

// A blocking send served from the backend's stream
// (agents[].backend.blocking_via_stream): the caller's blocking send goes to
// the backend as its streaming send. The first event that names the task
// records it at once, in the task index and in the send's retry record, so
// that the retry of a caller that timed out or left learns the task while
// it runs, where a plain blocking call leaves it unknown until the backend
// answers. The events are folded (normalize.SendFold) into the answer the
// blocking send would have had, given when the stream reaches a final or
// interrupted state or ends.

// viaStream reports whether the claimed send c is served from the
// backend's stream: a blocking send, to a backend configured for it that
// has not refused a streaming send and, for the agent's own backend (the
// one whose card is read), whose card does not say it cannot stream.
func (a *Agent) viaStream(c *call) bool {
	b := c.backend
	return b.cfg.BlockingViaStream && c.info.Blocking && !b.streamRefused.Load() && !(b == a.backend && a.cards.noStreaming.Load())
}

// warnNoStreaming says, at each card refresh, why blocking_via_stream is
// not followed.
func (a *Agent) warnNoStreaming() {
	if a.backend.cfg.BlockingViaStream && a.cards.noStreaming.Load() {
		a.log.Warn("blocking_via_stream is set but the backend's card does not say capabilities.streaming: blocking sends go to the backend as plain blocking calls")
	}
}

// sendViaStream makes the blocking send c as the backend's streaming send
// and returns its answer in the caller's dialect, as unary does for a
// plain one. It reports fallBack, having sent nothing the backend took,
// when the backend refused the stream as a method it does not serve.
// ctx bounds it, and so does response_timeout, as it bounds a plain
// blocking call's reply.
func (a *Agent) sendViaStream(ctx context.Context, r *http.Request, c *call, params []byte) (result []byte, e *normalize.Error, fallBack bool) {
	b := c.backend
	method, _ := dialect.MethodName(b.dialect, dialect.SendStreamingMessage)
	if d := b.cfg.ResponseTimeout; d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, d, &responseTimeoutError{limit: d})
		defer cancel()
	}
	bctx, span := a.startBackendCall(ctx, c, method)
	res, err := b.post(bctx, r, c, method, params, true)
	if err != nil {
		e := b.transportError(ctx, err)
		endBackendCall(span, c, e, nil)
		return nil, e, false
	}
	defer res.Body.Close()
	if mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); mt != "text/event-stream" {
		// A refusal before the stream, a plain JSON-RPC response.
		reply, e := a.readReply(res, b, c)
		endBackendCall(span, c, e, reply.Error)
		switch {
		case e != nil:
			return nil, e, false
		case reply.Error != nil:
			e = a.backendError(c, reply.Error)
			if !streamUnserved(e) {
				return nil, e, false
			}
			// UnsupportedOperation is also how @a2a-js/sdk 1.x refuses a
			// message to a task in a final state: that is no refusal to
			// stream, and sent again as a plain send it is only refused
			// again.
			if c.info.TaskID != "" {
				if task, state := a.finalTask(r, c); task != nil {
					return nil, finalMessageRefusal(c, state), false
				}
			}
			return nil, e, true
		}
		return nil, normalize.Errorf(dialect.ErrInvalidAgentResponse, "backend %q answered a stream request without an event stream", b.name), false
	}
	if e := b.unrelayableStream(res); e != nil {
		endBackendCall(span, c, e, nil)
		return nil, e, false
	}
	result, e = a.foldStream(ctx, c, res.Body)
	endBackendCall(span, c, e, nil)
	return result, e, false
}

// streamUnserved reports whether a backend's refusal of a stream says it
// does not stream: method not found, or (1.0 and 0.3)
// UnsupportedOperationError.
func streamUnserved(e *normalize.Error) bool {
	var ae *normalize.AgentError
	if !errors.As(e, &ae) {
		return false
	}
	kind, _ := dialect.ErrorByCode(ae.Code)
	return kind.Kind == dialect.ErrMethodNotFound || kind.Kind == dialect.ErrUnsupportedOperation
}

// foldStream reads the backend's events of a send and folds them into its
// blocking answer. Each event is bounded by max_event_bytes, the fold by
// max_reply_bytes (what a plain blocking reply may be), and each wait by
// stream_idle_timeout.
func (a *Agent) foldStream(ctx context.Context, c *call, body io.ReadCloser) ([]byte, *normalize.Error) {
	b := c.backend
	rd := sseframe.NewReader(body, a.cfg.MaxEventBytes)
	var idleFired atomic.Bool
	idle := startIdleTimer(b.cfg.StreamIdleTimeout, func() {
		idleFired.Store(true)
		body.Close()
	})
	defer idle.stop()
	var fold normalize.SendFold
	buf := c.buffer(4 << 10)
	named, recorded := false, ""
	for {
		ev, err := rd.Next()
		if err != nil {
			return a.streamFolded(ctx, c, &fold, recorded, a.foldEnd(ctx, c, &fold, err, idleFired.Load()))
		}
		idle.activeAt(time.Now())
		if ev.Data == nil {
			continue // a keep-alive
		}
		reply, err := normalize.ParseReply(ev.Data)
		if err != nil {
			return nil, normalize.Errorf(dialect.ErrInvalidAgentResponse, "backend %q sent a stream event that is not a JSON-RPC response", b.name)
		}
		if e := answersCall(b, c, reply); e != nil {
			return nil, e
		}
		if reply.Error != nil {
			return nil, a.backendError(c, reply.Error)
		}
		canon, info, err := normalize.AppendInspectedEvent((*buf)[:0], b.dialect, dialect.V10, &reply)
		if err != nil {
			a.metrics.translationError("event", dialect.ErrInvalidAgentResponse)
			return nil, normalize.AsError(err, dialect.ErrInvalidAgentResponse)
		}
		keep(buf, canon, reply.Result)
		if e := answersTask(b, c, info); e != nil {
			return nil, e
		}
		stray := c.taskID != "" && info.TaskID != "" && (info.TaskID != c.taskID || (info.ContextID != "" && info.ContextID != c.contextID))
		// Before the task is recorded, an event without a state (an
		// artifact update) names it too: the fold would start over at a
		// second task's event and answer with that task alone.
		early := c.taskID == "" && info.TaskID != "" && info.State == ""
		// A message has no state to record, and may name no task, so the
		// checks below never see it; yet it ends the fold, often as the
		// answer, and one in another caller's context would hand the
		// caller that context.
		message := info.Kind == normalize.KindMessage
		if stray || early || message {
			// After the task is recorded the stream may say no more about
			// another task or context: folded, such an event (another
			// caller's task, say) would be the answer. record refuses both,
			// as it does for a relayed stream.
			if e := a.record(ctx, c, info); e != nil {
				return nil, e
			}
		}
		if int64(fold.Size()+len(canon)) > a.cfg.MaxReplyBytes {
			return nil, normalize.Errorf(dialect.ErrInvalidAgentResponse, "backend %q streamed a task larger than %d bytes (max_reply_bytes)", b.name, a.cfg.MaxReplyBytes)
		}
		if err := fold.Add(canon, info); err != nil {
			return nil, normalize.AsError(err, dialect.ErrInvalidAgentResponse)
		}
		if info.TaskID != "" && !named {
			// At once, not at the answer: the point of the stream.
			named = true
			if c.retry != nil {
				a.streamAnswered(c, info, nil)
			}
		}
		if info.TaskID != "" && info.State != "" && recorded == "" {
			if e := a.record(ctx, c, info); e != nil {
				return nil, e
			}
			recorded = strings.Clone(info.State)
		}
		if endsExchange(info) {
			return a.streamFolded(ctx, c, &fold, recorded, nil)
		}
	}
}

// foldEnd is why the backend's stream ended before a final or interrupted
// state; nil when it closed cleanly after naming a task, whose snapshot is
// then the answer (a plain blocking call to a backend that gives up on the
// wait answers the task as it stands, too).
func (a *Agent) foldEnd(ctx context.Context, c *call, fold *normalize.SendFold, err error, idle bool) *normalize.Error {
	b := c.backend
	switch {
	case idle:
		return backendFault(backendStreamIdle, "backend %q sent nothing for %s (stream_idle_timeout) before the task reached a final or interrupted state", b.name, b.cfg.StreamIdleTimeout)
	case ctx.Err() != nil:
		return b.transportError(ctx, err)
	case errors.Is(err, io.EOF) && fold.Started():
		return nil
	case errors.Is(err, io.EOF):
		return backendFault(backendStreamCut, "backend %q ended the stream before it named a task or answered", b.name)
	case errors.Is(err, sseframe.ErrTruncated):
		return truncatedStream(b)
	case errors.Is(err, sseframe.ErrEventTooLarge):
		return normalize.Errorf(dialect.ErrInvalidAgentResponse, "backend %q sent a stream event larger than %d bytes", b.name, a.cfg.MaxEventBytes)
	}
	return backendFault(backendStreamDropped, "backend %q dropped the stream: %s", b.name, describeTransportError(err, b.cfg))
}

// streamFolded is the blocking answer of the folded stream, in the
// caller's dialect, its history cut to what the caller asked, its task's
// last state recorded; or e.
func (a *Agent) streamFolded(ctx context.Context, c *call, fold *normalize.SendFold, recorded string, e *normalize.Error) ([]byte, *normalize.Error) {
	if e != nil {
		return nil, e
	}
	buf := c.buffer(fold.Size() + 512)
	result, info, err := fold.AppendAnswer((*buf)[:0], c.env.Dialect)
	keep(buf, result, nil)
	if err != nil {
		a.metrics.translationError("response", dialect.ErrInvalidAgentResponse)
		return nil, normalize.AsError(err, dialect.ErrInvalidAgentResponse)
	}
	c.answer = info
	if info.State != recorded {
		if e := a.record(ctx, c, info); e != nil {
			return nil, e
		}
	}
	if result, err = a.trimmedHistory(c, info, result); err != nil {
		return nil, normalize.AsError(err, dialect.ErrInvalidAgentResponse)
	}
	return result, nil
}

// viaStreamRefused notes that the backend refused the streaming send of
// blocking_via_stream: its blocking sends go as plain ones from now on.
func (a *Agent) viaStreamRefused(c *call, e *normalize.Error) {
	if c.backend.streamRefused.Swap(true) {
		return
	}
	a.log.Warn("the backend refused a streaming send as a method it does not serve: its blocking sends go to it as plain blocking calls from now on", "backend", c.backend.name, "error", e.Error())
}
