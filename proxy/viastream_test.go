package proxy

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/dialect"
)

// scriptBackend answers a send with one task script, from normalize's
// testdata/sendfold (the folds' goldens): a blocking send with the task the
// script ends in, a streaming send with the script's events. So the two
// ways to serve a blocking send can be compared on the same work. It
// counts the calls by method and serves http.Handler and http.RoundTripper.
type scriptBackend struct {
	d      dialect.ID
	answer []byte   // the blocking send's result
	events [][]byte // the stream's results
	calls  map[string]*atomic.Int64
	tasks  atomic.Int64 // numbers each send's task
}

func newScriptBackend(tb testing.TB, script string, d dialect.ID) *scriptBackend {
	tb.Helper()
	tag := "v03"
	if d == dialect.V10 {
		tag = "v10"
	}
	dir := filepath.Join("..", "normalize", "testdata", "sendfold")
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			tb.Fatal(err)
		}
		return bytes.TrimSpace(b)
	}
	s := &scriptBackend{d: d, answer: read(script + ".answer." + tag + ".json"), calls: map[string]*atomic.Int64{}}
	s.events = bytes.Split(read(script+".events."+tag+".jsonl"), []byte("\n"))
	for _, op := range []dialect.Op{dialect.SendMessage, dialect.SendStreamingMessage} {
		m, _ := dialect.MethodName(d, op)
		s.calls[m] = new(atomic.Int64)
	}
	return s
}

func (s *scriptBackend) count(op dialect.Op) int64 {
	m, _ := dialect.MethodName(s.d, op)
	return s.calls[m].Load()
}

// reply is the response to a request body, and whether it is a stream.
func (s *scriptBackend) reply(body []byte) ([]byte, bool) {
	r := gjson.GetManyBytes(body, "method", "id")
	if n := s.calls[r[0].Str]; n != nil {
		n.Add(1)
	}
	head := append(append([]byte(`{"jsonrpc":"2.0","id":`), r[1].Raw...), `,"result":`...)
	if get, _ := dialect.MethodName(s.d, dialect.GetTask); r[0].Str == get {
		// The task as the script ends it (a retry's poll).
		task := s.answer
		if s.d == dialect.V10 {
			task = []byte(gjson.GetBytes(task, "task").Raw)
		}
		id := gjson.AppendJSONString(nil, gjson.GetBytes(body, "params.id").Str)
		return append(append(head, bytes.ReplaceAll(task, scriptTaskID, id)...), '}'), false
	}
	// Each send makes a task of its own, as an agent's do.
	id := []byte(`"t` + strconv.FormatInt(s.tasks.Add(1), 10) + `"`)
	stream, _ := dialect.MethodName(s.d, dialect.SendStreamingMessage)
	if r[0].Str != stream {
		return append(append(head, bytes.ReplaceAll(s.answer, scriptTaskID, id)...), '}'), false
	}
	var out []byte
	for _, ev := range s.events {
		out = append(append(append(append(out, "data: "...), head...), bytes.ReplaceAll(ev, scriptTaskID, id)...), "}\n\n"...)
	}
	return out, true
}

// scriptTaskID is the task id the scripts are written with.
var scriptTaskID = []byte(`"t1"`)

func (s *scriptBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.NotFound(w, r) // no card
		return
	}
	body, _ := io.ReadAll(r.Body)
	out, stream := s.reply(body)
	w.Header().Set("Content-Type", map[bool]string{false: "application/json", true: "text/event-stream"}[stream])
	_, _ = w.Write(out)
}

func (s *scriptBackend) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodPost {
		return &http.Response{StatusCode: http.StatusNotFound, Body: http.NoBody, Header: http.Header{}, Request: req}, nil
	}
	body, _ := io.ReadAll(req.Body)
	out, stream := s.reply(body)
	ct := "application/json"
	if stream {
		ct = "text/event-stream"
	}
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {ct}}, ContentLength: int64(len(out)),
		Body: io.NopCloser(bytes.NewReader(out)), Request: req}, nil
}

func viaStreamOn(cfg *AgentConfig)  { cfg.Backend.BlockingViaStream = true }
func viaStreamOff(cfg *AgentConfig) { cfg.Backend.BlockingViaStream = false }

var scriptVersions = []dialect.Version{dialect.Version03, dialect.Version10}

// TestViaStreamAnswersAsPlainBlocking: the same script, through a gateway
// that serves blocking sends plainly and one that serves them from the
// stream, answers each caller the same task (its artifact appended from
// chunks), or the same direct message; the second backend saw streaming
// sends only.
func TestViaStreamAnswersAsPlainBlocking(t *testing.T) {
	for _, script := range []string{"chunked", "message", "input_required"} {
		for _, v := range scriptVersions {
			for _, c := range callers {
				t.Run(script+"/"+c.d.String()+"-to-"+string(v), func(t *testing.T) {
					t.Parallel()
					plainB, streamB := newScriptBackend(t, script, v.ID()), newScriptBackend(t, script, v.ID())
					plain, stream := newGateway(t, plainB, v, viaStreamOff), newGateway(t, streamB, v, viaStreamOn)
					params := c.send("m1", c.text("write the report"), "")
					want := mustResult(t, sendResult(t, plain, c, params))
					got := mustResult(t, sendResult(t, stream, c, params))
					if !jsonSame(want.Raw, got.Raw) {
						t.Errorf("via the stream:\n got %s\nwant %s", got.Raw, want.Raw)
					}
					if plainB.count(dialect.SendStreamingMessage) != 0 || plainB.count(dialect.SendMessage) != 1 {
						t.Errorf("plain: the backend saw %d blocking and %d streaming sends", plainB.count(dialect.SendMessage), plainB.count(dialect.SendStreamingMessage))
					}
					if streamB.count(dialect.SendStreamingMessage) != 1 || streamB.count(dialect.SendMessage) != 0 {
						t.Errorf("via the stream: the backend saw %d blocking and %d streaming sends", streamB.count(dialect.SendMessage), streamB.count(dialect.SendStreamingMessage))
					}
					// The retry of either is answered from its first send.
					if again := mustResult(t, sendResult(t, stream, c, params)); script == "message" && !jsonSame(again.Raw, got.Raw) {
						t.Errorf("the retry of a direct message: %s, want %s", again.Raw, got.Raw)
					}
					if n := streamB.count(dialect.SendStreamingMessage) + streamB.count(dialect.SendMessage); n != 1 {
						t.Errorf("the retry reached the backend: %d sends", n)
					}
				})
			}
		}
	}
}

// TestViaStreamRetryAfterCallerGaveUp: with blocking_via_stream on, a
// blocking send of a held task whose caller gives up runs on, and its retry
// with the same message id gets the completed task; the backend saw one
// message, as a streaming send.
func TestViaStreamRetryAfterCallerGaveUp(t *testing.T) {
	forEachRetryPair(t, func(t *testing.T, rc *retryCase) {
		g := newGateway(t, rc.backend, rc.b.version, viaStreamOn)
		c := rc.c
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, _, err := g.postCtx(ctx, rpc(c.method(dialect.SendMessage), c.send("m1", c.text("wait"), "")), g.hdr(c.d)...)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("the held send was answered: %v", err)
		}
		rc.release()
		wantCompleted(t, c, sendResult(t, g, c, c.send("m1", c.text("wait"), "")))
		wantSends(t, rc, 1)
	})
}

// TestViaStreamRetryLearnsTaskWhileRunning: the retry of a blocking send
// still running at the backend learns its task from the stream's first
// event: a non-blocking retry gets it, working, while the backend holds it,
// where with a plain blocking send it would wait for the first send's
// answer; the first send then answers the same task completed.
func TestViaStreamRetryLearnsTaskWhileRunning(t *testing.T) {
	forEachRetryPair(t, func(t *testing.T, rc *retryCase) {
		g := newGateway(t, rc.backend, rc.b.version, viaStreamOn)
		c := rc.c
		first := make(chan gjson.Result, 1)
		go func() { first <- sendResult(t, g, c, c.send("m1", c.text("wait"), "")) }()
		<-rc.backend.arrived
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, body, err := g.postCtx(ctx, rpc(c.method(dialect.SendMessage), c.send("m1", c.text("wait"), c.nonBlocking())), g.hdr(c.d)...)
		if err != nil {
			t.Fatalf("the retry learned nothing while the task was held: %v", err)
		}
		task := c.task(t, mustResult(t, gjson.ParseBytes(body)))
		if s := task.Get("status.state").Str; s != c.state("working") && s != c.state("submitted") {
			t.Fatalf("the retry got the held task %s: %s", s, task.Raw)
		}
		rc.release()
		done := wantCompleted(t, c, <-first)
		if done.Get("id").Str != task.Get("id").Str {
			t.Fatalf("the retry learned task %s, the send answered %s", task.Get("id").Str, done.Get("id").Str)
		}
		wantSends(t, rc, 1)
	})
}

// TestViaStreamFallsBack: a non-blocking send, and a backend whose card
// says it does not stream, get plain blocking calls; a backend that
// refuses the streaming send as a method it does not serve gets the send
// again as a plain one, and only plain ones after.
func TestViaStreamFallsBack(t *testing.T) {
	c := caller{dialect.V10}
	t.Run("non-blocking", func(t *testing.T) {
		b := newScriptBackend(t, "chunked", dialect.V10)
		g := newGateway(t, b, dialect.Version10, viaStreamOn)
		mustResult(t, sendResult(t, g, c, c.send("m1", c.text("x"), c.nonBlocking())))
		if b.count(dialect.SendMessage) != 1 || b.count(dialect.SendStreamingMessage) != 0 {
			t.Fatalf("%d blocking, %d streaming sends", b.count(dialect.SendMessage), b.count(dialect.SendStreamingMessage))
		}
	})
	t.Run("card", func(t *testing.T) {
		b := newScriptBackend(t, "chunked", dialect.V10)
		card := `{"name":"s","description":"d","version":"1","supportedInterfaces":[{"url":"http://x/","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],"capabilities":{"streaming":false},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[{"id":"work","name":"w","description":"d","tags":["t"]}]}`
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet {
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, card)
				return
			}
			b.ServeHTTP(w, r)
		})
		g := newGateway(t, h, dialect.Version10, viaStreamOn)
		if ready, err := g.agent.CardStatus(); !ready {
			t.Fatalf("no card: %v", err)
		}
		mustResult(t, sendResult(t, g, c, c.send("m1", c.text("x"), "")))
		if b.count(dialect.SendMessage) != 1 || b.count(dialect.SendStreamingMessage) != 0 {
			t.Fatalf("%d blocking, %d streaming sends", b.count(dialect.SendMessage), b.count(dialect.SendStreamingMessage))
		}
	})
	t.Run("refused", func(t *testing.T) {
		b := newScriptBackend(t, "chunked", dialect.V10)
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			if gjson.GetBytes(body, "method").Str == "SendStreamingMessage" {
				b.calls["SendStreamingMessage"].Add(1)
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+gjson.GetBytes(body, "id").Raw+`,"error":{"code":-32004,"message":"streaming is not supported"}}`)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			b.ServeHTTP(w, r)
		})
		g := newGateway(t, h, dialect.Version10, viaStreamOn)
		for _, id := range []string{"m1", "m2"} {
			wantTaskState(t, c, mustResult(t, sendResult(t, g, c, c.send(id, c.text("x"), ""))), "completed")
		}
		if b.count(dialect.SendMessage) != 2 || b.count(dialect.SendStreamingMessage) != 1 {
			t.Fatalf("%d blocking, %d streaming sends", b.count(dialect.SendMessage), b.count(dialect.SendStreamingMessage))
		}
	})
}

func wantTaskState(t *testing.T, c caller, result gjson.Result, state string) {
	t.Helper()
	if got := c.task(t, result).Get("status.state").Str; got != c.state(state) {
		t.Fatalf("state %s, want %s: %s", got, c.state(state), result.Raw)
	}
}

// TestViaStreamEndsWithoutFinal: a stream that ends before a final or
// interrupted state answers the task as it last stood; one that ends
// before naming a task is the backend's failure, as a cut reply is.
func TestViaStreamEndsWithoutFinal(t *testing.T) {
	c := caller{dialect.V10}
	b := newScriptBackend(t, "chunked", dialect.V10)
	b.events = b.events[:4] // working, the artifact in two chunks
	g := newGateway(t, b, dialect.Version10, viaStreamOn)
	res := mustResult(t, sendResult(t, g, c, c.send("m1", c.text("x"), "")))
	wantTaskState(t, c, res, "working")
	if parts := res.Get("task.artifacts.0.parts.#").Int(); parts != 2 {
		t.Fatalf("the artifact has %d parts, want its two chunks: %s", parts, res.Raw)
	}
	b.events = nil
	wantErrorSaying(t, sendResult(t, g, c, c.send("m2", c.text("x"), "")), dialect.V10, -32603, "ended the stream before it named a task")
}

// BenchmarkBlockingViaStream measures a blocking send of the chunked
// script served plainly (off) and from the backend's stream (on), for each
// caller and backend dialect.
//
//	go test -run '^$' -bench BlockingViaStream -benchmem ./proxy
func BenchmarkBlockingViaStream(b *testing.B) {
	for _, v := range scriptVersions {
		for _, c := range callers {
			for _, on := range []bool{false, true} {
				b.Run(c.d.String()+"-to-"+string(v)+"/"+map[bool]string{false: "off", true: "on"}[on], func(b *testing.B) {
					newViaStreamBench(b, v, c, on).loop(b)
				})
			}
		}
	}
}

func newViaStreamBench(tb testing.TB, v dialect.Version, c caller, on bool) *benchHarness {
	tb.Helper()
	cfg := AgentConfig{Name: "bench", Path: "/", PublicURL: "http://gateway.bench/",
		Backend: BackendConfig{URL: "http://backend.bench/", Dialect: v, BlockingViaStream: on}}
	a := newValidAgent(tb, cfg, Options{Transport: newScriptBackend(tb, "chunked", v.ID()), Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	h := &benchHarness{gw: soleGateway(tb, a), w: &benchWriter{h: http.Header{}}}
	var err error
	if h.req, err = http.NewRequest(http.MethodPost, "http://gateway.bench/", nil); err != nil {
		tb.Fatal(err)
	}
	h.req.Header = http.Header{"Content-Type": {"application/json"}}
	if c.d == dialect.V10 {
		h.req.Header.Set(dialect.HeaderVersion, "1.0")
	}
	h.req.RemoteAddr = "192.0.2.10:41234"
	h.rd = bytes.NewReader(nil)
	h.rc = &benchBody{h.rd}
	h.body = []byte(rpc(c.method(dialect.SendMessage), c.send("msg-0000000000", c.text("write the report"), "")))
	h.msgID = messageIDIn(h.body)
	h.serve()
	if res := gjson.GetBytes(h.w.body, "result"); !strings.Contains(res.Raw, "costs stayed flat.") {
		tb.Fatalf("not the script's task: %s", h.w.body)
	}
	return h
}

// TestViaStreamAnswersAboutOneTask: a blocking send served from the
// backend's stream is answered with the caller's own task, never with
// another caller's: a stream that, after alice's task, goes on about bob's
// task (its snapshot, an artifact of it, or alice's task moved into bob's
// context) ends alice's send with an error, as the relayed stream does,
// whatever the stream's last state. Before, the fold took bob's task as
// the answer when its state was the one recorded for alice's, and alice
// got bob's artifacts.
func TestViaStreamAnswersAboutOneTask(t *testing.T) {
	const secret = "bob's secret"
	bobs := `{"task":{"id":"t-bob","contextId":"c-bob","status":{"state":"TASK_STATE_WORKING"},"artifacts":[{"artifactId":"a","parts":[{"text":"` + secret + `"}]}]}}`
	for _, tc := range []struct {
		name   string
		events []string
	}{
		{"bob's task", []string{bobs}},
		{"bob's artifact", []string{`{"artifactUpdate":{"taskId":"t-bob","contextId":"c-bob","artifact":{"artifactId":"a","parts":[{"text":"` + secret + `"}]}}}`}},
		{"bob's task, then completed", []string{bobs, `{"statusUpdate":{"taskId":"t-bob","contextId":"c-bob","status":{"state":"TASK_STATE_COMPLETED"}}}`}},
		{"alice's task in bob's context", []string{`{"artifactUpdate":{"taskId":"t-alice","contextId":"c-bob","artifact":{"artifactId":"a","parts":[{"text":"` + secret + `"}]}}}`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sends atomic.Int32
			back := scripted(func(w http.ResponseWriter, r *http.Request, id string) {
				w.Header().Set("Content-Type", "text/event-stream")
				if sends.Add(1) == 1 {
					sseWrite(w, `data: {"jsonrpc":"2.0","id":`+id+`,"result":`+bobs+"}\n\n")
					return
				}
				sseWrite(w, `data: {"jsonrpc":"2.0","id":`+id+`,"result":{"task":{"id":"t-alice","contextId":"c-alice","status":{"state":"TASK_STATE_WORKING"}}}}`+"\n\n")
				for _, ev := range tc.events {
					sseWrite(w, `data: {"jsonrpc":"2.0","id":`+id+`,"result":`+ev+"}\n\n")
				}
			})
			tg := newGateway(t, back, dialect.Version10, withAuth(t), viaStreamOn)
			bob, alice := tg.as(token(t, "bob")), tg.as(token(t, "alice"))
			c10 := callers[1]
			if got := mustResult(t, sendResult(t, bob, c10, c10.send("b1", c10.text("hi"), ""))).Get("task.id").Str; got != "t-bob" {
				t.Fatalf("bob's send made %q", got)
			}
			for i, c := range callers {
				r := sendResult(t, alice, c, c.send("a"+strconv.Itoa(i), c.text("hi"), ""))
				if strings.Contains(r.Raw, secret) || strings.Contains(r.Raw, "c-bob") || !r.Get("error").Exists() {
					t.Errorf("%s: alice got %s", c.d, r.Raw)
				}
			}
		})
	}
}

// TestViaStreamFinalTaskIsNoStreamingRefusal: a backend that refuses a
// streaming message to a task in a final state with UnsupportedOperation
// (-32004, as @a2a-js/sdk 1.x does) has not refused to stream: the caller
// gets the final-task answer, the message is not sent again as a plain
// send, and the backend's blocking sends go on being served from its
// stream. Before, that one refusal (of a task finished out of the
// gateway's sight) was read as "this backend does not stream": the
// message was sent a second time, and blocking_via_stream was off for
// every caller until a restart.
func TestViaStreamFinalTaskIsNoStreamingRefusal(t *testing.T) {
	var plain, streamed atomic.Int32
	back := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.NotFound(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		req := gjson.ParseBytes(body)
		id := req.Get("id").Raw
		reply := func(result string) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"result":`+result+`}`)
		}
		switch method := req.Get("method").Str; {
		case method == "GetTask":
			reply(`{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"}}`)
		case method == "SendMessage":
			plain.Add(1)
			if req.Get("params.message.taskId").Str == "t1" {
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":-32004,"message":"Task t1 is in a terminal state"}}`)
				return
			}
			reply(`{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING"}}}`)
		case req.Get("params.message.taskId").Str == "t1":
			streamed.Add(1)
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":-32004,"message":"Task t1 is in a terminal state"}}`)
		default:
			streamed.Add(1)
			w.Header().Set("Content-Type", "text/event-stream")
			n := strconv.Itoa(int(streamed.Load()))
			sseWrite(w, `data: {"jsonrpc":"2.0","id":`+id+`,"result":{"task":{"id":"t-new`+n+`","contextId":"c-new`+n+`","status":{"state":"TASK_STATE_COMPLETED"}}}}`+"\n\n")
		}
	})
	g := newGateway(t, back, dialect.Version10, viaStreamOn)
	c := callers[1]
	mustResult(t, sendResult(t, g, c, c.send("m1", c.text("start"), c.nonBlocking())))
	more := strings.Replace(c.send("m2", c.text("more"), ""), `"messageId"`, `"taskId":"t1","messageId"`, 1)
	wantError(t, sendResult(t, g, c, more), c.d, -32004)
	if n := plain.Load(); n != 1 {
		t.Fatalf("the backend got %d plain sends, want 1 (the first): the message to the final task was sent again", n)
	}
	wantTaskState(t, c, mustResult(t, sendResult(t, g, c, c.send("m3", c.text("new work"), ""))), "completed")
	if n := plain.Load(); n != 1 {
		t.Fatalf("a new blocking send went plain: blocking_via_stream was turned off by the final task's refusal")
	}
}

// TestBlockingViaStreamBoundedByResponseTimeout: a blocking send served
// from a stream whose backend sends the task's first event and then
// nothing is answered once response_timeout passes, naming it, as a plain
// blocking send is, though stream_idle_timeout is far longer; and the task
// the first event named stays recorded for the caller.
func TestBlockingViaStreamBoundedByResponseTimeout(t *testing.T) {
	g := newGateway(t, scripted(func(w http.ResponseWriter, r *http.Request, id string) {
		w.Header().Set("Content-Type", "text/event-stream")
		sseWrite(w, `data: {"jsonrpc":"2.0","id":`+id+`,"result":{"task":{"id":"t-slow","contextId":"c-slow","status":{"state":"TASK_STATE_WORKING"}}}}`+"\n\n")
		<-r.Context().Done()
	}), dialect.Version10, viaStreamOn, func(a *AgentConfig) {
		a.Backend.ResponseTimeout = 300 * time.Millisecond
		a.Backend.ResponseHeaderTimeout = 300 * time.Millisecond
		a.Backend.StreamIdleTimeout = time.Minute
	})
	c := callers[1]
	start := time.Now()
	e := g.call("1", c.method(dialect.SendMessage), c.send("m1", c.text("slow"), "")).Get("error")
	if took := time.Since(start); took > 20*time.Second {
		t.Fatalf("the send took %s", took)
	}
	if !strings.Contains(e.Get("message").Str, "response_timeout") {
		t.Fatalf("a stalled stream behind a blocking send: %s, want an error naming response_timeout", e.Raw)
	}
	if task, err := g.agent.tasks.Get(context.Background(), g.agent.cfg.Name, "t-slow"); err != nil || task.ContextID != "c-slow" {
		t.Fatalf("the task the first event named: %+v, %v", task, err)
	}
}

// TestBlockingViaStreamOneTaskBeforeAnyState: a blocking send served from
// a stream whose backend sends an artifact of one task, then events of a
// second, before any state, is refused naming the second task, and the
// second is not recorded. Before, the fold started over at the second
// task's first event: the caller was answered with that task alone, the
// first task's artifact dropped unsaid.
func TestBlockingViaStreamOneTaskBeforeAnyState(t *testing.T) {
	events := []string{
		`{"artifactUpdate":{"taskId":"t-a","contextId":"c","artifact":{"artifactId":"x","parts":[{"text":"y"}]}}}`,
		`{"artifactUpdate":{"taskId":"t-z","contextId":"c","artifact":{"artifactId":"x","parts":[{"text":"z"}]}}}`,
		`{"statusUpdate":{"taskId":"t-z","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"}}}`,
	}
	g := newGateway(t, scripted(func(w http.ResponseWriter, r *http.Request, id string) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range events {
			sseWrite(w, `data: {"jsonrpc":"2.0","id":`+id+`,"result":`+e+"}\n\n")
		}
	}), dialect.Version10, viaStreamOn)
	for _, c := range callers {
		wantErrorSaying(t, g.call("1", c.method(dialect.SendMessage), c.send("m-"+c.d.String(), c.text("hi"), "")), c.d, -32603, "second task")
	}
	if _, err := g.agent.tasks.Get(context.Background(), g.agent.cfg.Name, "t-z"); err == nil {
		t.Error("the second task was recorded as the caller's")
	}
}
