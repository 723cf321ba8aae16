package grpcbind

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"time"

	pb03 "github.com/a2aproject/a2a-go/a2apb"
	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// errSendTimedOut is what the core's Write gets when a message was not
// taken within its write deadline: wrapping os.ErrDeadlineExceeded, it
// reads as the deadline passing, which the core logs and counts as the
// caller's error (server.stream_write_timeout), as for an HTTP caller.
var errSendTimedOut = fmt.Errorf("grpcbind: the caller took no stream message within the write deadline: %w", os.ErrDeadlineExceeded)

// boundSends gives each server-streaming call a stream whose sends are
// bounded by the write deadline the core sets for each event (see
// streamAnswer.SetWriteDeadline). grpc-go's SendMsg has no deadline: it
// waits for the caller's HTTP/2 flow-control window as long as the
// connection lives, so a caller that stops reading would hold the
// backend's stream. A message the transport has not taken by the deadline
// ends the call with RESOURCE_EXHAUSTED.
func boundSends(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	if !info.IsServerStream {
		return handler(srv, ss)
	}
	bs := &boundedStream{ServerStream: ss}
	bs.ctx = context.WithValue(ss.Context(), boundedKey{}, bs)
	err := handler(srv, bs)
	if bs.next != nil {
		close(bs.next)
	}
	if bs.timedOut != nil {
		// The 0.3 SDK handler answers a failed Send ABORTED: the cause is
		// the caller's, and says what to do.
		return bs.timedOut
	}
	return err
}

type boundedKey struct{}

// boundedOf is the stream boundSends gave the call of ctx, nil outside one.
func boundedOf(ctx context.Context) *boundedStream {
	bs, _ := ctx.Value(boundedKey{}).(*boundedStream)
	return bs
}

// boundedStream sends each message within deadline, when one is set, on a
// goroutine of its own, the sender, so that the handler can give up on a
// message the transport does not take and return: only the handler's
// return unblocks grpc-go's Send (see waitSend). Its fields are the
// handler's, as SendMsg is: the core sets the deadline from the goroutine
// that then writes, under streamAnswer's mutex.
type boundedStream struct {
	grpc.ServerStream
	ctx      context.Context
	deadline time.Time

	next  chan any   // to the sender, which runs once a bounded send comes
	sent  chan error // the sender's result of the message last handed over
	timer *time.Timer
	// mu orders the sender's exit when idle with a message handed over:
	// running and the hand-over to next are under it.
	mu      sync.Mutex
	running bool // a sender runs (or is in a send past its deadline)
	// timedOut is the call's status once a message was not taken in time:
	// that message is still the sender's, and nothing more is sent.
	timedOut error
}

func (bs *boundedStream) Context() context.Context { return bs.ctx }

func (bs *boundedStream) SendMsg(m any) error {
	if bs.timedOut != nil {
		return bs.timedOut
	}
	if bs.deadline.IsZero() {
		return bs.ServerStream.SendMsg(m)
	}
	wait := time.Until(bs.deadline)
	if bs.next == nil {
		bs.next, bs.sent = make(chan any, 1), make(chan error, 1)
	}
	bs.mu.Lock()
	if !bs.running {
		bs.running = true
		go bs.sender()
	}
	bs.next <- m // room for it: the last send returned, its result was read
	bs.mu.Unlock()
	return bs.waitSend(wait)
}

// senderIdle is how long a sender waits for the stream's next message
// before it exits (up to twice that, see sender): an open stream with no events (a task waiting for
// input, a subscription to a quiet task) then holds no goroutine for its
// sends, and the next message starts one again. A stream whose events come
// more often keeps its sender, whose stack has grown to what a send needs.
var senderIdle = time.Second

// sender runs the sends until the handler returns, or until it has waited
// senderIdle for a message (a tick with no message since the last one). Only one runs at a time (running), so the
// stream's sends are never concurrent, as grpc-go requires. A send in flight then,
// one the caller's window held past the deadline, is ended by grpc-go as
// it writes the handler's status: http2Server.finishStream cancels the
// stream's context, which the stream's write quota waits on
// (internal/transport/http2_server.go, flowcontrol.go writeQuota.get, grpc
// v1.84.0), and serverStream.writeStatus writes the status once however
// many goroutines end the stream (stream.go). Through ServeHTTP, the write
// net/http holds is ended by cutting the HTTP/2 stream (cutHTTP2).
func (bs *boundedStream) sender() {
	// A ticker rather than a timer reset on every message, which cost a
	// send more than the tick costs: the sender exits after one to two
	// senderIdle without a message.
	tick := time.NewTicker(senderIdle)
	defer tick.Stop()
	busy := false
	for {
		select {
		case m, ok := <-bs.next:
			if !ok {
				return
			}
			bs.sent <- bs.ServerStream.SendMsg(m)
			busy = true
		case <-tick.C:
			if busy {
				busy = false
				continue
			}
			bs.mu.Lock()
			if len(bs.next) > 0 {
				bs.mu.Unlock()
				continue // handed over as the wait ended: sent next round
			}
			bs.running = false
			bs.mu.Unlock()
			return
		}
	}
}

// waitSend waits for the sender's result for at most wait.
func (bs *boundedStream) waitSend(wait time.Duration) error {
	if bs.timer == nil {
		bs.timer = time.NewTimer(wait)
	} else {
		bs.timer.Reset(wait)
	}
	select {
	case err := <-bs.sent:
		bs.timer.Stop()
		return err
	case <-bs.timer.C:
	}
	bs.timedOut = status.Error(codes.ResourceExhausted, "the gateway ended this stream: the caller took no message for "+
		wait.Round(time.Millisecond).String()+" (server.stream_write_timeout), its HTTP/2 flow-control window stayed full; "+
		"read a stream's messages as they come, and SubscribeToTask to follow the task again")
	cutHTTP2(bs.ctx)
	return bs.timedOut
}

// ServeHTTP serves r with s, as s.ServeHTTP does, for an HTTP/2 listener
// (h2c or TLS) that serves gRPC beside other bindings. A stream call's
// messages go out through net/http's writes to w, which wait for the
// caller's flow-control window with no deadline: the call's context
// carries what cuts the stream when the caller stops reading. bound
// bounds the arrival of the call's request message (see RequestBound).
func ServeHTTP(s *grpc.Server, bound RequestBound, w http.ResponseWriter, r *http.Request) {
	over := false
	if bound.Admit != nil {
		var release func()
		r, release, over = bound.Admit(r)
		defer release()
	}
	if over {
		// The call is refused at once (refuseOver): an empty request
		// stands for the caller's, which is not waited for.
		r = r.WithContext(context.WithValue(r.Context(), overKey{}, true))
		r.Body = io.NopCloser(bytes.NewReader(emptyMessage))
	} else {
		r = withRequestBound(w, r, bound)
	}
	if !streamMethods[r.URL.Path] {
		s.ServeHTTP(w, r)
		return
	}
	c := &h2Cut{w: w}
	s.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), h2CutKey{}, c)))
	// net/http's writer is not to be used once its handler has returned,
	// which grpc-go's may do while the call's handler still runs (when the
	// caller goes away).
	c.mu.Lock()
	c.w = nil
	c.mu.Unlock()
}

type h2CutKey struct{}

// h2Cut is the net/http writer of a call served through ServeHTTP.
type h2Cut struct {
	mu sync.Mutex
	w  http.ResponseWriter
}

// cutHTTP2 resets the HTTP/2 stream of ctx's call when it came through
// ServeHTTP: a write deadline in the past makes net/http reset it at once
// and fail the write held in the caller's window (net/http's
// http2responseWriter.SetWriteDeadline), after which grpc-go's handler
// transport ends the call.
func cutHTTP2(ctx context.Context) {
	c, _ := ctx.Value(h2CutKey{}).(*h2Cut)
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.w != nil {
		_ = http.NewResponseController(c.w).SetWriteDeadline(time.Unix(1, 0))
	}
}

// streamMethods are the full names of the server-streaming RPCs, 1.0's and
// 0.3's.
var streamMethods = map[string]bool{}

func init() {
	for _, sd := range []*grpc.ServiceDesc{&a2apb.A2AService_ServiceDesc, &pb03.A2AService_ServiceDesc} {
		for _, st := range sd.Streams {
			if st.ServerStreams {
				streamMethods["/"+sd.ServiceName+"/"+st.StreamName] = true
			}
		}
	}
}
