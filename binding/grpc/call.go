package grpcbind

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/jsonscan"
)

var (
	// toJSON writes the canonical 1.0 params: lowerCamelCase names, unset
	// fields left out (ADR-001).
	toJSON = protojson.MarshalOptions{}
	// fromJSON reads the core's answers, whose backends may add fields a
	// later proto has.
	fromJSON = protojson.UnmarshalOptions{DiscardUnknown: true}
)

// call makes the JSON-RPC call of method with req and decodes its result
// into out.
func (s *service) call(ctx context.Context, method string, req, out proto.Message) error {
	r, err := s.request(ctx, method, req, false)
	if err != nil {
		return err
	}
	a := &unaryAnswer{out: out}
	reachedCore(ctx)
	s.rpc.ServeHTTP(a, r)
	if md := answerHeader(a.header); md != nil {
		_ = grpc.SetHeader(ctx, md)
	}
	if a.replied {
		return a.err
	}
	return a.decode(ctx, out)
}

// request is the JSON-RPC request of one RPC: the canonical 1.0 body,
// addressed to the agent's path, with the caller's metadata as headers and
// the RPC's context, so the core's backend call ends with the RPC.
func (s *service) request(ctx context.Context, method string, req proto.Message, stream bool) (*http.Request, error) {
	body := make([]byte, 0, 512)
	body = append(body, `{"jsonrpc":"2.0","id":1,"method":"`...)
	body = append(body, method...)
	body = append(body, `","params":`...)
	body, err := toJSON.MarshalAppend(body, req)
	if err != nil {
		return nil, failure(codes.InvalidArgument, dialect.ErrInvalidParams, "the "+method+" request cannot be written as JSON: "+err.Error())
	}
	body = append(body, '}')
	if s.limit > 0 && int64(len(body)) > s.limit {
		// The core would refuse it naming a size the caller did not send.
		return nil, failure(codes.ResourceExhausted, dialect.ErrInvalidRequest, "the "+method+" request is "+strconv.Itoa(len(body))+
			" bytes in the JSON form the gateway forwards (raw bytes travel in base64, a third larger than on the gRPC wire), over this agent's limit of "+
			strconv.FormatInt(s.limit, 10)+" bytes (max_body_bytes): send less, or large files by URL")
	}

	r, err := s.coreRequest(ctx, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	// Canonical keys and shared, read-only values: the request allocates
	// no header of its own.
	r.Header["Content-Type"] = headerJSON
	if stream {
		r.Header["Accept"] = headerEventStream
	} else {
		r.Header["Accept"] = headerJSON
	}
	// The service name says the caller speaks 1.0; a version it names
	// itself is kept, so one the gateway does not speak is refused as for
	// JSON-RPC.
	if v := r.Header[versionKey]; len(v) == 0 || v[0] == "" {
		r.Header[versionKey] = headerVersion10
	}
	return r, nil
}

// coreRequest is a request to the core in the RPC's context, with body:
// addressed to the agent's path, with the caller's metadata as headers,
// its authority as Host and its peer as the remote address.
func (s *service) coreRequest(ctx context.Context, body io.Reader) (*http.Request, error) {
	// The context tells the core the call came through gRPC, and which
	// dialect's service it named: a 0.3 call reaches the core as 1.0.
	rctx := dialect.WithBinding(ctx, dialect.GRPC)
	if m, _ := grpc.Method(ctx); strings.HasPrefix(m, "/a2a.v1.") {
		rctx = dialect.WithCallerDialect(rctx, dialect.V03)
	}
	r, err := http.NewRequestWithContext(rctx, http.MethodPost, s.path, body)
	if err != nil {
		return nil, failure(codes.Internal, dialect.ErrInternal, "building the request failed: "+err.Error())
	}
	r.RequestURI = s.path
	r.Proto, r.ProtoMajor, r.ProtoMinor = "HTTP/2.0", 2, 0
	md, _ := metadata.FromIncomingContext(ctx)
	for k, vv := range md {
		if forwardable(k) {
			r.Header[http.CanonicalHeaderKey(k)] = vv
		}
	}
	if a := md.Get(":authority"); len(a) > 0 {
		r.Host = a[0]
	}
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		r.RemoteAddr = p.Addr.String()
		if info, ok := p.AuthInfo.(credentials.TLSInfo); ok {
			r.TLS = &info.State
		}
	}
	return r, nil
}

var (
	versionKey        = http.CanonicalHeaderKey(dialect.HeaderVersion)
	headerJSON        = []string{"application/json"}
	headerEventStream = []string{"text/event-stream"}
	headerVersion10   = []string{"1.0"}
)

// forwardable reports whether a metadata key is one of the caller's own
// headers rather than gRPC's framing: those become the JSON-RPC request's
// headers (Authorization, A2A-Version, A2A-Extensions, trace context, ...).
// Binary (-bin) values are not HTTP header text. The headers that describe
// an HTTP body (its encoding, its digest) describe none the core reads,
// whose body is the gateway's own JSON: the core would refuse the call as
// compressed.
func forwardable(k string) bool {
	switch {
	case k == "" || k[0] == ':' || strings.HasPrefix(k, "grpc-") || strings.HasSuffix(k, "-bin"):
		return false
	}
	switch k {
	case "content-type", "content-length", "te", "connection", "host", "accept", "accept-encoding",
		"content-encoding", "content-md5", "content-digest", "repr-digest", "digest":
		return false
	}
	return true
}

// unaryAnswer is the ResponseWriter a unary call's JSON-RPC answer is
// written to. The core bounds the answer's size.
type unaryAnswer struct {
	header http.Header
	status int
	body   bytes.Buffer
	// out is the RPC's response message, which WriteResult decodes into.
	out proto.Message
	// replied: WriteResult decoded the result into out, with err.
	replied bool
	err     error
}

// Header is made on first use: the core sets none on a successful unary
// call, which it answers through WriteResult.
func (a *unaryAnswer) Header() http.Header {
	if a.header == nil {
		a.header = http.Header{}
	}
	return a.header
}

// WriteResult takes a successful unary call's result, which the core hands
// over bare (proxy's resultWriter) instead of writing it in a JSON-RPC
// envelope: the answer need not search the envelope for the result's end.
// result is the core's, used only until this returns, so it is decoded
// here.
func (a *unaryAnswer) WriteResult(result []byte) {
	if a.status != 0 {
		// The core already answered otherwise: what it wrote is the answer.
		return
	}
	a.status = http.StatusOK
	a.replied = true
	a.err = decodeResult(result, a.out)
}

func (a *unaryAnswer) WriteHeader(code int) {
	if a.status == 0 && code >= 200 {
		a.status = code
	}
}

func (a *unaryAnswer) Write(p []byte) (int, error) {
	if a.status == 0 {
		a.status = http.StatusOK
	}
	return a.body.Write(p)
}

// FlushError is a no-op: the answer is decoded once the core is done.
func (a *unaryAnswer) FlushError() error { return nil }

// answerHeader is the core's headers a gRPC caller needs too: the
// challenge of a refused token, when to retry. They go in the response
// headers, where HTTP has them: HTTP/2 forbids WWW-Authenticate in trailers.
func answerHeader(h http.Header) metadata.MD {
	var md metadata.MD
	for _, k := range [...]string{"Www-Authenticate", "Retry-After"} {
		if vv := h[k]; len(vv) > 0 {
			if md == nil {
				md = metadata.MD{}
			}
			md[strings.ToLower(k)] = vv
		}
	}
	return md
}

// decode reads the JSON-RPC answer into out, or into the gRPC status of
// its error.
func (a *unaryAnswer) decode(ctx context.Context, out proto.Message) error {
	body := a.body.Bytes()
	// The core writes the envelope itself: what the result holds is
	// validated as it is decoded, so the whole answer is not validated
	// first.
	res := gjson.ParseBytes(body)
	switch {
	case a.status == 0:
		return failure(codes.Internal, dialect.ErrInternal, "the gateway wrote no answer")
	case !res.IsObject():
		return nonJSON(a.status, body)
	}
	// The result comes first: a success is read in one pass over the answer.
	if result := res.Get("result"); result.Exists() {
		return decodeResult(rawOf(body, result), out)
	}
	if e := res.Get("error"); e.Exists() {
		if err := ctx.Err(); err != nil {
			return status.FromContextError(err).Err()
		}
		return rpcStatus(e, a.status).Err()
	}
	return decodeResult(nil, out)
}

// rawOf returns r's bytes inside body, where gjson found it, without a copy.
func rawOf(body []byte, r gjson.Result) []byte {
	if r.Index > 0 && r.Index+len(r.Raw) <= len(body) {
		return body[r.Index : r.Index+len(r.Raw)]
	}
	return []byte(r.Raw)
}

// decodeResult reads a JSON-RPC result, the ProtoJSON of the RPC's
// response message, into out.
func decodeResult(raw []byte, out proto.Message) error {
	if len(raw) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		raw = emptyObject // google.protobuf.Empty
	}
	// protojson refuses a lone surrogate escape that JSON allows and the
	// gateway passes on (a caller's metadata, a backend's text): read as
	// encoding/json reads it, or the task would be unreadable over gRPC.
	raw = jsonscan.ReplaceLoneSurrogates(raw)
	if err := fromJSON.Unmarshal(raw, out); err != nil {
		return failure(codes.Internal, dialect.ErrInvalidAgentResponse,
			"the agent's answer is not a valid "+string(out.ProtoReflect().Descriptor().Name())+": "+err.Error())
	}
	return nil
}

var emptyObject = []byte("{}")

// nonJSON is the status of an answer that is no JSON-RPC response (a
// plain-text error of some layer in front of the core).
func nonJSON(httpStatus int, body []byte) error {
	code := codes.Internal
	if c, ok := codeByHTTP[httpStatus]; ok {
		code = c
	}
	text := strings.TrimSpace(string(body))
	if len(text) > 200 {
		text = text[:200] + "…"
	}
	return failure(code, dialect.ErrInternal, "the gateway answered HTTP "+http.StatusText(httpStatus)+": "+text)
}
