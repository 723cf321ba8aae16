package canned

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/agentcard"
	"github.com/a2agate/gateway/auth"
	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/testnet"
	"github.com/a2agate/gateway/normalize"
)

func dialectID(d Dialect) dialect.ID {
	if d == V10 {
		return dialect.V10
	}
	return dialect.V03
}

// sameJSON fails unless a and b hold the same JSON value.
func sameJSON(t *testing.T, what string, a, b []byte) {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("%s: %v: %s", what, err, a)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("%s: %v: %s", what, err, b)
	}
	if !reflect.DeepEqual(va, vb) {
		t.Fatalf("%s differ:\n%s\n%s", what, a, b)
	}
}

// The two dialects' replies must be the same task, or translating one
// would measure a different payload than passing the other through.
func TestRepliesAreTheSameTaskInBothDialects(t *testing.T) {
	id := []byte("task-9")
	for _, tc := range []struct {
		op       dialect.Op
		v03, v10 template
	}{
		{dialect.GetTask, taskV03, taskV10},
		{dialect.SendMessage, taskV03, sendResultV10},
	} {
		got, err := normalize.Result(tc.op, dialect.V03, dialect.V10, tc.v03.appendTo(nil, id))
		if err != nil {
			t.Fatalf("%s: %v", tc.op, err)
		}
		sameJSON(t, tc.op.String()+" 0.3 translated vs 1.0", got, tc.v10.appendTo(nil, id))
		back, err := normalize.Result(tc.op, dialect.V10, dialect.V03, tc.v10.appendTo(nil, id))
		if err != nil {
			t.Fatalf("%s back: %v", tc.op, err)
		}
		if gjson.GetBytes(back, "history.#").Int() != 2 || gjson.GetBytes(back, "artifacts.0.parts.#").Int() != 3 {
			t.Fatalf("%s: 1.0 reply translated to 0.3 lost content: %s", tc.op, back)
		}
	}
}

func TestRequestsAreValidInTheirDialectAndEquivalent(t *testing.T) {
	for _, op := range []Op{Send, Get, Stream} {
		r := Request{Op: op, ID: "r-1", TaskID: "task-5", Stream: StreamShape{Events: 7, IntervalMicros: 3}}
		r.Dialect = V03
		v03 := r.Append(nil)
		r.Dialect = V10
		v10 := r.Append(nil)
		e03, err := normalize.ParseRequest(v03)
		if err != nil {
			t.Fatalf("%s 0.3: %v: %s", op, err, v03)
		}
		e10, err := normalize.ParseRequest(v10)
		if err != nil {
			t.Fatalf("%s 1.0: %v: %s", op, err, v10)
		}
		if e03.Dialect != dialect.V03 || e10.Dialect != dialect.V10 || e03.Op != e10.Op {
			t.Fatalf("%s: parsed as %v/%v and %v/%v", op, e03.Dialect, e03.Op, e10.Dialect, e10.Op)
		}
		p, _, err := normalize.Params(e03.Op, dialect.V03, dialect.V10, e03.Params)
		if err != nil {
			t.Fatalf("%s: %v", op, err)
		}
		if op == Send {
			// blocking: true is 1.0's default: the translation writes it out.
			e10.Params, _ = jsonSet(e10.Params, "configuration.returnImmediately", gjson.GetBytes(p, "configuration.returnImmediately"))
		}
		sameJSON(t, string(op)+" params 0.3 translated vs 1.0", p, e10.Params)
	}
}

// jsonSet copies v at path into doc when v exists.
func jsonSet(doc []byte, path string, v gjson.Result) ([]byte, error) {
	if !v.Exists() {
		return doc, nil
	}
	var m map[string]any
	if err := json.Unmarshal(doc, &m); err != nil {
		return nil, err
	}
	parts := strings.Split(path, ".")
	cur := m
	for _, k := range parts[:len(parts)-1] {
		cur = cur[k].(map[string]any)
	}
	cur[parts[len(parts)-1]] = v.Value()
	return json.Marshal(m)
}

// events returns the data of each SSE event in stream.
func events(t *testing.T, stream []byte) [][]byte {
	t.Helper()
	var out [][]byte
	for block := range bytes.SplitSeq(bytes.TrimSpace(stream), []byte("\n\n")) {
		data, ok := bytes.CutPrefix(block, []byte("data: "))
		if !ok || bytes.Contains(data, []byte("\n")) {
			t.Fatalf("not one data line: %q", block)
		}
		out = append(out, data)
	}
	return out
}

func TestStreamEventsTranslateToEachOther(t *testing.T) {
	const n = 6
	var s03, s10 []byte
	for i := range n {
		s03 = appendEvent(s03, V03, []byte(`"r-1"`), []byte("task-3"), i, n, 1234567890123)
		s10 = appendEvent(s10, V10, []byte(`"r-1"`), []byte("task-3"), i, n, 1234567890123)
	}
	e03, e10 := events(t, s03), events(t, s10)
	if len(e03) != n || len(e10) != n {
		t.Fatalf("got %d and %d events, want %d", len(e03), len(e10), n)
	}
	kinds := map[string]int{}
	for i := range n {
		r10, err := normalize.ParseReply(e10[i])
		if err != nil {
			t.Fatalf("event %d: %v: %s", i, err, e10[i])
		}
		info, err := normalize.Inspect(r10.Result)
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		kinds[info.Kind.String()]++
		got, err := normalize.Event(dialect.V10, dialect.V03, r10.Result, dialect.TerminalState(info.State))
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		r03, err := normalize.ParseReply(e03[i])
		if err != nil {
			t.Fatalf("event %d: %v: %s", i, err, e03[i])
		}
		// 0.3 writes the offset as Python does; a translation writes Z.
		sameJSON(t, "event translated 1.0 to 0.3 vs 0.3", got, bytes.ReplaceAll(r03.Result, []byte("+00:00"), []byte("Z")))
		for _, data := range [][]byte{e03[i], e10[i], got} {
			if ts, ok := EventStamp(data); !ok || ts != 1234567890123 {
				t.Fatalf("event %d: stamp %d, %v in %s", i, ts, ok, data)
			}
		}
	}
	if kinds["task"] != 1 || kinds["artifact_update"] != 2 || kinds["status_update"] != 3 {
		t.Fatalf("event kinds %v", kinds)
	}
	if !bytes.Contains(e03[n-1], []byte(`"final":true`)) || bytes.Contains(e03[n-2], []byte(`"final":true`)) {
		t.Fatalf("only the last 0.3 event is final")
	}
}

func TestEventStampWithoutStamp(t *testing.T) {
	for _, data := range []string{`{}`, `{"ts":}`, `{"ts":"x"}`} {
		if _, ok := EventStamp([]byte(data)); ok {
			t.Errorf("%s: found a stamp", data)
		}
	}
}

func post(t *testing.T, url string, body []byte) []byte {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	_, out := testnet.RoundTrip(t, http.DefaultClient, req)
	return out
}

func TestServeHTTPAnswersEachDialect(t *testing.T) {
	srv := httptest.NewServer(New())
	t.Cleanup(srv.Close)
	seen := map[string]bool{}
	for _, d := range []Dialect{V03, V10} {
		for _, op := range []Op{Send, Get} {
			out := post(t, srv.URL+"/v10/", Request{Dialect: d, Op: op, ID: "r-7", TaskID: "task-1"}.Append(nil))
			reply, err := normalize.ParseReply(out)
			if err != nil || reply.Error != nil || string(reply.ID) != `"r-7"` {
				t.Fatalf("%s %s: %v %s", d, op, err, out)
			}
			res, err := normalize.Result(dialect.Op(map[Op]dialect.Op{Send: dialect.SendMessage, Get: dialect.GetTask}[op]), dialectID(d), dialectID(d), reply.Result)
			if err != nil {
				t.Fatalf("%s %s: not valid in its dialect: %v", d, op, err)
			}
			id := normalize.InspectTask(res).TaskID
			if op == Get && id != "task-1" {
				t.Fatalf("%s get answered task %q", d, id)
			}
			if op == Send {
				id = gjson.GetBytes(res, "id").Str + gjson.GetBytes(res, "task.id").Str
				if seen[id] || id == "" {
					t.Fatalf("%s send: task id %q reused", d, id)
				}
				seen[id] = true
			}
		}
	}
	out := post(t, srv.URL+"/", []byte(`{"jsonrpc":"2.0","id":3,"method":"nope"}`))
	if gjson.GetBytes(out, "error.code").Int() != -32601 || gjson.GetBytes(out, "id").Raw != "3" {
		t.Fatalf("unknown method: %s", out)
	}
}

func TestServeHTTPCards(t *testing.T) {
	srv := httptest.NewServer(New())
	t.Cleanup(srv.Close)
	for path, want := range map[string]dialect.Version{
		"/v03/.well-known/agent-card.json": dialect.Version03,
		"/v03/.well-known/agent.json":      dialect.Version03,
		"/v10/.well-known/agent-card.json": dialect.Version10,
	} {
		res, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		v, _, err := agentcard.Dialect(body)
		if err != nil || v != want {
			t.Fatalf("%s: dialect %q, %v", path, v, err)
		}
	}
	res, err := http.Get(srv.URL + "/v10/.well-known/agent.json")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Fatalf("a 1.0 agent has no agent.json: got %d", res.StatusCode)
	}
}

func TestServeHTTPStreams(t *testing.T) {
	srv := httptest.NewServer(New())
	t.Cleanup(srv.Close)
	for _, d := range []Dialect{V03, V10} {
		out := post(t, srv.URL+"/", Request{Dialect: d, Op: Stream, ID: "s-1", Stream: StreamShape{Events: 5, IntervalMicros: 10}}.Append(nil))
		evs := events(t, out)
		if len(evs) != 5 {
			t.Fatalf("%s: %d events, want 5", d, len(evs))
		}
		for _, e := range evs {
			if gjson.GetBytes(e, "id").Str != "s-1" {
				t.Fatalf("%s: event does not echo the id: %s", d, e)
			}
			if _, ok := EventStamp(e); !ok {
				t.Fatalf("%s: event without stamp: %s", d, e)
			}
		}
	}
}

// TestServeHTTPKeepsAStreamOnItsSchedule: with a start time, event i is
// written no earlier than start + i intervals, however late the stream
// was opened.
func TestServeHTTPKeepsAStreamOnItsSchedule(t *testing.T) {
	srv := httptest.NewServer(New())
	t.Cleanup(srv.Close)
	interval := 2 * time.Millisecond
	start := time.Now().Add(20 * time.Millisecond)
	shape := StreamShape{Events: 4, IntervalMicros: int(interval / time.Microsecond), StartMicros: start.UnixMicro()}
	out := post(t, srv.URL+"/", Request{Dialect: V10, Op: Stream, ID: "p", Stream: shape}.Append(nil))
	evs := events(t, out)
	if len(evs) != 4 {
		t.Fatalf("%d events, want 4", len(evs))
	}
	for i, e := range evs {
		stamp, _ := EventStamp(e)
		if due := start.Truncate(time.Microsecond).Add(time.Duration(i) * interval); stamp < due.UnixNano() {
			t.Errorf("event %d written %s before it was due", i, time.Duration(due.UnixNano()-stamp))
		}
	}
}

func TestServeHTTPHoldsTheStreamUntilTheCallerLeaves(t *testing.T) {
	done := make(chan struct{})
	b := New()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(done)
		b.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/", bytes.NewReader(Request{Dialect: V10, Op: Stream, ID: "h", Stream: StreamShape{Events: 50, Hold: true}}.Append(nil)))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	line, err := bufio.NewReader(res.Body).ReadString('\n')
	if err != nil || !strings.Contains(line, `"task"`) {
		t.Fatalf("first event: %q, %v", line, err)
	}
	select {
	case <-done:
		t.Fatal("the handler ended a held stream")
	default:
	}
	cancel()
	<-done // the test times out if the handler never sees the caller leave
}

func TestRoundTripMatchesServeHTTP(t *testing.T) {
	b := New()
	for _, d := range []Dialect{V03, V10} {
		for _, op := range []Op{Send, Get, Stream} {
			body := Request{Dialect: d, Op: op, ID: "x", TaskID: "task-1", Stream: StreamShape{Events: 4}}.Append(nil)
			rec := httptest.NewRecorder()
			b.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v10/", bytes.NewReader(body)))
			req := httptest.NewRequest(http.MethodPost, "/v10/", bytes.NewReader(body))
			res, err := b.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(res.Body)
			res.Body.Close()
			want := rec.Body.Bytes()
			// Task ids and stamps differ from call to call.
			norm := func(p []byte) string {
				s := string(p)
				s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r >= '0' && r <= '9' }), "#")
				return s
			}
			if norm(got) != norm(want) || res.Header.Get("Content-Type") != rec.Header().Get("Content-Type") {
				t.Fatalf("%s %s: RoundTrip\n%s\nServeHTTP\n%s", d, op, got, want)
			}
			if op != Stream && res.ContentLength != int64(len(got)) {
				t.Fatalf("%s %s: Content-Length %d for %d bytes", d, op, res.ContentLength, len(got))
			}
		}
	}
	if _, err := b.RoundTrip(httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(Request{Dialect: V10, Op: Stream, ID: "x", Stream: StreamShape{Hold: true}}.Append(nil)))); err == nil {
		t.Fatal("RoundTrip accepted a held stream")
	}
}

func TestHS256TokenIsAcceptedByTheGatewaysVerifier(t *testing.T) {
	secret := strings.Repeat("s", 32)
	t.Setenv("CANNED_TEST_SECRET", secret)
	cfg := auth.Config{Issuer: "https://issuer.bench", Audiences: []string{"bench"}, Algorithms: []string{"HS256"}, HMACSecretEnv: "CANNED_TEST_SECRET"}
	cfg.SetDefaults()
	v, err := auth.New(context.Background(), cfg, "http://gateway.bench/", nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := v.Verify(context.Background(), "Bearer "+HS256Token([]byte(secret), BenchClaims("https://issuer.bench", "bench")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.String(), "loadbench") {
		t.Fatalf("principal %q", p.String())
	}
	if _, err := v.Verify(context.Background(), "Bearer "+HS256Token([]byte(strings.Repeat("x", 32)), BenchClaims("https://issuer.bench", "bench"))); err == nil {
		t.Fatal("a token signed with another secret was accepted")
	}
}
