package rest

import (
	"bytes"
	"errors"
	"maps"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/readall"
)

// DefaultMaxBodyBytes bounds a request body when Options leaves it unset.
const DefaultMaxBodyBytes = 4 << 20

// Options configure a REST front end.
type Options struct {
	// Prefix is the published agent's path without its trailing slash ("" for
	// the root). The routes are below it, and the JSON-RPC requests the
	// front end makes are addressed to it.
	Prefix string
	// MaxBodyBytes bounds a REST request body; 0 means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// ReadTimeout bounds reading a request's body, from the end of its
	// headers (server.read_timeout); 0 means no bound of its own.
	ReadTimeout time.Duration
	// Authenticate, when set, checks the caller of a request the front end
	// is about to refuse for its Content-Type, body or query: a caller it
	// refuses is answered that refusal instead, so that only authenticated
	// callers learn what is wrong with their requests. A request the front
	// end passes on is authenticated by the core, not here.
	Authenticate func(*http.Request) *Refusal
	// Admit, when set, counts the call against its caller's bound before
	// its body is read, which the core cannot do for a body the front end
	// reads first: it returns the request to hand on, marked so that the
	// core does not count the call again, and the release of the count.
	// over says the caller has too many calls in flight: its body is not
	// read, and the core, told so by the mark, refuses the call.
	Admit func(*http.Request) (_ *http.Request, release func(), over bool)
	// Refused, when set, is told of each call the front end answers with
	// an error itself, without the core (which counts and logs its own):
	// when it started, the dialect its caller spoke, its operation
	// (dialect.OpUnknown for an unknown route) and the error's kind.
	Refused func(r *http.Request, start time.Time, caller dialect.ID, op dialect.Op, kind dialect.ErrorKind)
}

// Refusal is a caller refused by Options.Authenticate: the HTTP status
// (401, or 503 when tokens cannot be checked), the error's kind and
// message, and the headers of the answer (WWW-Authenticate, Retry-After).
type Refusal struct {
	Status  int
	Kind    dialect.ErrorKind
	Message string
	Header  http.Header
}

type handler struct {
	rpc     http.Handler
	prefix  string
	rpcPath string
	rpcURI  string // rpcPath as a RequestURI
	limit   int64
	// readTimeout is Options.ReadTimeout.
	readTimeout  time.Duration
	authenticate func(*http.Request) *Refusal
	admit        func(*http.Request) (*http.Request, func(), bool)
	refused      func(*http.Request, time.Time, dialect.ID, dialect.Op, dialect.ErrorKind)
}

// NewHandler returns the HTTP+JSON binding of the agent whose JSON-RPC
// endpoint rpc serves. Every answer, errors included, is in the REST wire
// shape: an unknown route or verb too gets a google.rpc.Status body.
func NewHandler(rpc http.Handler, opts Options) http.Handler {
	h := &handler{rpc: rpc, prefix: strings.TrimSuffix(opts.Prefix, "/"), limit: opts.MaxBodyBytes, readTimeout: opts.ReadTimeout, authenticate: opts.Authenticate, admit: opts.Admit, refused: opts.Refused}
	h.rpcPath = h.prefix
	if h.rpcPath == "" {
		h.rpcPath = "/"
	}
	h.rpcURI = (&url.URL{Path: h.rpcPath}).RequestURI()
	if h.limit <= 0 {
		h.limit = DefaultMaxBodyBytes
	}
	return h
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	p := r.URL.EscapedPath()
	v03, method := false, "" // method: the route's operation, once known
	write := func(e *apiError) {
		e.v03 = v03
		e.write(w)
		if h.refused != nil {
			caller := dialect.V10
			if v03 {
				caller = dialect.V03
			}
			_, op, _ := dialect.Lookup(method)
			row, _ := dialect.ErrorByCode(e.code)
			h.refused(r, start, caller, op, row.Kind)
		}
	}
	rel, ok := strings.CutPrefix(p, h.prefix)
	if !ok {
		write(unknownRoute(p))
		return
	}
	v03 = strings.HasPrefix(rel, "/v1/")
	rt, apiErr := parseRoute(r.Method, rel)
	if apiErr != nil {
		write(apiErr)
		return
	}
	method = rt.op.method
	// From here on the route is an operation: a request error is answered
	// to an authenticated caller only.
	fail := func(e *apiError) {
		if h.authenticate != nil {
			if refused := h.authenticate(r); refused != nil {
				maps.Copy(w.Header(), refused.Header)
				e = newError(refused.Status, refused.Kind, refused.Message)
			}
		}
		write(e)
	}
	over := false
	if h.admit != nil {
		var release func()
		r, release, over = h.admit(r)
		defer release()
	}
	var body []byte
	switch {
	case over:
		// The core refuses the call for its caller's calls in flight:
		// nothing of the request is read or judged.
		rt.op = &operation{method: rt.op.method, stream: rt.op.stream, v03: rt.op.v03}
	case rt.op.body:
		if !jsonContentType(r.Header) {
			fail(newError(http.StatusUnsupportedMediaType, dialect.ErrInvalidRequest,
				"Content-Type "+strconv.Quote(truncate(r.Header.Get("Content-Type"), 64))+" is not accepted: send application/json or application/a2a+json, in UTF-8"))
			return
		}
		if ce := r.Header["Content-Encoding"]; !readall.IdentityEncoding(ce) {
			fail(newError(http.StatusUnsupportedMediaType, dialect.ErrInvalidRequest,
				"Content-Encoding "+strconv.Quote(truncate(strings.Join(ce, ", "), 64))+" is not accepted: send the request body uncompressed"))
			return
		}
		if body, apiErr = h.readBody(w, r); apiErr != nil {
			fail(apiErr)
			return
		}
	case r.Body != nil && r.Body != http.NoBody:
		// The operation's fields come from the path and query: a body's
		// would be dropped unread. One that says nothing (a2a-go sends
		// "null" on every GET) is let through.
		b, apiErr := h.readBody(w, r)
		if apiErr == nil && !emptyBody(b) {
			apiErr = newError(http.StatusBadRequest, dialect.ErrInvalidRequest,
				r.Method+" "+truncate(rel, 64)+" takes no request body: send its fields in the path and the query")
		}
		if apiErr != nil {
			fail(apiErr)
			return
		}
	}
	rawQuery := r.URL.RawQuery
	if over {
		rawQuery = ""
	}
	query, version, apiErr := cutVersion(rawQuery)
	if hv := r.Header[versionKey]; apiErr == nil && version != "" && len(hv) > 0 && hv[0] != "" && hv[0] != version {
		// The header's would be taken, the query's dropped unread.
		apiErr = newError(http.StatusBadRequest, dialect.ErrInvalidRequest, "A2A-Version is "+strconv.Quote(truncate(hv[0], 32))+
			" in the header and "+strconv.Quote(truncate(version, 32))+" in the query: name one version")
	}
	if apiErr != nil {
		fail(apiErr)
		return
	}
	params, apiErr := buildParams(rt, body, query)
	if apiErr != nil {
		fail(apiErr)
		return
	}
	x := &exchange{answer: answer{w: w, unary: unaryPool.Get().(*bytes.Buffer)}}
	a := &x.answer
	a.v03 = rt.op.v03
	if rt.op.v03 {
		method := rt.op.method
		a.reshape = func(result []byte) ([]byte, error) {
			if method == "GetExtendedAgentCard" {
				return v03Card(result)
			}
			in, err := decodeObject(result)
			if err != nil {
				return nil, err
			}
			return encode(v03Result(method, in)), nil
		}
	}
	// Deferred, so the relay goroutine of a stream ends even if the core
	// panics (http.ErrAbortHandler included).
	defer a.finish()
	h.rpc.ServeHTTP(a, h.rpcRequest(r, x, rt, envelope(rt.op.method, params), version))
}

// exchange is what one call hands the core, in one allocation: the answer
// it writes to, and the URL and body of the request it reads.
type exchange struct {
	answer
	url  url.URL
	body rpcBody
}

// rpcBody is the JSON-RPC request's body.
type rpcBody struct{ bytes.Reader }

func (*rpcBody) Close() error { return nil }

func (h *handler) readBody(w http.ResponseWriter, r *http.Request) ([]byte, *apiError) {
	tooLarge := func() *apiError {
		return newError(http.StatusRequestEntityTooLarge, dialect.ErrInvalidRequest,
			"the request body is larger than this agent's limit of "+strconv.FormatInt(h.limit, 10)+" bytes")
	}
	if r.ContentLength > h.limit {
		return nil, tooLarge()
	}
	// As the JSON-RPC core does: a caller that never finishes its body
	// would hold the call open.
	deadline := readall.StartBodyDeadline(w, h.readTimeout)
	// A buffer one byte longer than the declared length, so that a body of
	// that length fills it without growing it.
	b, err := readall.Append(make([]byte, 0, min(max(r.ContentLength, 0), h.limit)+1), http.MaxBytesReader(w, r.Body, h.limit))
	deadline.End(err)
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return nil, tooLarge()
	case readall.Expired(err):
		return nil, newError(http.StatusBadRequest, dialect.ErrInvalidRequest, "the request body did not arrive within server.read_timeout ("+h.readTimeout.String()+")")
	case err != nil:
		return nil, newError(http.StatusBadRequest, dialect.ErrInvalidRequest, "reading the request body failed: "+err.Error())
	}
	return b, nil
}

// rpcRequest is the caller's request made into the JSON-RPC call of the
// same operation: same context and headers (Authorization included), the
// canonical 1.0 body, addressed to the agent's JSON-RPC path.
func (h *handler) rpcRequest(r *http.Request, x *exchange, rt route, body []byte, version string) *http.Request {
	// A shallow copy (WithContext) with its own header and URL: nothing
	// else of the caller's request is changed, and Clone's deep copies cost
	// more than the rest of the front end.
	// The context tells the core the call came through this binding (and,
	// for 0.3, the dialect the caller spoke): nothing the caller sends can.
	ctx := dialect.WithBinding(r.Context(), dialect.HTTPJSON)
	if rt.op.v03 {
		ctx = dialect.WithCallerDialect(ctx, dialect.V03)
	}
	req := r.WithContext(ctx)
	// A map of its own whose values are the caller's, shared and read
	// only (as the core shares them with the backend's request): the keys
	// rewritten below get slices of their own.
	req.Header = maps.Clone(r.Header)
	if req.Header == nil {
		req.Header = http.Header{}
	}
	req.Method = http.MethodPost
	x.url = *r.URL
	x.url.Path, x.url.RawPath, x.url.RawQuery = h.rpcPath, "", ""
	req.URL = &x.url
	req.RequestURI = h.rpcURI
	x.body.Reset(body)
	req.Body = &x.body
	req.GetBody = nil
	req.ContentLength = int64(len(body))
	req.TransferEncoding = nil
	// The keys are written canonical and the values shared, read-only, so
	// that the rewrite allocates no header of its own.
	delete(req.Header, "Content-Length")
	delete(req.Header, "Content-Encoding") // the body's, checked above; a bodiless call's means nothing
	req.Header["Content-Type"] = headerJSON
	if rt.op.stream {
		req.Header["Accept"] = headerEventStream
	} else {
		req.Header["Accept"] = headerJSON
	}
	// The route says the caller speaks 1.0; a version it names itself (in
	// the header, else the query) is kept, so one the gateway does not
	// speak is refused as for JSON-RPC. The call the core gets is 1.0
	// whatever 0.3 caller made it.
	switch {
	case rt.op.v03:
		req.Header[versionKey] = headerVersion10
	case len(req.Header[versionKey]) > 0 && req.Header[versionKey][0] != "":
	case version != "":
		req.Header[versionKey] = []string{version}
	default:
		req.Header[versionKey] = headerVersion10
	}
	return req
}

var (
	versionKey        = http.CanonicalHeaderKey(dialect.HeaderVersion)
	headerEventStream = []string{"text/event-stream"}
	headerVersion10   = []string{"1.0"}
)

// NotServed answers every request with a google.rpc.Status NOT_FOUND (404)
// carrying message: for an agent whose HTTP+JSON binding is not published,
// so that a REST client learns why rather than meet a plain-text 404.
func NotServed(message string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		WriteNotFound(w, message, false)
	})
}

// NoAgent answers a path below no published agent's: 404 in the binding's
// form (the 0.3 routes' below /v1/), where Go's ServeMux would answer
// plain text that no SDK client reads.
func NoAgent() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.EscapedPath()
		WriteNotFound(w, "no agent is served at "+truncate(p, 128), strings.HasPrefix(p, "/v1/"))
	})
}

// WriteNotFound answers 404 NOT_FOUND in the binding's form, carrying
// message: a google.rpc.Status, or on the 0.3 routes (v03) the JSON-RPC
// error object their clients read.
func WriteNotFound(w http.ResponseWriter, message string, v03 bool) {
	e := newError(http.StatusNotFound, dialect.ErrMethodNotFound, message)
	e.status = "NOT_FOUND"
	e.v03 = v03
	e.write(w)
}
