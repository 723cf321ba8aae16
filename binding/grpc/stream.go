package grpcbind

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"github.com/tidwall/gjson"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/a2agate/gateway/dialect"
)

// DefaultMaxEventBytes bounds one event of the core's stream while it is
// read, when Options leaves it unset.
const DefaultMaxEventBytes = 16 << 20

// errStreamEnded tells the core that the caller's stream is over (an error
// ended it, or the caller went away), so it stops writing.
var errStreamEnded = errors.New("grpcbind: the caller's stream has ended")

// stream makes the JSON-RPC streaming call of method with req and sends the
// caller one StreamResponse for each event of the core's answer, as the
// core writes it.
func (s *service) stream(ss grpc.ServerStreamingServer[a2apb.StreamResponse], method string, req proto.Message) error {
	return s.streamTo(ss.Context(), method, req, ss.Send, func(md metadata.MD) {
		_ = ss.SetHeader(md) // an error before the first event: not sent yet
	})
}

// streamTo is stream with the events given to send, and the core's headers
// the caller needs to setHeader.
func (s *service) streamTo(ctx context.Context, method string, req proto.Message, send func(*a2apb.StreamResponse) error, setHeader func(metadata.MD)) error {
	r, err := s.request(ctx, method, req, true)
	if err != nil {
		return err
	}
	a := &streamAnswer{send: send, ctx: ctx, header: http.Header{}, bound: boundedOf(ctx), maxEvent: s.maxEvent}
	reachedCore(ctx)
	s.rpc.ServeHTTP(a, r)
	if md := answerHeader(a.header); md != nil {
		setHeader(md)
	}
	return a.finish()
}

// streamAnswer is the ResponseWriter a streaming call's answer is written
// to. An event stream is decoded event by event inside the core's Write:
// each complete event is sent before Write returns, so none waits for a
// later one and a slow caller slows the core, as a slow HTTP caller does.
// Any other answer (an error before the stream) is read once the core is
// done.
type streamAnswer struct {
	send   func(*a2apb.StreamResponse) error
	ctx    context.Context
	header http.Header
	// bound is the call's stream, whose sends take the deadline the core
	// sets; nil outside a call (tests of the answer alone).
	bound *boundedStream
	// maxEvent bounds an event not yet complete (0: DefaultMaxEventBytes).
	maxEvent int64

	mu     sync.Mutex
	status int
	events bool
	buf    []byte // the unary answer, or the event not yet complete
	err    error  // what ended the stream, once something has
}

func (a *streamAnswer) Header() http.Header { return a.header }

func (a *streamAnswer) WriteHeader(code int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.writeHeader(code)
}

func (a *streamAnswer) writeHeader(code int) {
	if a.status != 0 || code < 200 {
		return
	}
	a.status = code
	ct, _, _ := strings.Cut(a.header.Get("Content-Type"), ";")
	a.events = code == http.StatusOK && strings.EqualFold(strings.TrimSpace(ct), "text/event-stream")
}

func (a *streamAnswer) Write(p []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.writeHeader(http.StatusOK)
	if a.err != nil {
		return 0, a.writeError()
	}
	a.buf = append(a.buf, p...)
	if !a.events {
		return len(p), nil
	}
	for a.err == nil {
		block, rest, ok := cutEvent(a.buf)
		if !ok {
			break
		}
		a.event(block)
		a.buf = rest
	}
	if limit := cmp.Or(a.maxEvent, DefaultMaxEventBytes); a.err == nil && int64(len(a.buf)) > limit {
		a.err = failure(codes.Internal, dialect.ErrInternal, "the gateway's event stream held an event larger than "+strconv.FormatInt(limit, 10)+" bytes")
	}
	if len(a.buf) == 0 {
		a.buf = a.buf[:0:0] // let a large event's memory go
	}
	if a.err != nil {
		return len(p), a.writeError()
	}
	return len(p), nil
}

// writeError is what a Write gets once the stream has ended.
func (a *streamAnswer) writeError() error {
	if a.bound != nil && a.bound.timedOut != nil {
		return errSendTimedOut
	}
	return errStreamEnded
}

// SetWriteDeadline is how the core bounds the write of each event
// (server.stream_write_timeout): an event's message not taken by the
// transport by then ends the call, and the Write fails as a write past its
// deadline does.
func (a *streamAnswer) SetWriteDeadline(t time.Time) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.bound != nil {
		a.bound.deadline = t
	}
	return nil
}

// FlushError is a no-op: each event is sent as soon as it is complete.
func (a *streamAnswer) FlushError() error { return nil }

// cutEvent splits the first complete SSE event (up to its blank line) off
// buf. The core writes LF line ends.
func cutEvent(buf []byte) (event, rest []byte, ok bool) {
	i := bytes.Index(buf, []byte("\n\n"))
	if i < 0 {
		return nil, buf, false
	}
	return buf[:i], buf[i+2:], true
}

// event sends one event: its data is a JSON-RPC response whose result is a
// StreamResponse, or whose error ends the stream.
func (a *streamAnswer) event(block []byte) {
	var data []byte
	seen := false
	for line := range bytes.SplitSeq(block, []byte("\n")) {
		v, ok := bytes.CutPrefix(line, []byte("data:"))
		if !ok {
			continue // id, event, retry and keep-alive comments
		}
		v, _ = bytes.CutPrefix(v, []byte(" "))
		if seen {
			data = append(data, '\n')
		}
		data, seen = append(data, v...), true
	}
	if !seen {
		return
	}
	env := gjson.ParseBytes(data)
	switch {
	case !gjson.ValidBytes(data) || !env.IsObject():
		a.err = failure(codes.Internal, dialect.ErrInternal, "the gateway's event stream held an event that is not JSON")
	case env.Get("result").Exists():
		ev := new(a2apb.StreamResponse)
		if err := decodeResult(rawOf(data, env.Get("result")), ev); err != nil {
			a.err = err
			return
		}
		if fc := finalCarryOf(a.ctx); fc != nil {
			f := env.Get("result.statusUpdate.final")
			fc.has, fc.final = f.IsBool(), f.Bool()
		}
		if err := a.send(ev); err != nil {
			a.err = err
		}
	case env.Get("error").Exists():
		a.err = a.rpcError(env.Get("error"), http.StatusOK)
	default:
		a.err = failure(codes.Internal, dialect.ErrInternal, "the gateway's event stream held an event that is not JSON-RPC")
	}
}

// rpcError is the status of an error the core answered; when the RPC's own
// context has ended, that says why.
func (a *streamAnswer) rpcError(obj gjson.Result, httpStatus int) error {
	if err := a.ctx.Err(); err != nil {
		return status.FromContextError(err).Err()
	}
	return rpcStatus(obj, httpStatus).Err()
}

// finish is the RPC's end once the core has returned.
func (a *streamAnswer) finish() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case a.err != nil:
		return a.err
	case a.status == 0:
		return failure(codes.Internal, dialect.ErrInternal, "the gateway wrote no answer")
	case a.events:
		if len(bytes.TrimSpace(a.buf)) > 0 {
			return failure(codes.Internal, dialect.ErrInternal, "the gateway's event stream ended in the middle of an event")
		}
		if err := a.ctx.Err(); err != nil {
			return status.FromContextError(err).Err()
		}
		return nil
	}
	res := gjson.ParseBytes(a.buf)
	switch {
	case !gjson.ValidBytes(a.buf) || !res.IsObject():
		return nonJSON(a.status, a.buf)
	case res.Get("error").Exists():
		return a.rpcError(res.Get("error"), a.status)
	}
	return failure(codes.Internal, dialect.ErrInternal, "the gateway answered a streaming call without an event stream")
}
