package rest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/sse"
)

// errStreamEnded tells the core that the caller's stream is over (an error
// event ended it, or the caller went away), so it stops writing.
var errStreamEnded = errors.New("rest: the caller's event stream has ended")

// ended is errStreamEnded with the write error that ended the stream, if
// any: the core tells a caller cut by its write deadline (logged, counted
// as the caller's error) from one that went away by it.
func ended(writeErr error) error {
	if writeErr == nil {
		return errStreamEnded
	}
	return fmt.Errorf("%w: %w", errStreamEnded, writeErr)
}

// answer is the ResponseWriter the core writes its JSON-RPC answer to. A
// unary answer is buffered (the core bounds it) and rewritten whole when the
// core returns; an event stream is rewritten event by event as it arrives,
// each one flushed at once, on a goroutine reading the core's writes through
// a pipe: the pipe hands over each write before the core's next one, so
// nothing is held back.
type answer struct {
	w      http.ResponseWriter
	header http.Header
	status int // 0 until the core writes its header

	unary *bytes.Buffer // from unaryPool, given back by finish
	// replied: WriteResult answered the call.
	replied bool
	// reshape, when set, rewrites each result (unary or stream event) into
	// the binding's own message shapes.
	reshape func([]byte) ([]byte, error)
	// v03: errors in the 0.3 binding's body (apiError.v03).
	v03 bool

	pw   *io.PipeWriter
	done chan struct{}
	// handed counts the bytes the core has written into the pipe; progress
	// is how far the relay has written them to the caller.
	handed   int64
	progress relayProgress
}

// relayProgress is what the relay reports to the core's flushes: how many
// of the bytes it read from the pipe are written to the caller, and, once
// it has stopped, the error that stopped it.
type relayProgress struct {
	mu      sync.Mutex
	changed sync.Cond
	read    int64 // the relay goroutine's own count, published as written
	written int64
	stopped bool
	err     error
}

// countedPipe is the pipe as the relay's event reader reads it: what it
// takes is counted in read.
type countedPipe struct {
	pr *io.PipeReader
	p  *relayProgress
}

func (c countedPipe) Read(b []byte) (int, error) {
	n, err := c.pr.Read(b)
	c.p.read += int64(n)
	return n, err
}

// caughtUp reports that every byte read so far is written and flushed to
// the caller (or is part of an event not complete yet).
func (p *relayProgress) caughtUp() {
	p.mu.Lock()
	p.written = p.read
	p.mu.Unlock()
	p.changed.Broadcast()
}

// stop reports that the relay takes no more events, for err.
func (p *relayProgress) stop(err error) {
	p.mu.Lock()
	p.stopped, p.err = true, err
	p.mu.Unlock()
	p.changed.Broadcast()
}

// wait returns once the relay has written the first handed bytes, or has
// stopped: then with what stopped it. The relay's writes are bounded by the
// caller's write deadline, so the wait is too.
func (p *relayProgress) wait(handed int64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for !p.stopped && p.written < handed {
		p.changed.Wait()
	}
	if p.stopped {
		return p.err
	}
	return nil
}

// unaryPool keeps the buffers unary answers are rewritten from; ones grown
// past maxPooledAnswer are left to the collector.
var unaryPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const maxPooledAnswer = 1 << 20

// Header is made on first use: the core sets none on a successful unary
// call, which it answers through WriteResult.
func (a *answer) Header() http.Header {
	if a.header == nil {
		a.header = http.Header{}
	}
	return a.header
}

func (a *answer) WriteHeader(code int) {
	if a.status != 0 || code < 200 {
		return
	}
	a.status = code
	if n, err := strconv.Atoi(a.header.Get("Content-Length")); err == nil && n > 0 && n <= 64<<20 {
		a.unary.Grow(n)
	}
	if code == http.StatusOK && isEventStream(a.header) {
		pr, pw := io.Pipe()
		a.pw, a.done = pw, make(chan struct{})
		a.progress.changed.L = &a.progress.mu
		go a.relay(pr)
	}
}

func (a *answer) Write(p []byte) (int, error) {
	if a.status == 0 {
		a.WriteHeader(http.StatusOK)
	}
	if a.pw != nil {
		n, err := a.pw.Write(p)
		a.handed += int64(n)
		return n, err
	}
	return a.unary.Write(p)
}

// FlushError returns once the relay has written and flushed to the caller
// all the core wrote, with the relay's write error if it failed: the core
// then sees a caller cut by the write deadline as it does on the other
// bindings, rather than only at its next write, which may never come (a
// failed write cancels the request, and with it the backend call the core
// waits on). A unary answer is written only once the core is done.
func (a *answer) FlushError() error {
	if a.pw == nil {
		return nil
	}
	return a.progress.wait(a.handed)
}

// Unwrap lets http.ResponseController reach the caller's connection for
// what the answer does not do itself (write deadlines).
func (a *answer) Unwrap() http.ResponseWriter { return a.w }

// finish writes what is left once the core has returned.
func (a *answer) finish() {
	if a.pw != nil {
		_ = a.pw.Close()
		<-a.done
	} else if !a.replied {
		a.writeUnary()
	}
	if a.unary.Cap() <= maxPooledAnswer {
		a.unary.Reset()
		unaryPool.Put(a.unary)
	}
	a.unary = nil
}

// view reads b as a string without a copy, for gjson: every Result taken
// from it is used before b is written again or given back to the pool.
func view(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}

func (a *answer) writeUnary() {
	body := a.unary.Bytes()
	if a.status == 0 {
		a.mark(newError(http.StatusInternalServerError, dialect.ErrInternal, "the gateway wrote no answer")).write(a.w)
		return
	}
	// The core wrote this answer and checked what it put in it: no need to
	// validate it all again, only to find its result or error.
	if res := gjson.Get(view(body), "result"); res.Exists() {
		a.writeResult(rawOf(body, res))
		return
	}
	a.copyHeader()
	if e := gjson.Get(view(body), "error"); e.IsObject() {
		a.mark(fromRPCError(e, a.status)).write(a.w)
		return
	}
	status := a.status
	if status < 400 {
		status = http.StatusInternalServerError
	}
	a.mark(newError(status, dialect.ErrInternal, "the gateway answered: "+truncate(strings.TrimSpace(string(body)), 200))).write(a.w)
}

// WriteResult answers a successful unary call with its result, which the
// core hands over bare (proxy's resultWriter) instead of writing it in a
// JSON-RPC envelope: the answer need not search the envelope for the
// result's end. result is the core's, used only until this returns.
func (a *answer) WriteResult(result []byte) {
	if a.status != 0 || a.pw != nil {
		// The core already answered otherwise: what it wrote is the answer.
		return
	}
	a.status = http.StatusOK
	a.replied = true
	a.writeResult(result)
}

// writeResult answers with a JSON-RPC result, in the binding's shape.
func (a *answer) writeResult(out []byte) {
	if string(bytes.TrimSpace(out)) == "null" {
		out = []byte("{}") // google.protobuf.Empty
	}
	if a.reshape != nil {
		var err error
		if out, err = a.reshape(out); err != nil {
			a.mark(newError(http.StatusInternalServerError, dialect.ErrInternal, "the answer could not be translated to the 0.3 binding: "+err.Error())).write(a.w)
			return
		}
	}
	a.copyHeader()
	h := a.w.Header()
	h["Content-Type"] = headerJSON
	h["Content-Length"] = []string{strconv.Itoa(len(out))}
	a.w.WriteHeader(http.StatusOK)
	_, _ = a.w.Write(out)
}

var headerJSON = []string{"application/json"}

// rawOf returns r's bytes inside body, where gjson found it, without a copy.
func rawOf(body []byte, r gjson.Result) []byte {
	if r.Index > 0 && r.Index+len(r.Raw) <= len(body) {
		return body[r.Index : r.Index+len(r.Raw)]
	}
	return []byte(r.Raw)
}

// copyHeader passes on the core's headers (WWW-Authenticate, Retry-After,
// the SSE ones) but the body's framing, which the rewrite changes.
func (a *answer) copyHeader() {
	h := a.w.Header()
	for k, v := range a.header {
		if k == "Content-Length" {
			continue
		}
		h[k] = v
	}
}

// relay rewrites the core's event stream: each JSON-RPC envelope becomes its
// bare result, an error envelope a {"error": Status} event that ends the
// stream. When the very first event is an error, the caller gets it as a
// plain error answer with its HTTP status instead, as from a unary call.
func (a *answer) relay(pr *io.PipeReader) {
	defer close(a.done)
	stop := func(err error) {
		a.progress.stop(err)
		pr.CloseWithError(err)
	}
	rd := sse.NewReader(countedPipe{pr, &a.progress}, 0)
	rc := http.NewResponseController(a.w)
	committed := false
	commit := func() {
		if !committed {
			committed = true
			a.copyHeader()
			a.w.WriteHeader(http.StatusOK)
		}
	}
	defer commit()
	var out []byte
	for {
		ev, err := rd.TryNext()
		if errors.Is(err, sse.ErrNeedsRead) {
			a.progress.caughtUp()
			ev, err = rd.Next()
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				// The core's own stream is malformed or too large: say so
				// rather than end silently.
				e := a.mark(newError(http.StatusInternalServerError, dialect.ErrInternal, "the gateway's event stream broke: "+err.Error()))
				if !committed {
					a.copyHeader()
					a.w.Header().Del("Cache-Control")
					e.write(a.w)
					committed = true
				} else {
					a.writeEvent(rc, a.errorEvent(e))
				}
			}
			stop(errStreamEnded)
			return
		}
		if ev.Data == nil { // a keep-alive or id/retry-only block
			commit()
			if err := a.writeEvent(rc, ev); err != nil {
				stop(ended(err))
				return
			}
			continue
		}
		var failed *apiError
		res := gjson.Get(view(ev.Data), "result")
		switch {
		case res.Exists() && a.reshape != nil:
			var rerr error
			if out, rerr = a.reshape(rawOf(ev.Data, res)); rerr != nil {
				failed = a.mark(newError(http.StatusInternalServerError, dialect.ErrInternal, "an event could not be translated to the 0.3 binding: "+rerr.Error()))
			}
		case res.Exists():
			out = append(out[:0], rawOf(ev.Data, res)...)
		case gjson.Get(view(ev.Data), "error").IsObject():
			failed = a.mark(fromRPCError(gjson.Get(view(ev.Data), "error"), http.StatusOK))
		default:
			failed = a.mark(newError(http.StatusInternalServerError, dialect.ErrInternal, "the gateway's event stream held an event that is not JSON-RPC"))
		}
		if failed != nil && !committed {
			a.copyHeader()
			for _, k := range []string{"Cache-Control", "X-Accel-Buffering"} {
				a.w.Header().Del(k)
			}
			failed.write(a.w)
			committed = true
			stop(errStreamEnded)
			return
		}
		if failed != nil {
			end := a.errorEvent(failed)
			out = append(out[:0], end.Data...)
			ev.Type = end.Type
		}
		commit()
		ev.Data = out
		if err := a.writeEvent(rc, ev); err != nil || failed != nil {
			stop(ended(err))
			return
		}
	}
}

// mark makes e answer in the binding a's request came on.
func (a *answer) mark(e *apiError) *apiError {
	e.v03 = a.v03
	return e
}

// errorEvent is e as the event that ends a stream: 1.0 sends the
// {"error": Status} as an ordinary event, the 0.3 binding an "error" event
// (what @a2a-js/sdk 0.3's server writes and its RestTransport reads).
func (a *answer) errorEvent(e *apiError) sse.Event {
	ev := sse.Event{Data: e.body()}
	if a.v03 {
		ev.Type = "error"
	}
	return ev
}

func (a *answer) writeEvent(rc *http.ResponseController, ev sse.Event) error {
	if _, err := a.w.Write(sse.AppendEvent(nil, ev)); err != nil {
		return err
	}
	return rc.Flush()
}

func isEventStream(h http.Header) bool {
	ct, _, _ := strings.Cut(h.Get("Content-Type"), ";")
	return strings.EqualFold(strings.TrimSpace(ct), "text/event-stream")
}
