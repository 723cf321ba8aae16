package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"golang.org/x/net/http/httpguts"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/normalize"
)

// backend is one agent the gateway forwards to.
type backend struct {
	name    string
	url     string
	version dialect.Version
	dialect dialect.ID
	cfg     BackendConfig
	// target is url parsed once; calls go straight to transport, where an
	// http.Client would copy headers per call and follow redirects, which a
	// proxy answers instead.
	target    *url.URL
	transport http.RoundTripper
	// client is for public card fetches, which may follow redirects
	// within the backend's host (ownHostOnly).
	client *http.Client
	// answersRedirects is for get: its requests carry the backend's
	// credentials and what they fetch is published, so a redirect is
	// the backend's answer, never followed to wherever it points.
	answersRedirects *http.Client
	static           http.Header
	// timeoutCause ends a unary call past cfg.ResponseTimeout; made once,
	// not per call.
	timeoutCause error
	// traced is set when the agent exports spans: only then may a
	// request carry a span of the gateway's (injectTrace).
	traced bool
	// streamRefused is set once the backend refused a streaming send as a
	// method it does not serve (blocking_via_stream then stops trying).
	streamRefused atomic.Bool
}

func newBackend(name string, cfg BackendConfig, version dialect.Version, rt http.RoundTripper) (*backend, error) {
	target, err := url.Parse(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("backend %q: %w", name, err)
	}
	if rt == nil {
		rt = newTransport(cfg)
	}
	static := http.Header{}
	for _, h := range cfg.Headers {
		v, err := h.Value()
		if err != nil {
			return nil, err
		}
		static.Set(h.Name, v)
	}
	return &backend{
		name:      name,
		url:       cfg.URL,
		version:   version,
		dialect:   version.ID(),
		cfg:       cfg,
		target:    target,
		transport: rt,
		// Cards may redirect: the client follows, over the same pool.
		client:           &http.Client{Transport: rt},
		answersRedirects: &http.Client{Transport: rt, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		static:           static,
		timeoutCause:     &responseTimeoutError{limit: cfg.ResponseTimeout},
	}, nil
}

// maxResponseHeaderBytes bounds a backend's response head. net/http's own
// default is 10 MiB; an A2A reply's head is a few hundred bytes.
const maxResponseHeaderBytes = 1 << 20

// newTransport sizes the connection pool for a sidecar: one backend, many
// concurrent calls. There is deliberately no whole-request timeout: it would
// cut long streams; a unary call's reply is bounded by response_timeout
// instead (see post).
func newTransport(cfg BackendConfig) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: cfg.ConnectTimeout, KeepAlive: 30 * time.Second}).DialContext
	t.ResponseHeaderTimeout = cfg.ResponseHeaderTimeout
	t.MaxResponseHeaderBytes = maxResponseHeaderBytes
	t.MaxIdleConns = cfg.MaxIdleConns
	t.MaxIdleConnsPerHost = cfg.MaxIdleConns
	t.IdleConnTimeout = 90 * time.Second
	t.Proxy = nil // a sidecar talks to its neighbour, never through HTTP_PROXY
	// Every open stream holds one connection and its write buffer, so the
	// buffer is half net/http's default; yet it holds a typical send's head
	// and body together, so that the request leaves in one write system call
	// (with 1 KiB, a send just over it went out as two, and the backend woke
	// for each). A larger body is written past the buffer, unbuffered.
	t.WriteBufferSize = 2 << 10
	// The read buffer is sized for a typical unary reply to arrive in one
	// read (a 1 KiB buffer cost one more read system call per send), yet
	// half net/http's default, since every open stream holds its connection
	// and this buffer: its events are read past it, into the SSE reader's
	// own (pooled while it waits). One pool per backend keeps
	// max_idle_conns meaning what it says.
	t.ReadBufferSize = 2 << 10
	return t
}

// closeIdle closes the backend's idle connections when its agent retires.
func (b *backend) closeIdle() {
	if c, ok := b.transport.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// hopHeaders are connection-level headers a proxy must not forward (RFC 9110 §7.6.1),
// plus those the gateway sets itself toward the backend.
var hopHeaders = []string{
	"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization",
	"Te", "Trailer", "Transfer-Encoding", "Upgrade", "Host", "Content-Length", "Content-Type",
	"Accept", "Accept-Encoding", "Expect", dialect.HeaderVersion,
	dialect.HeaderExtensionsV10, dialect.HeaderExtensionsV03,
	"Content-Encoding", "Content-Md5", "Content-Digest", "Repr-Digest", "Digest", // the caller's body's, not the one the gateway writes
}

// backendRequestIDs numbers the gateway's requests to its backends.
var backendRequestIDs atomic.Uint64

// post sends one JSON-RPC request of call c to the backend. A unary call's
// whole reply, head and body, must arrive within response_timeout: the
// caller ends that bound with c.endReply once the body is closed, or for a
// first send unary does, once the reply is read (c.first). A stream has
// none; its idle timeout bounds each wait instead.
func (b *backend) post(ctx context.Context, in *http.Request, c *call, method string, params []byte, stream bool) (*http.Response, error) {
	// Every request to a backend has an id of its own, never the caller's:
	// callers reuse small ids, so a backend's stale or mixed-up response
	// (net/http can hand a response left on a kept-alive connection to the
	// next request written on it) would carry the id of another caller's
	// call and pass answersCall.
	c.sentID = strconv.AppendUint(c.sentIDBuf[:0], backendRequestIDs.Add(1), 10)
	id := c.sentID
	// Not a pooled buffer: net/http may still be writing the body after
	// RoundTrip returns (a reply that comes before the request is sent).
	body := normalize.AppendRequest(make([]byte, 0, len(params)+len(method)+len(id)+48), id, method, params)
	cancel := context.CancelFunc(nil)
	bounded := false
	if d := b.cfg.ResponseTimeout; !stream && d > 0 {
		bounded = true
		if c.first.cancel != nil {
			// A first send's own context ends at the deadline (unary
			// stops it once the reply is read).
			c.first.bound(d, b.timeoutCause)
		} else {
			ctx, cancel = context.WithTimeoutCause(ctx, d, b.timeoutCause)
		}
	}
	req := (&http.Request{
		Method:     http.MethodPost,
		URL:        b.target,
		Proto:      "HTTP/1.1",
		ProtoMajor: 1,
		ProtoMinor: 1,
		// Room for what a call sends (setHeaders) in the map's one
		// group: a larger hint allocates its table in four pieces.
		Header:        make(http.Header, 8),
		Body:          requestBody(body),
		ContentLength: int64(len(body)),
		// net/http sends a request again on a fresh connection only when
		// none of it was written to the reused one.
		GetBody: func() (io.ReadCloser, error) { return requestBody(body), nil },
		Host:    b.target.Host,
	}).WithContext(ctx)
	b.setHeaders(req, in)
	h := req.Header
	h["Content-Type"] = headerJSON
	if stream {
		h["Accept"] = headerEventStream
		// Compressed event streams are buffered by the compressor.
		h["Accept-Encoding"] = headerIdentity
	} else {
		h["Accept"] = headerJSON
	}
	res, err := b.transport.RoundTrip(req)
	if err == nil && res.StatusCode == http.StatusSwitchingProtocols {
		// net/http hands a 101's connection to whoever reads its body,
		// outside the request's context: neither response_timeout nor the
		// caller's leaving would end that read, and a backend could hold
		// the call for as long as it keeps the connection open.
		res.Body.Close()
		res, err = nil, errUnaskedSwitch
	}
	if err != nil && bounded {
		if cause := context.Cause(ctx); cause != nil && !errors.Is(err, cause) {
			err = fmt.Errorf("%w: %w", cause, err)
		}
	}
	if cancel != nil {
		if err != nil {
			cancel()
			return nil, err
		}
		// In the call, where a body wrapper stopping it on Close would be
		// one more allocation per call.
		c.replyCancel = cancel
		return res, nil
	}
	if err != nil && bounded {
		c.first.unbound()
	}
	return res, err
}

// requestBody is a backend request's body. It must be io.NopCloser over a
// *bytes.Reader, types net/http knows to be in memory: with any other
// body the transport flushes the head to the socket before it copies the
// body, two writes per request where one does.
func requestBody(b []byte) io.ReadCloser { return io.NopCloser(bytes.NewReader(b)) }

// undecoded refuses a reply whose body is still encoded: net/http asks
// for gzip on a unary call and decodes it (the header is then gone), and a
// stream is asked for as identity, so any other Content-Encoding is bytes
// the gateway cannot read, which would be reported as a reply that is not
// JSON, or a stream cut inside an event.
func (b *backend) undecoded(res *http.Response) *normalize.Error {
	ce := res.Header["Content-Encoding"]
	if len(ce) == 0 || (len(ce) == 1 && equalFoldASCII(ce[0], "identity")) {
		return nil
	}
	return normalize.Errorf(dialect.ErrInvalidAgentResponse, "backend %q answered with Content-Encoding %s, which the gateway did not ask for and does not decode (it asks for gzip on a unary call, identity on a stream)",
		b.name, truncateHeader(strings.Join(ce, ", ")))
}

// unrelayableStream refuses an event stream still encoded (undecoded), or
// that came with a status other than 200: the backend said it failed, and
// its events are not relayed as though it had not (the SDK clients refuse
// such an answer too). The status's kind is invalid_reply, not
// http_status: the events may show that the backend took the work, so a
// retry is not told the send never reached it.
func (b *backend) unrelayableStream(res *http.Response) *normalize.Error {
	if e := b.undecoded(res); e != nil || res.StatusCode == http.StatusOK {
		return e
	}
	return backendFault(backendInvalidReply, "backend %q answered HTTP %d %s with an event stream, which comes with 200 alone: its events are not relayed",
		b.name, res.StatusCode, http.StatusText(res.StatusCode))
}

// responseTimeoutError is the cause of a unary call's end when its reply
// took longer than response_timeout.
type responseTimeoutError struct{ limit time.Duration }

func (e *responseTimeoutError) Error() string {
	return fmt.Sprintf("did not finish its reply within agents[].backend.response_timeout (%s)", e.limit)
}

// endReply ends the reply deadline of the call's latest unary backend
// request (post), once its body is closed.
func (c *call) endReply() {
	if c.replyCancel != nil {
		c.replyCancel()
		c.replyCancel = nil
	}
}

// replyDeadline bounds reading body, the plain reply a stream request got
// instead of a stream, by response_timeout, as a unary reply is bounded:
// once the limit passes, the body is closed and its reads fail saying so.
// Closing the returned body stops the bound.
func (b *backend) replyDeadline(body io.ReadCloser) io.ReadCloser {
	d := b.cfg.ResponseTimeout
	if d <= 0 {
		return body
	}
	db := &deadlineBody{ReadCloser: body, limit: d}
	db.timer = time.AfterFunc(d, func() {
		db.expired.Store(true)
		body.Close()
	})
	return db
}

// deadlineBody is a reply body closed by a timer at its deadline.
type deadlineBody struct {
	io.ReadCloser
	limit   time.Duration
	timer   *time.Timer
	expired atomic.Bool
}

func (d *deadlineBody) Read(p []byte) (int, error) {
	n, err := d.ReadCloser.Read(p)
	if err != nil && d.expired.Load() {
		err = &responseTimeoutError{limit: d.limit}
	}
	return n, err
}

func (d *deadlineBody) Close() error {
	d.timer.Stop()
	return d.ReadCloser.Close()
}

// Header values the gateway sets on every call, shared: nothing on the way
// to the socket changes a header value in place.
var (
	headerJSON        = []string{"application/json"}
	headerEventStream = []string{"text/event-stream"}
	headerIdentity    = []string{"identity"}
	headerVersion10   = []string{"1.0"}
	headerHTTP        = []string{"http"}
	headerHTTPS       = []string{"https"}
	keyVersion        = http.CanonicalHeaderKey(dialect.HeaderVersion)
	keyExtensionsV10  = http.CanonicalHeaderKey(dialect.HeaderExtensionsV10)
	keyExtensionsV03  = http.CanonicalHeaderKey(dialect.HeaderExtensionsV03)
)

// firstValue is h.Get(key) for a key already in canonical form, as the
// keys of a request net/http parsed are: Get would canonicalize it again
// on every call.
func firstValue(h http.Header, key string) string {
	if vv := h[key]; len(vv) > 0 {
		return vv[0]
	}
	return ""
}

// get fetches a plain HTTP resource of the backend (the 0.2.5 extended
// card) with the call's headers; a redirect is returned as the response.
func (b *backend) get(ctx context.Context, in *http.Request, target string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, err
	}
	b.setHeaders(req, in)
	req.Header.Set("Accept", "application/json")
	return b.answersRedirects.Do(req)
}

// setHeaders copies the caller's end-to-end headers and adds the backend
// dialect's version and extension headers.
func (b *backend) setHeaders(req, in *http.Request) {
	if in != nil {
		drop := in.Header["Connection"]
		for k, vv := range in.Header {
			if skipHeader(k, drop) || (k == "Authorization" && !b.cfg.ForwardAuthorization) || spoofableHeader(k) {
				continue
			}
			req.Header[k] = vv // shared with the caller's request, which outlives this one
		}
		for _, name := range [...]string{keyExtensionsV10, keyExtensionsV03} {
			for _, v := range in.Header[name] {
				req.Header.Add(dialect.ExtensionsHeader(b.dialect), v)
			}
		}
		// Canonical keys, set directly: Header.Set would check each again.
		if host, _, err := net.SplitHostPort(in.RemoteAddr); err == nil {
			if prior := in.Header["X-Forwarded-For"]; len(prior) > 0 {
				host = strings.Join(prior, ", ") + ", " + host
			}
			// One array for both headers' values: one allocation, not two.
			vals := [...]string{host, in.Host}
			req.Header["X-Forwarded-For"] = vals[0:1:1]
			req.Header["X-Forwarded-Host"] = vals[1:2:2]
		} else {
			req.Header["X-Forwarded-Host"] = []string{in.Host}
		}
		req.Header["X-Forwarded-Proto"] = headerHTTP
		if in.TLS != nil {
			req.Header["X-Forwarded-Proto"] = headerHTTPS
		}
	}
	for k, vv := range b.static {
		req.Header[k] = vv
	}
	if b.traced {
		injectTrace(req)
	}
	if b.dialect == dialect.V10 {
		// Exactly this string: the Python 1.0 SDK rejects PascalCase methods
		// without it, and Java compares it literally.
		req.Header[keyVersion] = headerVersion10
	}
}

// spoofableHeader reports the caller's headers that claim where the
// request came from and that the gateway does not vouch for: a backend
// reading them would take the caller's word for its own address. The
// caller's X-Forwarded-For is kept, with the caller's address appended
// (httputil.ReverseProxy's rule), so its last entry is the gateway's
// word; Forwarded and X-Real-IP are dropped, and X-Forwarded-Host and
// -Proto replaced. k is in canonical form.
func spoofableHeader(k string) bool {
	return k == "Forwarded" || k == "X-Real-Ip" || k == "X-Forwarded-Host" || k == "X-Forwarded-Proto"
}

func skipHeader(k string, connectionTokens []string) bool {
	for _, h := range hopHeaders {
		if equalFoldASCII(k, h) {
			return true
		}
	}
	return httpguts.HeaderValuesContainsToken(connectionTokens, k)
}

// equalFoldASCII reports whether a and b are equal but for the case of
// ASCII letters: how field names and tokens compare (RFC 9110 §5.1), and
// how net/http compares them. strings.EqualFold folds Unicode too (the
// Kelvin sign matches k), and without a length check first it was 1% of a
// request's instructions, in the hop-by-hop filter.
func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if x == y {
			continue
		}
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// transportError describes a failed backend call for the caller: which
// backend and why, without addresses or other internals.
func (b *backend) transportError(ctx context.Context, err error) *normalize.Error {
	// The call's own context says why it ended when the transport's error
	// does not (it reports a canceled request the same way either way).
	if cause := context.Cause(ctx); cause != nil && !errors.Is(err, cause) {
		err = fmt.Errorf("%w: %w", cause, err)
	}
	if callerGone(ctx) {
		// Marked so that the call is the caller's leaving, not the
		// backend's failure, while the backend's error stays in the chain
		// (notAccepted reads it).
		err = fmt.Errorf("%w: %w", errCallerGone, err)
	}
	kind := backendUnreachable
	var ne net.Error
	var rte *responseTimeoutError
	switch {
	case errors.As(err, &rte), errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		kind = backendTimeout
	case !errors.As(err, new(*net.OpError)) && !isEOF(err) && !errors.Is(err, context.Canceled) && !errors.Is(err, ErrShuttingDown):
		// The backend answered, with something that is not HTTP.
		kind = backendInvalidReply
	}
	return &normalize.Error{Kind: dialect.ErrInternal, Message: fmt.Sprintf("backend %q %s", b.name, describeTransportError(err, b.cfg)), Err: backendFailure{kind: kind, err: err}}
}

// errUnaskedSwitch is a backend's 101 Switching Protocols: the gateway
// never asks a backend to switch protocols.
var errUnaskedSwitch = errors.New("answered 101 Switching Protocols, a protocol switch the gateway never asks for: its reply is not read")

// errCallerGone marks an error as the end of a call whose caller went away
// (callerGone): answered to nobody, and no failure of the backend's.
var errCallerGone = errors.New("the caller went away")

// callerGone reports whether ctx, a call's context or one derived from it
// that the gateway has not ended itself, ended because the caller went
// away: net/http and grpc-go cancel a call's context when its caller closes
// the connection or cancels the request, while the gateway's shutdown ends
// it with ErrShuttingDown and a deadline with context.DeadlineExceeded.
func callerGone(ctx context.Context) bool {
	return ctx.Err() != nil && errors.Is(context.Cause(ctx), context.Canceled)
}

// endOf is why ctx ended, as the cause of the error that ends a wait in
// it: marked errCallerGone when the caller went away.
func endOf(ctx context.Context) error {
	if callerGone(ctx) {
		return fmt.Errorf("%w: %w", errCallerGone, ctx.Err())
	}
	return ctx.Err()
}

// backendFailure marks an error as the backend's failure, of a kind that is
// a metric label value.
type backendFailure struct {
	kind string
	err  error
}

func (f backendFailure) Error() string {
	if f.err != nil {
		return f.err.Error()
	}
	return f.kind
}

func (f backendFailure) Unwrap() error { return f.err }

func isEOF(err error) bool { return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) }

// describeTransportError says in the caller's terms why a backend call
// failed, from the error's type alone: net/http's texts are not an API.
func describeTransportError(err error, cfg BackendConfig) string {
	var rte *responseTimeoutError
	var op *net.OpError
	var ne net.Error
	var dns *net.DNSError
	dial := errors.As(err, &op) && op.Op == "dial"
	switch {
	case errors.As(err, &rte):
		return rte.Error()
	case errors.Is(err, errUnaskedSwitch):
		return errUnaskedSwitch.Error()
	case errors.Is(err, ErrShuttingDown):
		return "did not answer before the gateway shut down"
	case errors.Is(err, errCallerGone):
		return "had not answered when the caller went away"
	case errors.Is(err, context.Canceled):
		return "did not answer before the call was ended (the caller left or the gateway is shutting down)"
	case dial && errors.As(err, &dns) && dns.IsNotFound:
		return "is unreachable: unknown host"
	case dial && errors.Is(err, syscall.ECONNREFUSED):
		return "is unreachable: connection refused"
	case dial && errors.As(err, &ne) && ne.Timeout():
		return fmt.Sprintf("could not be reached within agents[].backend.connect_timeout (%s)", cfg.ConnectTimeout)
	case dial:
		return "is unreachable"
	case errors.As(err, &ne) && ne.Timeout() && ne != context.DeadlineExceeded:
		// Past the dial, the only deadline net/http keeps is the wait
		// for the response head.
		return fmt.Sprintf("did not answer within agents[].backend.response_header_timeout (%s)", cfg.ResponseHeaderTimeout)
	case errors.Is(err, context.DeadlineExceeded):
		return "did not answer in time"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return "closed the connection"
	case isEOF(err):
		return "closed the connection before answering"
	case errors.As(err, &op):
		return "is unreachable"
	}
	// Not a network failure: net/http refused what the backend sent (a
	// malformed or oversized response head); its words say what. They
	// quote the backend's bytes (a malformed first line whole, up to the
	// head's 1 MiB limit), so they are cut as its own message would be.
	return "sent a reply that is not valid HTTP: " + cutQuote(err.Error(), maxQuotedReply)
}

// maxQuotedReply bounds what of net/http's words about a reply that is not
// HTTP reaches the caller.
const maxQuotedReply = 512

// cutQuote is s cut to at most n bytes at a character boundary, saying how
// many bytes were cut.
func cutQuote(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "… (" + strconv.Itoa(len(s)-cut) + " bytes cut)"
}
