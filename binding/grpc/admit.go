package grpcbind

import (
	"context"
	"net/http"
	"slices"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// On a listener of the server's own, grpc-go's transport reads a call's
// request message, and the core counts the call against its caller's bound
// only once it has it: a caller could hold any number of calls waiting for
// their messages, uncounted, each until server.read_timeout. The tap, the
// transport's one hook before that, runs under the connection's lock, but
// grpc-go (v1.84) calls a method's handler before it reads the message: a
// unary method's handler is given the read as its dec function
// (Server.wrapUnaryHandler), a streaming one reads it with RecvMsg. So each
// handler is wrapped to count the call first (Options.Admit), as ServeHTTP
// does before handing a call to grpc-go.

// admitting registers services with every handler wrapped by s.admitUnary
// or s.admitStream.
type admitting struct {
	grpc.ServiceRegistrar
	s *service
}

func (r admitting) RegisterService(sd *grpc.ServiceDesc, impl any) {
	d := *sd
	d.Methods, d.Streams = slices.Clone(sd.Methods), slices.Clone(sd.Streams)
	for i := range d.Methods {
		d.Methods[i].Handler = r.s.admitUnary(d.Methods[i].Handler)
	}
	for i := range d.Streams {
		d.Streams[i].Handler = r.s.admitStream(d.Streams[i].Handler)
	}
	r.ServiceRegistrar.RegisterService(&d, impl)
}

func (s *service) admitUnary(h grpc.MethodHandler) grpc.MethodHandler {
	return func(srv any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
		ctx, release, over, err := s.admitCall(ctx)
		if err != nil {
			return nil, err
		}
		defer release()
		if over {
			return nil, s.answerOf(ctx, s.rpc, func(md metadata.MD) { _ = grpc.SetHeader(ctx, md) })
		}
		return h(srv, ctx, dec, interceptor)
	}
}

func (s *service) admitStream(h grpc.StreamHandler) grpc.StreamHandler {
	return func(srv any, ss grpc.ServerStream) error {
		ctx, release, over, err := s.admitCall(ss.Context())
		if err != nil {
			return err
		}
		defer release()
		if over {
			reachedCore(ctx)
			return s.answerOf(ctx, s.rpc, func(md metadata.MD) { _ = ss.SetHeader(md) })
		}
		return h(srv, contextStream{ss, ctx})
	}
}

// admitCall counts the call of ctx with Options.Admit, given the request
// the core would get without its body: the context returned carries the
// mark that tells the core the call is counted (or over its caller's
// bound, when over), and the call runs in it until release.
func (s *service) admitCall(ctx context.Context) (_ context.Context, release func(), over bool, _ error) {
	r, err := s.coreRequest(ctx, http.NoBody)
	if err != nil {
		return nil, nil, false, err
	}
	r, release, over = s.admit(r)
	return r.Context(), release, over, nil
}
