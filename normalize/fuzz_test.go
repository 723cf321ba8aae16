package normalize

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/jsonscan"
	"github.com/a2agate/gateway/internal/testfiles"
)

// The fuzz targets share one set of properties, checked by the helpers
// below: translation never panics; what it accepts it answers as valid
// JSON; its output is a fixed point (translating canonical 1.0 output 1.0
// to 1.0 returns the very slice, translating 0.x output 0.x to 0.x changes
// nothing); and every failure is an *Error of the documented kind.

// seedFiles returns every golden input under testdata/dir, with the
// dialect its name gives.
func seedFiles(f *testing.F, dir string) (files []string, dialects []dialect.ID) {
	f.Helper()
	all := testfiles.Glob(f, "testdata", dir, "*.json")
	for _, p := range all {
		d := dialect.V10
		if strings.HasSuffix(p, ".v03.json") || strings.HasSuffix(p, ".to-v03.json") {
			d = dialect.V03
		}
		files, dialects = append(files, p), append(dialects, d)
	}
	return files, dialects
}

func readSeed(f *testing.F, p string) []byte {
	f.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		f.Fatal(err)
	}
	return b
}

func dialectOf(b uint8) dialect.ID {
	if b%2 == 0 {
		return dialect.V03
	}
	return dialect.V10
}

func dialectByte(d dialect.ID) uint8 {
	if d == dialect.V03 {
		return 0
	}
	return 1
}

func opOf(b uint8) dialect.Op { return dialect.Ops[int(b)%len(dialect.Ops)] }

func opByte(op dialect.Op) uint8 {
	for i, o := range dialect.Ops {
		if o == op {
			return uint8(i)
		}
	}
	return 0
}

// checkKind fails unless err is an *Error of kind.
func checkKind(t *testing.T, err error, kinds ...dialect.ErrorKind) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error is not an *Error: %T %v", err, err)
	}
	for _, k := range kinds {
		if e.Kind == k {
			return
		}
	}
	t.Fatalf("error kind %s, want one of %v: %v", e.Kind, kinds, err)
}

// checkFixedPoint checks that translating out, already in dialect to, again
// within to is accepted and changes nothing; for 1.0 it must be the same
// slice. again translates within one dialect.
func checkFixedPoint(t *testing.T, to dialect.ID, out []byte, again func([]byte) ([]byte, error)) {
	t.Helper()
	if out == nil {
		return
	}
	if !json.Valid(out) {
		t.Fatalf("output is not valid JSON: %q", out)
	}
	second, err := again(out)
	if err != nil {
		t.Fatalf("the gateway rejects its own %s output: %v\noutput: %s", to, err, out)
	}
	if to == dialect.V10 && !sameSlice(out, second) {
		t.Fatalf("canonical output is not a fixed point\nfirst:  %s\nsecond: %s", out, second)
	}
	if !jsonEqual(out, second) {
		t.Fatalf("%s output changes when translated again\nfirst:  %s\nsecond: %s", to, out, second)
	}
}

// checkPassThrough fails when a translator handed back its input in although
// what it writes for in, write's output, means something else in dialect to.
func checkPassThrough(t *testing.T, from, to dialect.ID, in, out []byte, write func(c *conv) error) {
	t.Helper()
	if len(in) == 0 || !sameSlice(in, out) {
		return
	}
	c := conv{w: &writer{}, from: from}
	if err := write(&c); err != nil {
		t.Fatalf("passed through input the writer rejects: %v\n%s", err, in)
	}
	if !equivalentIn(to, c.w.buf, in) {
		t.Fatalf("passed through unchanged, but the translation differs\n in:      %s\n written: %s", in, c.w.buf)
	}
}

// stdEnvelope is a JSON-RPC request as encoding/json reads it: what a
// backend written in Go sees. Other decoders take the first duplicate; this
// one takes the last and matches names without regard to case, so it is
// the strictest check that the gateway read the routing fields the same.
type stdEnvelope struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

// checkEnvelopeDifferential fails when encoding/json reads body's routing
// fields differently from ParseRequest, which accepted it.
func checkEnvelopeDifferential(t *testing.T, body []byte, env Envelope) {
	t.Helper()
	var std stdEnvelope
	if err := json.Unmarshal(body, &std); err != nil {
		t.Fatalf("ParseRequest accepted a body encoding/json rejects: %v", err)
	}
	if std.JSONRPC != "2.0" {
		t.Fatalf("encoding/json reads jsonrpc %q", std.JSONRPC)
	}
	if std.Method != env.Method {
		t.Fatalf("method: gateway %q, encoding/json %q", env.Method, std.Method)
	}
	if !bytes.Equal(std.ID, env.ID) {
		t.Fatalf("id: gateway %s, encoding/json %s", env.ID, std.ID)
	}
	switch {
	case env.Params == nil && len(std.Params) != 0 && string(std.Params) != "null":
		t.Fatalf("params: gateway none, encoding/json %s", std.Params)
	case env.Params != nil && !bytes.Equal(env.Params, std.Params):
		t.Fatalf("params: gateway %s, encoding/json %s", env.Params, std.Params)
	}
}

// stdParams holds the params members that decide routing and ownership,
// as a backend decoding with encoding/json reads them.
type stdParams struct {
	ID                       string `json:"id"`
	TaskID                   string `json:"taskId"`
	PushNotificationConfigID string `json:"pushNotificationConfigId"`
	Message                  struct {
		TaskID    string `json:"taskId"`
		ContextID string `json:"contextId"`
	} `json:"message"`
}

// checkParamsDifferential fails when the backend, decoding the translated
// params out with encoding/json, would address another task or config than
// the one the gateway reported in info (and authorized).
func checkParamsDifferential(t *testing.T, op dialect.Op, to dialect.ID, out []byte, info RequestInfo) {
	t.Helper()
	if out == nil {
		return
	}
	var std stdParams
	if err := json.Unmarshal(out, &std); err != nil {
		t.Fatalf("encoding/json cannot read the translated params: %v\n%s", err, out)
	}
	var task, cfg string
	switch op {
	case dialect.SendMessage, dialect.SendStreamingMessage:
		task = std.Message.TaskID
		if std.Message.ContextID != info.ContextID {
			t.Fatalf("contextId: gateway %q, backend %q\n%s", info.ContextID, std.Message.ContextID, out)
		}
	case dialect.GetTask, dialect.CancelTask, dialect.SubscribeToTask:
		task = std.ID
	case dialect.CreatePushConfig:
		task = std.TaskID
	case dialect.GetPushConfig, dialect.ListPushConfigs, dialect.DeletePushConfig:
		task, cfg = std.TaskID, std.ID
		if to == dialect.V03 {
			task, cfg = std.ID, std.PushNotificationConfigID
		}
		if cfg != info.PushConfigID {
			t.Fatalf("config id: gateway %q, backend %q\n%s", info.PushConfigID, cfg, out)
		}
	default:
		return
	}
	if task != info.TaskID {
		t.Fatalf("task id: gateway %q, backend %q\n%s", info.TaskID, task, out)
	}
}

// untranslatable reports whether a request is a known gap whose 1.0 form
// the gateway refuses: a 0.2.5 push config get that names no config.
func untranslatable(env Envelope, info RequestInfo, to dialect.ID) bool {
	return env.Op == dialect.GetPushConfig && env.Dialect == dialect.V03 && to == dialect.V10 && info.PushConfigID == ""
}

func FuzzRequest(f *testing.F) {
	files, _ := seedFiles(f, "request")
	for _, p := range files {
		f.Add(readSeed(f, p))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		env, err := ParseRequest(body)
		if err != nil {
			checkKind(t, err, dialect.ErrParse, dialect.ErrInvalidRequest, dialect.ErrMethodNotFound, dialect.ErrInvalidParams)
			return
		}
		checkEnvelopeDifferential(t, body, env)
		for _, to := range []dialect.ID{dialect.V03, dialect.V10} {
			out, info, err := Params(env.Op, env.Dialect, to, env.Params)
			checkIndexedSame(t, env.Params, out, err, func(doc []byte) ([]byte, error) {
				out, _, err := Params(env.Op, env.Dialect, to, doc)
				return out, err
			})
			// Over the spans ParseRequest's validation recorded, as the
			// proxy translates.
			if got, gotInfo, gotErr := AppendParams(nil, &env, to); !sameTranslation(got, gotErr, out, err) || !reflect.DeepEqual(gotInfo, info) {
				t.Fatalf("%s: over the body's spans, the translation is %s, %+v (%v); over the params' own, %s, %+v (%v)", body, got, gotInfo, gotErr, out, info, err)
			}
			if err != nil {
				checkKind(t, err, dialect.ErrInvalidParams, dialect.ErrUnsupportedOperation)
				continue
			}
			checkParamsDifferential(t, env.Op, to, out, info)
			if env.Op != dialect.GetExtendedCard {
				checkPassThrough(t, env.Dialect, to, env.Params, out, func(c *conv) error {
					var info RequestInfo
					return c.params(env.Op, jsonscan.Parse(env.Params), to, &info)
				})
			}
			if untranslatable(env, info, to) {
				continue
			}
			checkFixedPoint(t, to, out, func(b []byte) ([]byte, error) {
				again, info2, err := Params(env.Op, to, to, b)
				first := info
				if to == dialect.V03 {
					first.Tenant = "" // 0.x has no tenants: it is dropped
				}
				if err == nil && !reflect.DeepEqual(info2, first) && !(to == dialect.V03 && info.HasHistoryLength && info.HistoryLength == 0) {
					// A 1.0 "no history" has no 0.x spelling, so only that
					// may read differently the second time.
					t.Fatalf("RequestInfo changed on the second pass: %+v then %+v", info, info2)
				}
				return again, err
			})
		}
	})
}

func FuzzResult(f *testing.F) {
	files, dialects := seedFiles(f, "result")
	for i, p := range files {
		op, ok := opFromName(p)
		if !ok {
			f.Fatalf("%s: no operation in the name", p)
		}
		f.Add(opByte(op), dialectByte(dialects[i]), readSeed(f, p))
	}
	// Stream results go through Result too.
	events, eventDialects := seedFiles(f, "event")
	for i, p := range events {
		f.Add(opByte(dialect.SendStreamingMessage), dialectByte(eventDialects[i]), readSeed(f, p))
	}
	f.Fuzz(func(t *testing.T, opB, fromB uint8, body []byte) {
		op, from := opOf(opB), dialectOf(fromB)
		valid := Valid(body)
		for _, to := range []dialect.ID{dialect.V03, dialect.V10} {
			out, err := Result(op, from, to, body)
			if valid {
				checkIndexedSame(t, body, out, err, func(doc []byte) ([]byte, error) { return Result(op, from, to, doc) })
				checkReplySame(t, body, out, err, func(r *Reply) ([]byte, error) {
					out, _, err := AppendResult(nil, op, from, to, r)
					return out, err
				})
			}
			if !valid || op == dialect.GetExtendedCard {
				// The proxy hands Result only replies ParseReply accepted;
				// here it must merely not panic. Cards are passed on whole.
				continue
			}
			if err != nil {
				checkKind(t, err, dialect.ErrInvalidAgentResponse)
				continue
			}
			checkPassThrough(t, from, to, body, out, func(c *conv) error { return c.result(op, jsonscan.Parse(body), to) })
			resultTo := to
			if op == dialect.ListTasks {
				resultTo = dialect.V10 // ListTasks exists only in 1.0
			}
			checkFixedPoint(t, resultTo, out, func(b []byte) ([]byte, error) { return Result(op, resultTo, resultTo, b) })
		}
	})
}

func FuzzEvent(f *testing.F) {
	files, dialects := seedFiles(f, "event")
	for i, p := range files {
		f.Add(dialectByte(dialects[i]), strings.Contains(p, "final"), readSeed(f, p))
	}
	f.Fuzz(func(t *testing.T, fromB uint8, final bool, body []byte) {
		from := dialectOf(fromB)
		valid := Valid(body)
		for _, to := range []dialect.ID{dialect.V03, dialect.V10} {
			out, err := Event(from, to, body, final)
			if !valid {
				continue
			}
			checkIndexedSame(t, body, out, err, func(doc []byte) ([]byte, error) { return Event(from, to, doc, final) })
			inspected, _, inspectedErr := appendInspectedEvent(nil, from, to, body, nil)
			checkReplySame(t, body, inspected, inspectedErr, func(r *Reply) ([]byte, error) {
				out, _, err := AppendInspectedEvent(nil, from, to, r)
				return out, err
			})
			if err != nil {
				checkKind(t, err, dialect.ErrInvalidAgentResponse)
				continue
			}
			checkPassThrough(t, from, to, body, out, func(c *conv) error { return c.event(jsonscan.Parse(body), to, final) })
			checkEventInfo(t, from, to, body)
			info, err := Inspect(out)
			if err != nil {
				t.Fatalf("Inspect rejects translated output: %v\n%s", err, out)
			}
			if to == dialect.V03 && info.Kind == KindStatusUpdate && !info.HasFinal {
				t.Fatalf("0.x status update without final: %s", out)
			}
			checkFixedPoint(t, to, out, func(b []byte) ([]byte, error) { return Event(to, to, b, !final) })
		}
	})
}

func FuzzErrorObject(f *testing.F) {
	files, dialects := seedFiles(f, "error")
	for i, p := range files {
		f.Add(dialectByte(dialects[i]), readSeed(f, p))
	}
	f.Fuzz(func(t *testing.T, fromB uint8, body []byte) {
		from := dialectOf(fromB)
		valid := Valid(body)
		for _, to := range []dialect.ID{dialect.V03, dialect.V10} {
			out, err := errorObject(from, to, body)
			if !valid {
				continue
			}
			if err != nil {
				checkKind(t, err, dialect.ErrInvalidAgentResponse)
				continue
			}
			if !json.Valid(out) {
				t.Fatalf("output is not valid JSON: %s", out)
			}
			again, err := errorObject(to, to, out)
			if err != nil || !jsonEqual(out, again) {
				t.Fatalf("output is not a fixed point (%v)\nfirst:  %s\nsecond: %s", err, out, again)
			}
		}
	})
}

// checkIndexedSame holds a translation of a document large enough to be
// walked over its container spans (jsonscan.Spans) to the same
// translation walked by scanning: doc padded with trailing spaces past
// the size below which it is left unindexed must translate as doc did,
// out and err being what doc gave.
func checkIndexedSame(t *testing.T, doc, out []byte, err error, translate func([]byte) ([]byte, error)) {
	t.Helper()
	if len(doc) == 0 || len(doc) >= 512 {
		return // empty params mean none; a large document is indexed already
	}
	padded := append(append(make([]byte, 0, len(doc)+512), doc...), bytes.Repeat([]byte(" "), 512)...)
	got, gotErr := translate(padded)
	if (err == nil) != (gotErr == nil) || (err != nil && err.Error() != gotErr.Error()) {
		t.Fatalf("%s: indexed, the translation fails with %v; scanned, with %v", doc, gotErr, err)
	}
	if err == nil && !bytes.Equal(bytes.TrimRight(got, " "), bytes.TrimRight(out, " ")) {
		t.Fatalf("%s: indexed, the translation is\n%s\nscanned\n%s", doc, got, out)
	}
}

// checkReplySame holds a translation over the spans ParseReply's
// validation recorded, as the proxy translates, to the translation of the
// bare document: body as the result of a reply must translate as body did,
// out and err being what body gave.
func checkReplySame(t *testing.T, body, out []byte, err error, translate func(*Reply) ([]byte, error)) {
	t.Helper()
	reply, perr := ParseReply([]byte(`{"jsonrpc":"2.0","id":1,"result":` + string(body) + `}`))
	if perr != nil {
		return // a document ParseReply refuses (not UTF-8), which the proxy never translates
	}
	got, gotErr := translate(&reply)
	if !sameTranslation(got, gotErr, out, err) {
		t.Fatalf("%s: over the reply's spans, the translation is\n%s (%v)\nover the result's own\n%s (%v)", body, got, gotErr, out, err)
	}
}

// sameTranslation reports whether two translations of one document agree,
// but for the space around a document handed back whole.
func sameTranslation(got []byte, gotErr error, want []byte, wantErr error) bool {
	if (gotErr == nil) != (wantErr == nil) || (wantErr != nil && gotErr.Error() != wantErr.Error()) {
		return false
	}
	return bytes.Equal(bytes.TrimSpace(got), bytes.TrimSpace(want))
}
