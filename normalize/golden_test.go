package normalize

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/jsonscan"
	"github.com/a2agate/gateway/internal/testfiles"
)

var update = flag.Bool("update", false, "rewrite the expected side of golden files")

// goldenDirs are the testdata directories this driver owns, each translated
// by its own entry point (see translateGolden).
var goldenDirs = []string{"request", "result", "event", "error"}

// golden is one translation case from testdata: in is read in dialect from,
// want is the expected output in dialect to, or wantErr a substring of the
// expected error.
type golden struct {
	name     string
	dir      string
	from, to dialect.ID
	in       string // file
	want     string // file; "" with wantErr
	wantErr  string
	// pair is true when in and want are the two sides of one equivalent
	// message, so both are canonical in their dialect.
	pair bool
}

// goldenCases pairs the files of one testdata directory:
//
//	x.v03.json + x.v10.json      equivalent in both dialects, tested both ways
//	x.v03.json + x.to-v10.json   one way (lossy), likewise x.v10.json + x.to-v03.json
//	x.v10.json + x.to-v10.json   a 1.0 input that is not canonical, normalized
//	x.vNN.json + x.err           invalid; x.err holds an error substring expected
//	                             when translating to the other dialect
//
// One input may have several of these (a .to-v10 and a .to-v03, or a
// .to-v10 and an .err when only the 0.x target fails).
func goldenCases(t *testing.T, dir string) []golden {
	t.Helper()
	files := testfiles.Glob(t, "testdata", dir, "*.v*.json")
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }
	var cases []golden
	for _, f := range files {
		var base string
		var from, other dialect.ID
		switch {
		case strings.HasSuffix(f, ".v03.json"):
			base, from, other = strings.TrimSuffix(f, ".v03.json"), dialect.V03, dialect.V10
		case strings.HasSuffix(f, ".v10.json"):
			base, from, other = strings.TrimSuffix(f, ".v10.json"), dialect.V10, dialect.V03
		default:
			continue
		}
		add := func(to dialect.ID, g golden) {
			g.name = filepath.Base(base) + "." + from.String() + "-to-" + to.String()
			g.dir, g.from, g.to, g.in = dir, from, to, f
			cases = append(cases, g)
		}
		pair := base + "." + fileTag(other) + ".json"
		found := false
		if exists(pair) {
			add(other, golden{want: pair, pair: true})
			found = true
		}
		for _, to := range []dialect.ID{dialect.V10, dialect.V03} {
			oneWay := base + ".to-" + fileTag(to) + ".json"
			if exists(oneWay) && !(to == other && exists(pair)) {
				add(to, golden{want: oneWay})
				found = true
			}
		}
		if e := base + ".err"; exists(e) && !exists(pair) && !exists(base+".to-"+fileTag(other)+".json") {
			b, _ := os.ReadFile(e)
			add(other, golden{wantErr: strings.TrimSpace(string(b))})
			found = true
		}
		if !found {
			t.Errorf("%s has no counterpart (.v03/.v10, .to-v03/.to-v10 or .err)", f)
		}
	}
	return cases
}

// fileTag is how golden file names spell dialect d.
func fileTag(d dialect.ID) string {
	if d == dialect.V03 {
		return "v03"
	}
	return "v10"
}

func goldenFile(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSpace(b)
}

// decodePair decodes two JSON documents, numbers kept exact; ok is false
// when either is not JSON.
func decodePair(a, b []byte) (x, y any, ok bool) {
	da, db := json.NewDecoder(bytes.NewReader(a)), json.NewDecoder(bytes.NewReader(b))
	da.UseNumber()
	db.UseNumber()
	if da.Decode(&x) != nil || db.Decode(&y) != nil {
		return nil, nil, false
	}
	return x, y, true
}

// jsonEqual compares two documents as JSON values, numbers kept exact.
func jsonEqual(a, b []byte) bool {
	x, y, ok := decodePair(a, b)
	return ok && reflect.DeepEqual(x, y)
}

func indent(b []byte) string {
	var out bytes.Buffer
	if json.Indent(&out, b, "", "  ") != nil {
		return string(b)
	}
	return out.String()
}

func checkGolden(t *testing.T, g golden, got []byte, err error) {
	t.Helper()
	if g.wantErr != "" {
		if err == nil {
			t.Fatalf("want error containing %q, got success:\n%s", g.wantErr, got)
		}
		if !strings.Contains(err.Error(), g.wantErr) {
			t.Fatalf("want error containing %q, got %q", g.wantErr, err)
		}
		return
	}
	if err != nil {
		t.Fatalf("translate %s: %v", g.in, err)
	}
	if !json.Valid(got) {
		t.Fatalf("output is not valid JSON:\n%s", got)
	}
	want := goldenFile(t, g.want)
	if *update && strings.Contains(g.want, ".to-") {
		if err := os.WriteFile(g.want, append([]byte(indent(got)), '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !jsonEqual(want, got) {
		t.Errorf("%s -> %s mismatch\nwant (%s):\n%s\ngot:\n%s", g.in, g.to, g.want, indent(want), indent(got))
	}
}

// opFromName reads the operation from a result file name: get_task.x.v03.json.
func opFromName(file string) (dialect.Op, bool) {
	name := filepath.Base(file)
	for _, op := range dialect.Ops {
		if strings.HasPrefix(name, op.String()+".") {
			return op, true
		}
	}
	return dialect.OpUnknown, false
}

// translateGolden runs the entry point of dir on in. part is the slice of
// in that the translator read (a request's params) and out what it
// returned for it, so callers can tell a pass-through by identity; doc is
// the whole translated document, compared with the golden file.
func translateGolden(dir, file string, from, to dialect.ID, in []byte) (part, out, doc []byte, err error) {
	switch dir {
	case "request":
		env, err := ParseRequest(in)
		if err != nil {
			return nil, nil, nil, err
		}
		if env.Dialect != from {
			return nil, nil, nil, errors.New("method " + env.Method + " detected as " + env.Dialect.String() + ", file says " + from.String())
		}
		params, _, err := AppendParams(nil, &env, to) // as the proxy translates
		if err != nil {
			return env.Params, nil, nil, err
		}
		method, _ := dialect.MethodName(to, env.Op)
		doc = []byte(`{"jsonrpc":"2.0","id":` + string(env.ID) + `,"method":"` + method + `"`)
		if params != nil {
			doc = append(append(doc, `,"params":`...), params...)
		}
		return env.Params, params, append(doc, '}'), nil
	case "result":
		op, ok := opFromName(file)
		if !ok {
			return nil, nil, nil, errors.New(file + ": file name does not start with an operation name")
		}
		out, err = Result(op, from, to, in)
	case "event":
		out, err = Event(from, to, in, strings.Contains(filepath.Base(file), "final"))
	case "error":
		out, err = errorObject(from, to, in)
	default:
		return nil, nil, nil, errors.New("unknown golden directory " + dir)
	}
	return in, out, out, err
}

func runGolden(t *testing.T, dir string) {
	for _, g := range goldenCases(t, dir) {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			_, _, got, err := translateGolden(g.dir, g.in, g.from, g.to, goldenFile(t, g.in))
			if g.wantErr != "" && isUnsupported(err) && !strings.Contains(err.Error(), g.wantErr) {
				// The target cannot express the operation at all (ListTasks
				// in 0.x); the input's own dialect shows what is wrong.
				_, _, got, err = translateGolden(g.dir, g.in, g.from, g.from, goldenFile(t, g.in))
			}
			checkGolden(t, g, got, err)
		})
	}
}

func isUnsupported(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Kind == dialect.ErrUnsupportedOperation
}

func TestGoldenRequests(t *testing.T) { runGolden(t, "request") }

func TestGoldenResults(t *testing.T) { runGolden(t, "result") }

func TestGoldenEvents(t *testing.T) { runGolden(t, "event") }

func TestGoldenErrors(t *testing.T) { runGolden(t, "error") }

// TestGoldenCanonicalPassThrough checks that every canonical 1.0 document in
// testdata (the 1.0 side of a pair, every .to-v10 file) translates 1.0 to
// 1.0 as the very slice it was given: same-dialect traffic is not copied.
func TestGoldenCanonicalPassThrough(t *testing.T) {
	for _, dir := range goldenDirs {
		seen := map[string]bool{}
		for _, g := range goldenCases(t, dir) {
			var file string
			switch {
			case g.pair && g.from == dialect.V10:
				file = g.in
			case g.want != "" && g.to == dialect.V10:
				file = g.want
			}
			if file == "" || seen[file] {
				continue
			}
			seen[file] = true
			t.Run(dir+"/"+filepath.Base(file), func(t *testing.T) {
				t.Parallel()
				skipKnownGap(t, dir, file)
				part, out, _, err := translateGolden(dir, file, dialect.V10, dialect.V10, goldenFile(t, file))
				if err != nil {
					t.Fatalf("translate 1.0 to 1.0: %v", err)
				}
				if !sameSlice(part, out) {
					t.Errorf("1.0 to 1.0 copied a canonical document\n in: %s\nout: %s", part, out)
				}
			})
		}
	}
}

// TestGoldenIdempotent translates every golden output again within its own
// dialect: the gateway's output must already be what it would write, so a
// second pass changes nothing. For 1.0 that means the same slice back.
func TestGoldenIdempotent(t *testing.T) {
	for _, dir := range goldenDirs {
		for _, g := range goldenCases(t, dir) {
			if g.wantErr != "" {
				continue
			}
			t.Run(dir+"/"+g.name, func(t *testing.T) {
				t.Parallel()
				skipKnownGap(t, dir, g.in)
				_, _, first, err := translateGolden(dir, g.in, g.from, g.to, goldenFile(t, g.in))
				if err != nil {
					t.Fatalf("first pass: %v", err)
				}
				part, out, second, err := translateGolden(dir, g.in, g.to, g.to, first)
				if err != nil {
					t.Fatalf("second pass (%s to %s): %v\ninput: %s", g.to, g.to, err, first)
				}
				if !jsonEqual(first, second) {
					t.Errorf("second pass changed the output\nfirst:  %s\nsecond: %s", first, second)
				}
				if !sameSlice(part, out) {
					t.Errorf("second pass (%s to %s) copied the document instead of passing it through\n%s", g.to, g.to, first)
				}
			})
		}
	}
}

// TestGoldenInvalidInEveryDirection checks that an invalid input is refused
// whatever the target, same-dialect pass-through included: validation must
// not be skipped when nothing needs rewriting. Unsupported operations are
// about the target, not the input, and are left out.
func TestGoldenInvalidInEveryDirection(t *testing.T) {
	for _, dir := range goldenDirs {
		for _, g := range goldenCases(t, dir) {
			if g.wantErr == "" {
				continue
			}
			t.Run(dir+"/"+g.name, func(t *testing.T) {
				t.Parallel()
				skipKnownGap(t, dir, g.in)
				in := goldenFile(t, g.in)
				if _, _, _, err := translateGolden(dir, g.in, g.from, g.to, in); isUnsupported(err) && strings.Contains(err.Error(), g.wantErr) {
					t.Skip("the input is valid; only its target dialect lacks the operation")
				}
				_, _, got, err := translateGolden(dir, g.in, g.from, g.from, in)
				checkGolden(t, golden{in: g.in, wantErr: g.wantErr}, got, err)
			})
		}
	}
}

// knownGaps are golden cases a property test cannot hold for yet, each with
// the reason; the test skips them by name so the gap stays visible.
var knownGaps = map[string]string{
	// 0.2.5 lets a client ask for "one of" a task's configs without naming
	// one; 1.0 requires the config id, so the translated request is one the
	// gateway itself refuses as 1.0 input. Package proxy never sends it: it
	// lists the task's configs and answers with the first.
	"request/get_push_config_any": "0.2.5 get without pushNotificationConfigId has no 1.0 form",
	// Timestamps are parsed only when they must be rewritten to RFC 3339 UTC,
	// so a same-dialect 0.x reply carries an unparsable one through.
	"result/get_task.timestamp_bad": "timestamps are checked only on the way to 1.0",
}

func skipKnownGap(t *testing.T, dir, file string) {
	t.Helper()
	name := strings.TrimSuffix(filepath.Base(file), ".json")
	for _, suffix := range []string{".v03", ".v10", ".to-v03", ".to-v10"} {
		name = strings.TrimSuffix(name, suffix)
	}
	if why, ok := knownGaps[dir+"/"+name]; ok {
		t.Skip(why)
	}
}

// sameSlice reports whether out is in itself, not a copy: nil for nil, or
// the same first byte and length.
func sameSlice(in, out []byte) bool {
	if len(in) == 0 || len(out) == 0 {
		return len(in) == len(out) && (in == nil) == (out == nil)
	}
	return &in[0] == &out[0] && len(in) == len(out)
}

// written returns what the translator of dir writes for in, bypassing the
// pass-through shortcut, or ok false when dir's entry point has no such
// shortcut for this input.
func written(dir, file string, from, to dialect.ID, in []byte) (out []byte, ok bool) {
	c := conv{w: &writer{}, from: from}
	var err error
	switch dir {
	case "request":
		env, perr := ParseRequest(in)
		if perr != nil || env.Op == dialect.GetExtendedCard || (env.Op == dialect.ListTasks && to == dialect.V03) {
			return nil, false
		}
		root := gjson.Result{Type: gjson.JSON, Raw: "{}"}
		if len(env.Params) > 0 {
			root = jsonscan.Parse(env.Params)
		}
		var info RequestInfo
		err = c.params(env.Op, root, to, &info)
	case "result":
		op, found := opFromName(file)
		if !found || op == dialect.GetExtendedCard {
			return nil, false
		}
		err = c.result(op, jsonscan.Parse(in), to)
	case "event":
		err = c.event(jsonscan.Parse(in), to, strings.Contains(filepath.Base(file), "final"))
	default:
		return nil, false
	}
	return c.w.buf, err == nil
}

// equivalentIn reports whether a and b mean the same in dialect d. In 1.0
// (ProtoJSON) a member holding its type's default ([], "", false) is the
// same as an absent one. (Not 0: historyLength is optional, so 0 is set.)
func equivalentIn(d dialect.ID, a, b []byte) bool {
	if d != dialect.V10 {
		return jsonEqual(a, b)
	}
	x, y, ok := decodePair(a, b)
	return ok && reflect.DeepEqual(dropDefaults(x), dropDefaults(y))
}

func dropDefaults(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if arr, ok := e.([]any); (ok && len(arr) == 0) || e == "" || e == false {
				delete(v, k)
				continue
			}
			v[k] = dropDefaults(e)
		}
	case []any:
		for i, e := range v {
			v[i] = dropDefaults(e)
		}
	}
	return v
}

// TestGoldenPassThroughMeansUnchanged checks the pass-through shortcut on
// every golden document, in every direction: whenever a translator hands
// back its input, what it would have written must mean the same. A member
// the writer drops or rewrites without noting the change would otherwise
// reach the peer untranslated.
func TestGoldenPassThroughMeansUnchanged(t *testing.T) {
	for _, dir := range goldenDirs {
		files, err := filepath.Glob(filepath.Join("testdata", dir, "*.json"))
		if err != nil {
			t.Fatal(err)
		}
		for _, file := range files {
			from := dialect.V10
			if strings.HasSuffix(file, "v03.json") {
				from = dialect.V03
			}
			for _, to := range []dialect.ID{dialect.V03, dialect.V10} {
				t.Run(dir+"/"+filepath.Base(file)+"/to-"+fileTag(to), func(t *testing.T) {
					t.Parallel()
					in := goldenFile(t, file)
					part, out, _, err := translateGolden(dir, file, from, to, in)
					if err != nil || !sameSlice(part, out) || part == nil {
						return
					}
					want, ok := written(dir, file, from, to, in)
					if ok && !equivalentIn(to, want, part) {
						t.Errorf("passed through unchanged, but the translation differs\n in:      %s\n written: %s", part, want)
					}
				})
			}
		}
	}
}
