package grpcbind

import (
	"context"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"time"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"

	"github.com/a2agate/gateway/dialect"
)

// DefaultMaxMessageBytes bounds a request message when Options leaves it
// unset, as the JSON-RPC endpoint bounds a request body.
const DefaultMaxMessageBytes = 4 << 20

// DefaultMaxConcurrentStreams bounds the calls one connection has open at
// once on a listener of the server's own (Serve) when Options leaves it
// unset: net/http's HTTP/2 server's own bound, which gRPC beside HTTP/1.1
// (ServeHTTP) gets, so both transports hold a connection to the same.
const DefaultMaxConcurrentStreams = 250

// Options configure a gRPC front end.
type Options struct {
	// Path is the published agent's JSON-RPC path, which the requests the
	// front end makes are addressed to ("" means "/").
	Path string
	// MaxMessageBytes bounds a request message; 0 means
	// DefaultMaxMessageBytes.
	MaxMessageBytes int64
	// MaxEventBytes bounds one event of the core's answer to a streaming
	// call, in the JSON form the core writes it; 0 means
	// DefaultMaxEventBytes. It should be at least what the core may write
	// (the agent's max_event_bytes and max_reply_bytes, translated), or
	// an event the core relays is refused here.
	MaxEventBytes int64
	// MaxConcurrentStreams bounds the calls one connection may have open
	// at once, on a listener of the server's own; 0 means
	// DefaultMaxConcurrentStreams. Through ServeHTTP, net/http's HTTP/2
	// server sets the bound.
	MaxConcurrentStreams uint32
	// ReadTimeout bounds the arrival of a call's request message, from
	// the end of its headers (server.read_timeout), on a listener of the
	// server's own; 0 means no bound. Through ServeHTTP, RequestBound
	// bounds it.
	ReadTimeout time.Duration
	// IdleTimeout closes a connection that has held no call for that long
	// (server.idle_timeout), on a listener of the server's own; 0 means
	// never. Through ServeHTTP, net/http's IdleTimeout does.
	IdleTimeout time.Duration
	// Refused, when set, is told of each call the front end answers with
	// an error itself, without the core (which counts and logs its own):
	// when it started, the dialect its caller spoke, its operation
	// (dialect.OpUnknown for a method neither service has) and the
	// error's kind. grpc-go's own refusals (a message over the size limit
	// on a listener of the server's own, say) reach no interceptor.
	Refused func(ctx context.Context, start time.Time, caller dialect.ID, op dialect.Op, kind dialect.ErrorKind)
	// Admit, when set, counts a call against its caller's bound before
	// its request message is read, on a listener of the server's own, as
	// RequestBound.Admit does through ServeHTTP.
	Admit func(*http.Request) (_ *http.Request, release func(), over bool)
	// ServerOptions are added to the server's own (its credentials, on a
	// listener of its own).
	ServerOptions []grpc.ServerOption
	// Authenticate, when set, checks the caller of a call the front end
	// refuses itself, before the core sees it (a request message that is
	// no valid protobuf, holds a field its proto does not define, or
	// cannot be forwarded): it is given a request with the call's
	// metadata as headers and no body, and answers a caller it refuses as
	// the core answers one (401, or 503 while tokens cannot be checked),
	// writing nothing for a caller it passes. A refused caller gets that
	// answer instead, so that only authenticated callers learn what is
	// wrong with their requests. A call the front end passes on is
	// authenticated by the core, not here.
	Authenticate http.Handler
}

// New returns the gRPC server of the agent whose JSON-RPC endpoint rpc
// serves: the 1.0 service lf.a2a.v1.A2AService and the 0.3 service
// a2a.v1.A2AService. Serve it on a listener of its own with Serve, or next to HTTP/1.1
// on an HTTP/2 (h2c or TLS) listener with this package's ServeHTTP: see IsGRPC.
func New(rpc http.Handler, opts Options) *grpc.Server {
	limit := opts.MaxMessageBytes
	if limit <= 0 {
		limit = DefaultMaxMessageBytes
	}
	streams := opts.MaxConcurrentStreams
	if streams == 0 {
		streams = DefaultMaxConcurrentStreams
	}
	path := opts.Path
	if path == "" {
		path = "/"
	}
	svc := &service{rpc: rpc, path: path, limit: limit, maxEvent: opts.MaxEventBytes, authenticate: opts.Authenticate, admit: opts.Admit, refused: opts.Refused}
	// refusedBeforeCore outermost: it sees the refusals of the others, and
	// of the handlers, before the core was called.
	unary := []grpc.UnaryServerInterceptor{svc.refusedBeforeCoreUnary, svc.refuseOverUnary, refuseUnknownUnary}
	streaming := []grpc.StreamServerInterceptor{svc.refusedBeforeCoreStream, svc.refuseOverStream, refuseUnknownStream, boundSends, v03FinalFlag}
	so := []grpc.ServerOption{grpc.MaxRecvMsgSize(int(min(limit, 1<<30))), grpc.ChainUnaryInterceptor(unary...),
		grpc.ChainStreamInterceptor(streaming...), grpc.MaxConcurrentStreams(streams),
		grpc.ForceServerCodecV2(newRequestCodec()), grpc.UnknownServiceHandler(unknownMethod)}
	// A call's metadata becomes the core's request's headers: bounded as
	// net/http bounds a request's headers, which it advertises beside
	// HTTP/1.1 (ServeHTTP), rather than by grpc-go's far larger default.
	so = append(so, grpc.MaxHeaderListSize(http.DefaultMaxHeaderBytes))
	// Calls run on goroutines kept between calls, whose stacks have grown
	// to what the core and protojson need, rather than on a fresh goroutine
	// each, which grows its stack by copying on every call; when all are
	// busy (open streams hold one), a call gets a fresh one. Through
	// ServeHTTP too: net/http's goroutine for the stream only relays the
	// writes, the call runs where grpc-go's serveStreams puts it. Stop
	// ends the workers.
	so = append(so, grpc.NumStreamWorkers(uint32(4*runtime.GOMAXPROCS(0))))
	if opts.ReadTimeout > 0 {
		so = append(so, grpc.InTapHandle(tapRequestBound(opts.ReadTimeout)))
	}
	if opts.IdleTimeout > 0 {
		// grpc-go keeps a connection without calls for as long as its peer
		// answers keepalive pings: any number of them, each holding its
		// goroutines and buffers, where net/http closes one at IdleTimeout.
		so = append(so, grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionIdle: opts.IdleTimeout}))
	}
	s := grpc.NewServer(append(so, opts.ServerOptions...)...)
	var reg grpc.ServiceRegistrar = s
	if svc.admit != nil {
		reg = admitting{s, svc}
	}
	a2apb.RegisterA2AServiceServer(reg, svc)
	registerV03(reg, svc)
	return s
}

// unknownMethod answers a call of a method neither service has, in the
// binding's shape (grpc-go's own answer carries no ErrorInfo).
func unknownMethod(_ any, stream grpc.ServerStream) error {
	m, _ := grpc.MethodFromServerStream(stream)
	if len(m) > 128 {
		m = m[:128] + "…"
	}
	return failure(codes.Unimplemented, dialect.ErrMethodNotFound, "the gRPC binding serves lf.a2a.v1.A2AService (A2A 1.0) and a2a.v1.A2AService (0.3); neither has "+strconv.Quote(m))
}

// Refusing returns a gRPC server that answers every call with code and
// message: for a listener with no agent the gRPC binding can serve, so that
// callers learn why rather than meet an unknown service.
func Refusing(code codes.Code, message string) *grpc.Server {
	return grpc.NewServer(grpc.UnknownServiceHandler(func(any, grpc.ServerStream) error {
		return status.Error(code, message)
	}))
}

// IsGRPC reports whether r is a gRPC call (Content-Type application/grpc or
// application/grpc+codec), which an HTTP listener hands to the gRPC server's
// ServeHTTP. The gRPC server itself refuses one that is not over HTTP/2.
func IsGRPC(r *http.Request) bool {
	// Every request on the listener asks this: the key is canonical
	// already, as net/http parsed it, where Get would canonicalize it
	// again each time.
	var ct string
	if vv := r.Header["Content-Type"]; len(vv) > 0 {
		ct = vv[0]
	}
	if len(ct) < len("application/grpc") || !strings.EqualFold(ct[:len("application/grpc")], "application/grpc") {
		return false
	}
	rest := ct[len("application/grpc"):]
	return rest == "" || rest[0] == '+' || rest[0] == ';'
}
