package grpcbind

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net/http"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/tap"

	"github.com/a2agate/gateway/dialect"
)

// grpc-go reads a call's request message with no deadline of its own, and
// net/http bounds only a request's headers (server.read_header_timeout): a
// caller that opens a call and never sends its request would hold the call,
// and a goroutine, without end, before any interceptor or the core sees it.
// Every A2A method takes one request message, so server.read_timeout
// bounds that message as it bounds an HTTP caller's body; the call then
// runs, and streams, as long as it needs. A message that misses the bound
// is handed to grpc-go as an empty request marked late in the call's
// context, so that the interceptors refuse it in the binding's own shape,
// after checking the caller as for any request they refuse.

// lateKey is the context key of a call's *lateRequest.
type lateKey struct{}

// lateRequest says whether a call's request message missed the bound.
type lateRequest struct {
	late    atomic.Bool
	timeout time.Duration
	// oversize is the length a request message declared over limit, which
	// is not read: refused by the interceptors, after they check the
	// caller, rather than by grpc-go before any interceptor runs.
	oversize atomic.Int64
	limit    int64
	// timer, on a listener of the server's own, marks the call late and
	// ends its context when the message has not arrived by the bound.
	timer *time.Timer
}

// lateRefusal is the status of a call whose request message came late, or
// nil. On a listener of the server's own it is called once the message
// has arrived, and ends the bound.
func lateRefusal(ctx context.Context) error {
	lr, _ := ctx.Value(lateKey{}).(*lateRequest)
	if lr == nil {
		return nil
	}
	if lr.timer != nil {
		lr.timer.Stop()
	}
	if n := lr.oversize.Load(); n > 0 {
		return failure(codes.ResourceExhausted, dialect.ErrInvalidRequest, "the request message is "+strconv.FormatInt(n, 10)+
			" bytes, over this agent's limit of "+strconv.FormatInt(lr.limit, 10)+" bytes (max_body_bytes): send less, or large files by URL")
	}
	if !lr.late.Load() {
		return nil
	}
	return failure(codes.DeadlineExceeded, dialect.ErrInvalidRequest, "the request message did not arrive within server.read_timeout ("+
		lr.timeout.String()+"): send it with the call")
}

// RequestBound bounds the request message of a call served through
// ServeHTTP.
type RequestBound struct {
	// Timeout bounds its arrival, from the end of the call's headers
	// (server.read_timeout); 0 means no bound.
	Timeout time.Duration
	// MaxMessageBytes is the front end's Options.MaxMessageBytes: a
	// message declared longer is not read, and refused once the caller is
	// checked.
	MaxMessageBytes int64
	// Admit, when set, counts the call against its caller's bound before
	// its message is read, which the core cannot do for a message read
	// before the core sees the call: it returns the request to serve,
	// marked so that the core does not count the call again, and the
	// release of the count. over says the caller has too many calls in
	// flight: its message is not read, and the core, told so by the mark,
	// refuses the call.
	Admit func(*http.Request) (_ *http.Request, release func(), over bool)
}

// withRequestBound returns r with a body that must yield its first gRPC
// message within the bound, and a context that says when it did not.
func withRequestBound(w http.ResponseWriter, r *http.Request, bound RequestBound) *http.Request {
	rc := http.NewResponseController(w)
	if bound.Timeout <= 0 || rc.SetReadDeadline(time.Now().Add(bound.Timeout)) != nil {
		// The message is still read first, for its length to be judged.
		rc = nil
	}
	limit := bound.MaxMessageBytes
	if limit <= 0 {
		limit = DefaultMaxMessageBytes
	}
	lr := &lateRequest{timeout: bound.Timeout, limit: limit}
	r = r.WithContext(context.WithValue(r.Context(), lateKey{}, lr))
	r.Body = &boundedRequest{body: r.Body, rc: rc, lr: lr, limit: limit}
	return r
}

// emptyMessage is the gRPC frame of an empty, uncompressed message.
var emptyMessage = []byte{0, 0, 0, 0, 0}

// boundedRequest is a call's body whose first message is read whole,
// under the read deadline, before any of it is handed on: a message cut
// by the deadline is replaced by emptyMessage, with the call marked late.
// The deadline ends with the first message (or the body, or a message
// over the limit, which is not read: an empty one marked oversize stands
// for it).
type boundedRequest struct {
	body  io.ReadCloser
	rc    *http.ResponseController
	lr    *lateRequest
	limit int64
	first []byte // the first message, or what replaces it, left to hand on
	read  bool   // the first message was read
	err   error  // the body's error once the first message is handed on
}

func (b *boundedRequest) Read(p []byte) (int, error) {
	if !b.read {
		b.read = true
		b.first, b.err = b.readFirst()
	}
	if len(b.first) > 0 {
		n := copy(p, b.first)
		b.first = b.first[n:]
		return n, nil
	}
	if b.err != nil {
		return 0, b.err
	}
	return b.body.Read(p)
}

func (b *boundedRequest) Close() error { return b.body.Close() }

// readFirst reads the first message: its 5-byte prefix, then the length
// it names. The error is the body's, to be returned once the bytes read
// are handed on; nil when reading can go on.
func (b *boundedRequest) readFirst() ([]byte, error) {
	var prefix [5]byte
	n, err := io.ReadFull(b.body, prefix[:])
	if err == nil {
		size := int64(binary.BigEndian.Uint32(prefix[1:]))
		if size > b.limit {
			b.endDeadline()
			b.lr.oversize.Store(size)
			return emptyMessage, io.EOF
		}
		// Grown as the message arrives, not sized by its prefix: a caller
		// that declares a large one and sends nothing holds no more.
		msg := bytes.NewBuffer(append(make([]byte, 0, 512), prefix[:]...))
		var m int64
		m, err = io.CopyN(msg, b.body, size)
		if err == nil {
			b.endDeadline()
			return msg.Bytes(), nil
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			b.lr.late.Store(true)
			return emptyMessage, io.EOF
		}
		b.endDeadline()
		if err == io.EOF && m < size {
			err = io.ErrUnexpectedEOF
		}
		return msg.Bytes(), err
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		b.lr.late.Store(true)
		return emptyMessage, io.EOF
	}
	// The body ended (or broke) before a whole prefix: grpc-go answers it.
	b.endDeadline()
	return prefix[:n], err
}

func (b *boundedRequest) endDeadline() {
	if b.rc != nil {
		_ = b.rc.SetReadDeadline(time.Time{})
	}
}

// tapRequestBound is the bound on a listener of the server's own, where
// grpc-go's transport reads the message: the call's context ends when the
// message has not arrived within d. Its error is then
// context.DeadlineExceeded, and grpc-go answers the call, unary or
// streaming, with its own DEADLINE_EXCEEDED: the failed read writes the
// status itself (serverStream.RecvMsg, v1.84) before any interceptor or
// handler could write lateRefusal's, which names server.read_timeout only
// through ServeHTTP.
func tapRequestBound(d time.Duration) tap.ServerInHandle {
	return func(ctx context.Context, _ *tap.Info) (context.Context, error) {
		lr := &lateRequest{timeout: d}
		inner, cancel := context.WithCancel(ctx)
		lr.timer = time.AfterFunc(d, func() {
			lr.late.Store(true)
			cancel()
		})
		return &lateContext{Context: inner, lr: lr}, nil
	}
}

// lateContext is a call's context whose error, once its request came late,
// is context.DeadlineExceeded.
type lateContext struct {
	context.Context
	lr *lateRequest
}

func (c *lateContext) Err() error {
	if c.lr.late.Load() {
		return context.DeadlineExceeded
	}
	return c.Context.Err()
}

func (c *lateContext) Value(key any) any {
	if key == (lateKey{}) {
		return c.lr
	}
	return c.Context.Value(key)
}
