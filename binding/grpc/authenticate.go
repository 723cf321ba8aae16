package grpcbind

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/a2agate/gateway/dialect"
)

// The core authenticates every call it serves; a call the front end
// refuses itself never reaches it. Without a check of its own, the front
// end would tell a caller without a valid token what is wrong with its
// request message (INVALID_ARGUMENT, naming a field) rather than that it
// must authenticate. So a call that ends in an error before the core was
// called has its caller checked (Options.Authenticate), and a refused
// caller gets the core's refusal instead. Calls the core serves are
// authenticated there alone.

// coreKey is the context key of a call's *atomic.Bool set once the call
// was handed to the core.
type coreKey struct{}

// reachedCore notes, in a call's context, that the call is handed to the
// core.
func reachedCore(ctx context.Context) {
	if reached, ok := ctx.Value(coreKey{}).(*atomic.Bool); ok {
		reached.Store(true)
	}
}

// refusedBeforeCoreUnary answers a unary call refused before the core
// with the core's refusal of its caller, if the caller is refused, and
// tells Options.Refused of the call's refusal, which the core never saw.
func (s *service) refusedBeforeCoreUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	start := time.Now()
	reached := new(atomic.Bool)
	resp, err := handler(context.WithValue(ctx, coreKey{}, reached), req)
	if err == nil || reached.Load() {
		return resp, err
	}
	if s.authenticate != nil {
		if refused := s.refusal(ctx, func(md metadata.MD) { _ = grpc.SetHeader(ctx, md) }); refused != nil {
			err = refused
		}
	}
	s.tellRefused(ctx, start, info.FullMethod, err)
	return nil, err
}

// refusedBeforeCoreStream is refusedBeforeCoreUnary for a streaming call,
// which has sent nothing when it is refused before the core. A method
// neither service has (grpc-go gives its handler no service, srv) names
// no operation: it is answered as such whoever calls, as the JSON-RPC
// endpoint answers an unknown method and the REST binding an unknown
// route.
func (s *service) refusedBeforeCoreStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	start := time.Now()
	if srv == nil {
		err := handler(srv, ss)
		s.tellRefused(ss.Context(), start, info.FullMethod, err)
		return err
	}
	reached := new(atomic.Bool)
	err := handler(srv, contextStream{ss, context.WithValue(ss.Context(), coreKey{}, reached)})
	if err == nil || reached.Load() {
		return err
	}
	if s.authenticate != nil {
		if refused := s.refusal(ss.Context(), func(md metadata.MD) { _ = ss.SetHeader(md) }); refused != nil {
			err = refused
		}
	}
	s.tellRefused(ss.Context(), start, info.FullMethod, err)
	return err
}

// tellRefused tells Options.Refused of the call of fullMethod that the
// front end refused with err.
func (s *service) tellRefused(ctx context.Context, start time.Time, fullMethod string, err error) {
	if s.refused == nil || err == nil {
		return
	}
	caller, op := dialect.V10, dialect.OpUnknown
	method := fullMethod[strings.LastIndexByte(fullMethod, '/')+1:]
	switch {
	case strings.HasPrefix(fullMethod, v03Service):
		caller = dialect.V03
		op = v03Ops[method]
	case strings.HasPrefix(fullMethod, v10Service):
		_, op, _ = dialect.Lookup(method)
	}
	kind := dialect.ErrInternal
	for _, d := range status.Convert(err).Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			if row, known := dialect.ErrorByReason(info.Reason); known {
				kind = row.Kind
			}
			break
		}
	}
	s.refused(ctx, start, caller, op, kind)
}

// contextStream is a server stream with a context of its own.
type contextStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s contextStream) Context() context.Context { return s.ctx }

// overKey is the context key of a call RequestBound.Admit found over its
// caller's bound: it is refused before its handler reads (or converts) its
// empty stand-in request.
type overKey struct{}

func isOver(ctx context.Context) bool { return ctx.Value(overKey{}) != nil }

// refuseOverUnary answers a call over its caller's bound with the core's
// refusal of it.
func (s *service) refuseOverUnary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if !isOver(ctx) {
		return handler(ctx, req)
	}
	reachedCore(ctx)
	return nil, s.answerOf(ctx, s.rpc, func(md metadata.MD) { _ = grpc.SetHeader(ctx, md) })
}

// refuseOverStream is refuseOverUnary for a streaming call.
func (s *service) refuseOverStream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	if !isOver(ss.Context()) {
		return handler(srv, ss)
	}
	reachedCore(ss.Context())
	return s.answerOf(ss.Context(), s.rpc, func(md metadata.MD) { _ = ss.SetHeader(md) })
}

// refusal is the status of the core's refusal of the call's caller, whose
// headers (WWW-Authenticate, Retry-After) it gives setHeader, or nil when
// Authenticate passes the caller. The answer is decoded as the core's
// answer to the call would be, so the two are the same status.
func (s *service) refusal(ctx context.Context, setHeader func(metadata.MD)) error {
	return s.answerOf(ctx, s.authenticate, setHeader)
}

// answerOf is the status h answers a request of the call without a body
// with, whose headers it gives setHeader, or nil when h writes nothing.
func (s *service) answerOf(ctx context.Context, h http.Handler, setHeader func(metadata.MD)) error {
	r, err := s.coreRequest(ctx, http.NoBody)
	if err != nil {
		return err
	}
	if v := r.Header[versionKey]; len(v) == 0 || v[0] == "" {
		r.Header[versionKey] = headerVersion10
	}
	a := &unaryAnswer{out: new(emptypb.Empty)}
	h.ServeHTTP(a, r)
	if a.status == 0 {
		return nil
	}
	if md := answerHeader(a.header); md != nil {
		setHeader(md)
	}
	return a.decode(ctx, a.out)
}
