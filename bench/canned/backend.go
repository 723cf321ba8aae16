package canned

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/internal/readall"
)

// Backend is the canned agent. It is safe for concurrent use.
type Backend struct {
	nextTask atomic.Uint64
	bufs     sync.Pool // *[]byte
}

// New returns a canned agent.
func New() *Backend {
	return &Backend{bufs: sync.Pool{New: func() any { b := make([]byte, 0, 8<<10); return &b }}}
}

// call is one parsed JSON-RPC request.
type call struct {
	dialect Dialect
	op      Op
	id      []byte // raw JSON
	taskID  []byte // a get's task; a send's is made up
	shape   StreamShape
}

var methods = map[string]struct {
	d  Dialect
	op Op
}{
	"message/send": {V03, Send}, "tasks/get": {V03, Get}, "message/stream": {V03, Stream},
	"SendMessage": {V10, Send}, "GetTask": {V10, Get}, "SendStreamingMessage": {V10, Stream},
}

// errUnknownMethod is answered as JSON-RPC -32601.
var errUnknownMethod = errors.New("method not found")

func parseCall(body []byte) (call, error) {
	r := gjson.GetManyBytes(body, "method", "id")
	m, ok := methods[r[0].Str]
	c := call{dialect: m.d, op: m.op, id: []byte(r[1].Raw)}
	if len(c.id) == 0 {
		c.id = []byte("null")
	}
	if !ok {
		return c, errUnknownMethod
	}
	switch c.op {
	case Get:
		c.taskID = []byte(gjson.GetBytes(body, "params.id").Str)
	case Stream:
		b := gjson.GetBytes(body, "params.metadata.bench")
		c.shape = StreamShape{
			Events:         int(b.Get("events").Int()),
			IntervalMicros: int(b.Get("intervalUs").Int()),
			StartMicros:    b.Get("startUs").Int(),
			Hold:           b.Get("hold").Bool(),
		}
		if c.shape.Events < 2 {
			c.shape.Events = DefaultStreamEvents
		}
	}
	return c, nil
}

func (b *Backend) newTaskID(dst []byte) []byte {
	return strconv.AppendUint(append(dst, "task-"...), b.nextTask.Add(1), 10)
}

// appendReply writes the unary JSON-RPC reply to c.
func (b *Backend) appendReply(dst []byte, c call, err error) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, c.id...)
	if err != nil {
		dst = append(dst, `,"error":{"code":-32601,"message":"Method not found"}}`...)
		return dst
	}
	dst = append(dst, `,"result":`...)
	var idBuf [32]byte
	taskID := c.taskID
	if c.op == Send {
		taskID = b.newTaskID(idBuf[:0])
	}
	switch {
	case c.dialect == V10 && c.op == Send:
		dst = sendResultV10.appendTo(dst, taskID)
	case c.dialect == V10:
		dst = taskV10.appendTo(dst, taskID)
	default:
		dst = taskV03.appendTo(dst, taskID)
	}
	return append(dst, '}')
}

// ServeHTTP answers cards on GET and JSON-RPC calls on POST.
func (b *Backend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		serveCard(w, r)
		return
	}
	bp := b.bufs.Get().(*[]byte)
	defer b.bufs.Put(bp)
	body, err := readall.Append((*bp)[:0], r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c, err := parseCall(body)
	if err == nil && c.op == Stream {
		*bp = b.stream(w, r, c, body)[:0]
		return
	}
	// The reply goes after the request, in the same pooled buffer.
	all := b.appendReply(body, c, err)
	*bp = all[:0]
	out := all[len(body):]
	h := w.Header()
	h["Content-Type"] = jsonType
	h["Content-Length"] = []string{strconv.Itoa(len(out))}
	_, _ = w.Write(out)
}

var (
	jsonType = []string{"application/json"}
	sseType  = []string{"text/event-stream"}
	noCache  = []string{"no-cache"}

	accelNoBuffering = []string{"no"}
)

func serveCard(w http.ResponseWriter, r *http.Request) {
	c := card(r.URL.Path)
	if c == nil {
		http.NotFound(w, r)
		return
	}
	w.Header()["Content-Type"] = jsonType
	_, _ = w.Write(c)
}

// stream writes the events c asks for, each flushed as it is written and
// stamped with the time it was written. The events are written after the
// request in buf, which it returns, grown.
func (b *Backend) stream(w http.ResponseWriter, r *http.Request, c call, buf []byte) []byte {
	req := len(buf)
	h := w.Header()
	h["Content-Type"] = sseType
	h["Cache-Control"] = noCache
	// What SSE servers send so that nginx passes each event on at once.
	h["X-Accel-Buffering"] = accelNoBuffering
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	var idBuf [32]byte
	taskID := b.newTaskID(idBuf[:0])
	interval := time.Duration(c.shape.IntervalMicros) * time.Microsecond
	start := time.Now()
	if c.shape.StartMicros != 0 {
		start = time.UnixMicro(c.shape.StartMicros)
	}
	for i := range c.shape.Events {
		if (i > 0 && interval > 0) || c.shape.StartMicros != 0 {
			// Paced from the start, so that slow writes do not stretch
			// the stream.
			wait := time.Until(start.Add(time.Duration(i) * interval))
			select {
			case <-time.After(wait):
			case <-r.Context().Done():
				return buf
			}
		}
		buf = appendEvent(buf[:req], c.dialect, c.id, taskID, i, c.shape.Events, time.Now().UnixNano())
		if _, err := w.Write(buf[req:]); err != nil {
			return buf
		}
		if err := rc.Flush(); err != nil {
			return buf
		}
		if c.shape.Hold {
			<-r.Context().Done()
			return buf
		}
	}
	return buf
}

// RoundTrip answers a request in memory, as ServeHTTP would over HTTP, so
// that a proxy can be measured without a network. Streams are written in
// full at once: pacing and holding need ServeHTTP.
func (b *Backend) RoundTrip(req *http.Request) (*http.Response, error) {
	res := &http.Response{
		Status: "200 OK", StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: make(http.Header, 2), Request: req,
	}
	if req.Method == http.MethodGet {
		c := card(req.URL.Path)
		if c == nil {
			res.Status, res.StatusCode = "404 Not Found", http.StatusNotFound
		}
		res.Header["Content-Type"] = jsonType
		res.Body, res.ContentLength = io.NopCloser(bytes.NewReader(c)), int64(len(c))
		return res, nil
	}
	bp := b.bufs.Get().(*[]byte)
	body, err := readall.Append((*bp)[:0], req.Body)
	req.Body.Close()
	if err != nil {
		b.bufs.Put(bp)
		return nil, err
	}
	c, err := parseCall(body)
	all := body
	switch {
	case err == nil && c.op == Stream && c.shape.Hold:
		b.bufs.Put(bp)
		return nil, fmt.Errorf("canned: RoundTrip cannot hold a stream open")
	case err == nil && c.op == Stream:
		var idBuf [32]byte
		taskID := b.newTaskID(idBuf[:0])
		now := time.Now().UnixNano()
		for i := range c.shape.Events {
			all = appendEvent(all, c.dialect, c.id, taskID, i, c.shape.Events, now)
		}
		res.Header["Content-Type"] = sseType
		res.ContentLength = -1
	default:
		all = b.appendReply(all, c, err)
		res.Header["Content-Type"] = jsonType
		res.ContentLength = int64(len(all) - len(body))
	}
	*bp = all[:0]
	res.Body = &pooledBody{Reader: bytes.NewReader(all[len(body):]), pool: &b.bufs, buf: bp}
	return res, nil
}

// pooledBody gives its buffer back when the proxy is done with it.
type pooledBody struct {
	*bytes.Reader
	pool *sync.Pool
	buf  *[]byte
}

func (p *pooledBody) Close() error {
	if p.buf != nil {
		p.pool.Put(p.buf)
		p.buf = nil
	}
	return nil
}
