package reliability

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/dialect"
)

// caller is an A2A client of one dialect.
type caller struct{ d dialect.ID }

var callers = []caller{{dialect.V03}, {dialect.V10}}

func (c caller) String() string { return c.d.String() }

func (c caller) method(op dialect.Op) string {
	m, _ := dialect.MethodName(c.d, op)
	return m
}

// sendParams are the params of a message send with one text part.
func (c caller) sendParams(messageID, text string) string {
	t := strconv.Quote(text)
	if c.d == dialect.V03 {
		return `{"message":{"kind":"message","messageId":"` + messageID + `","role":"user","parts":[{"kind":"text","text":` + t + `}]}}`
	}
	return `{"message":{"messageId":"` + messageID + `","role":"ROLE_USER","parts":[{"text":` + t + `}]}}`
}

// state spells a task state the caller's way.
func (c caller) state(s string) string {
	if c.d == dialect.V03 {
		return s
	}
	return "TASK_STATE_" + strings.ToUpper(strings.ReplaceAll(s, "-", "_"))
}

// target is one published agent called in one dialect.
type target struct {
	path string
	c    caller
}

func (t target) String() string { return t.c.String() + "->" + strings.TrimPrefix(t.path, "/") }

// targets are the four caller and backend dialect pairs.
var targets = []target{
	{legacyPath, callers[0]}, {legacyPath, callers[1]},
	{modernPath, callers[0]}, {modernPath, callers[1]},
}

// client calls a gateway.
type client struct {
	http *http.Client
	base string
	// header is set on every request (a token, an Idempotency-Key).
	header http.Header
}

// with returns a client sending header name: value on every request too,
// on the same connections.
func (cl *client) with(name, value string) *client {
	c := *cl
	c.header = cl.header.Clone()
	if c.header == nil {
		c.header = http.Header{}
	}
	c.header.Set(name, value)
	return &c
}

// newClient is a client of the gateway at base keeping up to conns
// connections, closed when the test ends.
func newClient(t *testing.T, base string, conns int) *client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = conns, conns
	tr.Proxy = nil
	cl := &client{http: &http.Client{Transport: tr}, base: base}
	t.Cleanup(cl.close)
	return cl
}

func (cl *client) close() { cl.http.CloseIdleConnections() }

func (cl *client) request(ctx context.Context, tg target, id string, op dialect.Op, params string) (*http.Request, error) {
	body := `{"jsonrpc":"2.0","id":` + strconv.Quote(id) + `,"method":"` + tg.c.method(op) + `","params":` + params + `}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cl.base+tg.path, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	for k, v := range cl.header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	if tg.c.d == dialect.V10 {
		req.Header.Set(dialect.HeaderVersion, "1.0")
	}
	if op.Streaming() {
		req.Header.Set("Accept", "text/event-stream")
	}
	return req, nil
}

// errTransport marks a call that got no HTTP answer at all.
var errTransport = errors.New("no answer")

// call makes one unary call and returns the JSON-RPC response, checked for
// its envelope. An error wrapping errTransport means no HTTP answer came.
func (cl *client) call(ctx context.Context, tg target, id string, op dialect.Op, params string) (gjson.Result, error) {
	req, err := cl.request(ctx, tg, id, op, params)
	if err != nil {
		return gjson.Result{}, err
	}
	res, err := cl.http.Do(req)
	if err != nil {
		return gjson.Result{}, fmt.Errorf("%w: %v", errTransport, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return gjson.Result{}, fmt.Errorf("reading the answer: %v", err)
	}
	if res.StatusCode != http.StatusOK {
		return gjson.Result{}, fmt.Errorf("HTTP %d: %.200s", res.StatusCode, b)
	}
	if ct := res.Header.Get("Content-Type"); ct != "application/json" {
		return gjson.Result{}, fmt.Errorf("Content-Type %q: %.200s", ct, b)
	}
	return envelope(b, id)
}

// envelope checks a JSON-RPC response echoes id and holds a result or an
// error.
func envelope(b []byte, id string) (gjson.Result, error) {
	if !gjson.ValidBytes(b) {
		return gjson.Result{}, fmt.Errorf("not JSON: %.200s", b)
	}
	r := gjson.ParseBytes(b)
	if r.Get("jsonrpc").Str != "2.0" || r.Get("id").Str != id {
		return r, fmt.Errorf("envelope does not echo id %q: %.200s", id, b)
	}
	if r.Get("result").Exists() == r.Get("error").Exists() {
		return r, fmt.Errorf("neither a result nor an error: %.200s", b)
	}
	return r, nil
}

// rpcError describes a JSON-RPC error response: its code and message.
type rpcError struct {
	code    int
	message string
}

func (e rpcError) Error() string { return fmt.Sprintf("JSON-RPC error %d %q", e.code, e.message) }

// asRPCError returns the error of a response, checked for the caller's
// dialect: 1.0 error data is an array of details, 0.x data never is.
func asRPCError(c caller, r gjson.Result) (rpcError, error) {
	e := r.Get("error")
	if !e.Exists() {
		return rpcError{}, fmt.Errorf("want an error, got %.200s", r.Raw)
	}
	out := rpcError{code: int(e.Get("code").Int()), message: e.Get("message").Str}
	data := e.Get("data")
	switch {
	case out.message == "":
		return out, fmt.Errorf("error without a message: %s", e.Raw)
	case c.d == dialect.V10 && data.Exists() && !data.IsArray():
		return out, fmt.Errorf("1.0 error data is not an array of details: %s", e.Raw)
	case c.d == dialect.V03 && data.IsArray():
		return out, fmt.Errorf("0.x error data is the 1.0 details array: %s", e.Raw)
	}
	return out, nil
}

// completedTask checks a send or get result is the completed task whose
// artifact answers text, in the caller's dialect, and returns it.
func completedTask(c caller, r gjson.Result, text string) (gjson.Result, error) {
	if r.Get("error").Exists() {
		e, err := asRPCError(c, r)
		if err != nil {
			return gjson.Result{}, err
		}
		return gjson.Result{}, e
	}
	task := r.Get("result")
	if c.d == dialect.V03 {
		if task.Get("kind").Str != "task" {
			return task, fmt.Errorf("0.x result is not a task: %.300s", task.Raw)
		}
	} else if t := task.Get("task"); t.Exists() {
		task = t
	} else if task.Get("status").Exists() && task.Get("id").Exists() {
		// GetTask answers the task itself.
	} else {
		return task, fmt.Errorf("1.0 result is not a task: %.300s", task.Raw)
	}
	if got := task.Get("status.state").Str; got != c.state("completed") {
		return task, fmt.Errorf("task state %q, want %q: %.300s", got, c.state("completed"), task.Raw)
	}
	if got := task.Get("artifacts.0.parts.0.text").Str; got != "done: "+text {
		return task, fmt.Errorf("artifact %q, want %q", got, "done: "+text)
	}
	if task.Get("id").Str == "" {
		return task, fmt.Errorf("task without an id: %.300s", task.Raw)
	}
	return task, nil
}

// stream is a caller's open event stream.
type stream struct {
	res  *http.Response
	rd   *bufio.Reader
	id   string
	read int64 // bytes of the body read so far
}

// openStream starts a streaming call. An error wrapping errTransport means
// no HTTP answer came.
func (cl *client) openStream(ctx context.Context, tg target, id string, op dialect.Op, params string) (*stream, error) {
	req, err := cl.request(ctx, tg, id, op, params)
	if err != nil {
		return nil, err
	}
	res, err := cl.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errTransport, err)
	}
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<10))
		res.Body.Close()
		return nil, fmt.Errorf("HTTP %d: %s", res.StatusCode, b)
	}
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		// A 1.0 server answers a failure before the stream began with a
		// plain JSON-RPC error.
		b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
		res.Body.Close()
		if r, err := envelope(b, id); ct == "application/json" && err == nil && tg.c.d == dialect.V10 && r.Get("error").Exists() {
			e, err := asRPCError(tg.c, r)
			if err != nil {
				return nil, err
			}
			return nil, e
		}
		return nil, fmt.Errorf("Content-Type %q, not an event stream: %.200s", ct, b)
	}
	s := &stream{res: res, id: id}
	s.rd = bufio.NewReaderSize(&countingReader{r: res.Body, n: &s.read}, 64<<10)
	return s, nil
}

func (s *stream) close() { s.res.Body.Close() }

// errUncleanEnd is a stream that stopped without the end of its chunked
// body: a cut connection, not an end.
var errUncleanEnd = errors.New("the stream was cut (no clean end of the body)")

// next returns the next event's JSON-RPC response. It returns io.EOF at a
// clean end of the stream, errUncleanEnd when the connection was cut.
// This is its own small SSE parser (data and comment lines, LF ends, which
// is what the gateway writes), so the gateway's reader is not its witness.
func (s *stream) next() (gjson.Result, error) {
	var data []byte
	for {
		line, err := s.rd.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A long data line: gather it whole. ReadSlice's line is the
			// reader's buffer, which the next read overwrites.
			head := append([]byte(nil), line...)
			rest, err2 := s.rd.ReadBytes('\n')
			line, err = append(head, rest...), err2
		}
		switch {
		case errors.Is(err, io.EOF) && len(line) == 0 && data == nil:
			return gjson.Result{}, io.EOF
		case errors.Is(err, io.ErrUnexpectedEOF) || (err != nil && strings.Contains(err.Error(), "connection reset")):
			return gjson.Result{}, fmt.Errorf("%w: %v", errUncleanEnd, err)
		case err != nil:
			return gjson.Result{}, fmt.Errorf("reading the stream: %w", err)
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		switch {
		case len(line) == 0:
			if data == nil {
				continue // a comment-only block
			}
			r, err := envelope(data, s.id)
			return r, err
		case line[0] == ':':
		default:
			v, ok := bytes.CutPrefix(line, []byte("data:"))
			if !ok {
				continue // event:, id:, retry: carry nothing here
			}
			v = bytes.TrimPrefix(v, []byte(" "))
			if data != nil {
				data = append(data, '\n')
			}
			data = append(data, v...)
		}
	}
}

type countingReader struct {
	r io.Reader
	n *int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	*c.n += int64(n)
	return n, err
}

// event kinds a stream carries, in either dialect.
const (
	kindTask     = "task"
	kindStatus   = "status-update"
	kindArtifact = "artifact-update"
	kindMessage  = "message"
)

// eventKind names a stream event's result and returns its body.
func eventKind(c caller, r gjson.Result) (string, gjson.Result) {
	res := r.Get("result")
	if c.d == dialect.V03 {
		return res.Get("kind").Str, res
	}
	for _, k := range []struct{ key, kind string }{{"task", kindTask}, {"statusUpdate", kindStatus}, {"artifactUpdate", kindArtifact}, {"message", kindMessage}} {
		if v := res.Get(k.key); v.Exists() {
			return k.kind, v
		}
	}
	return "", res
}

// finalCompleted reports whether an event is the status update that ends a
// stream with the task completed.
func finalCompleted(c caller, r gjson.Result) bool {
	kind, ev := eventKind(c, r)
	if kind != kindStatus || ev.Get("status.state").Str != c.state("completed") {
		return false
	}
	return c.d == dialect.V10 || ev.Get("final").Bool()
}

// completedStream reads a stream to its end and checks it tells the task's
// whole story in the caller's dialect: the artifact answering text, the
// completed status last, then a clean end.
func completedStream(c caller, s *stream, text string) (events int, err error) {
	var last gjson.Result
	artifact := false
	for {
		r, err := s.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return events, err
		}
		if r.Get("error").Exists() {
			e, err := asRPCError(c, r)
			if err != nil {
				return events, err
			}
			return events, e
		}
		events++
		kind, ev := eventKind(c, r)
		if kind == "" {
			return events, fmt.Errorf("event of no known kind: %.300s", r.Raw)
		}
		if kind == kindArtifact && ev.Get("artifact.parts.0.text").Str == "done: "+text {
			artifact = true
		}
		last = r
	}
	switch {
	case events == 0:
		return 0, errors.New("the stream ended without an event")
	case !artifact:
		return events, fmt.Errorf("no artifact answering %q", text)
	case !finalCompleted(c, last):
		return events, fmt.Errorf("the last event is not the completed status: %.300s", last.Raw)
	}
	return events, nil
}

// sendAndCheck makes a blocking send of text and checks the completed task.
func (cl *client) sendAndCheck(ctx context.Context, tg target, id, text string) (gjson.Result, error) {
	r, err := cl.call(ctx, tg, id, dialect.SendMessage, tg.c.sendParams("m-"+id, text))
	if err != nil {
		return r, err
	}
	return completedTask(tg.c, r, text)
}

// streamAndCheck streams a message of text and checks the whole stream.
func (cl *client) streamAndCheck(ctx context.Context, tg target, id, text string) (time.Duration, error) {
	start := time.Now()
	s, err := cl.openStream(ctx, tg, id, dialect.SendStreamingMessage, tg.c.sendParams("m-"+id, text))
	if err != nil {
		return 0, err
	}
	defer s.close()
	_, err = completedStream(tg.c, s, text)
	return time.Since(start), err
}
