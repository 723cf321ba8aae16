package jsonscan

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/internal/testfiles"
)

// addGoldenSeeds seeds f with every golden document of the translators:
// real A2A traffic in both dialects.
func addGoldenSeeds(f *testing.F) {
	f.Helper()
	files := testfiles.Glob(f, "..", "..", "normalize", "testdata", "*", "*.json")
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// depthOKReference is the plain byte-at-a-time depth scan that DepthOK
// speeds up; the two must agree on every input.
func depthOKReference(b []byte) bool {
	depth, inString := 0, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			if depth++; depth > MaxDepth {
				return false
			}
		case '}', ']':
			depth--
		}
	}
	return true
}

func FuzzDepthOK(f *testing.F) {
	for _, s := range []string{`"\\"[[`, `"\"[[`, `["\\\"", "]`, `{"a":"b\\\\"}`, `"`, `\`, `"\`} {
		f.Add([]byte(s), uint8(0))
	}
	f.Fuzz(func(t *testing.T, b []byte, nest uint8) {
		// Prefix enough brackets that the depth limit is in play.
		in := append(bytes.Repeat([]byte("["), MaxDepth-int(nest%8)), b...)
		if got, want := DepthOK(in), depthOKReference(in); got != want {
			t.Fatalf("DepthOK(%q) = %v, reference says %v", in, got, want)
		}
	})
}

// FuzzEach holds Each to gjson's ForEach on every valid document: the
// same keys and values, with the same types, raw text, strings, numbers
// and indexes, at every nesting level.
func FuzzEach(f *testing.F) {
	addGoldenSeeds(f)
	for _, s := range []string{`[]`, `{}`, ` [ 1 , -2.5e3 , true , null , "a\"b" , {"\u0041":[]} ] `, `{"a\\":"\\","b":"\ud83d\ude00"}`, `"x"`, `12`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !Valid(b) {
			// Translators see only valid documents; each must merely end.
			var walk func(v gjson.Result, depth int)
			walk = func(v gjson.Result, depth int) {
				Each(v, func(_, v gjson.Result) bool {
					if depth < 4 {
						walk(v, depth+1)
					}
					return true
				})
			}
			walk(Parse(b), 0)
			return
		}
		// Spans.Each must see what Each sees, over the spans validation
		// records and over those Index does (the document is padded past
		// the size below which Index leaves it unindexed).
		var valid, indexed Spans
		if !ValidSpans(b, &valid) {
			t.Fatalf("%s: ValidSpans refuses what Valid accepts", b)
		}
		padded := append(append([]byte(nil), b...), bytes.Repeat([]byte(" "), spansWorthIt)...)
		indexed.Index(padded)
		if len(indexed.spans()) != len(valid.spans()) {
			t.Fatalf("%s: Index recorded %v, ValidSpans %v", b, indexed.spans(), valid.spans())
		}
		for _, w := range []struct {
			doc  []byte
			each func(gjson.Result, func(k, v gjson.Result) bool)
		}{{b, Each}, {b, valid.Each}, {padded, indexed.Each}} {
			walkEach(t, Parse(w.doc), 0, w.each)
		}
	})
}

// walkEach holds each to gjson's ForEach at v and, to depth 8, below it.
func walkEach(t *testing.T, v gjson.Result, depth int, each func(gjson.Result, func(k, v gjson.Result) bool)) {
	type pair struct{ k, v gjson.Result }
	var want, got []pair
	v.ForEach(func(k, v gjson.Result) bool { want = append(want, pair{k, v}); return true })
	each(v, func(k, v gjson.Result) bool { got = append(got, pair{k, v}); return true })
	if len(want) != len(got) {
		t.Fatalf("%s: gjson sees %d members, Each %d", v.Raw, len(want), len(got))
	}
	for i := range want {
		if !sameResult(want[i].k, got[i].k) || !sameResult(want[i].v, got[i].v) {
			t.Fatalf("%s: member %d differs\ngjson: %+v\nEach:  %+v", v.Raw, i, want[i], got[i])
		}
		if depth < 8 {
			walkEach(t, got[i].v, depth+1, each)
		}
	}
}

func sameResult(a, b gjson.Result) bool {
	return a.Type == b.Type && a.Raw == b.Raw && a.Str == b.Str && a.Num == b.Num && a.Index == b.Index
}

// FuzzValid holds Valid to encoding/json.Valid plus the depth
// limit: the gateway must accept exactly the documents a backend decoding
// with encoding/json accepts (and no deeper ones).
func FuzzValid(f *testing.F) {
	addGoldenSeeds(f)
	for _, s := range []string{``, ` `, `-`, `-0`, `01`, `1.`, `.5`, `1e`, `1e+`, `-1.5E-3`, `tru`, `nul`, `"\u12"`, `"\u12G4"`, `"\x"`, "\"\x1f\"",
		"\"\x7f\"", `[1,]`, `{"a":1,}`, `{"a" 1}`, `{,}`, `[,1]`, `{"a":1}}`, `[[]]]`, `"abcdefgh\"ijklmnop"`, `"abcdefg\\"`, "\t\n\r 1 \r\n",
		`{"a":{},"b":[1,{"c":[]}],"d":"{","e":[],"f":{"g":1}}`, `[[],[[]],{},1,[2]]`,
		`{"long":{"a":"0123456789012345678901234567890123456789","b":[ ],"c":{ "d":[1,2,3] }},"x":[ {"y":"0123456789012345678901234567890123456789"} ]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		want := json.Valid(b) && depthOKReference(b)
		got := Valid(b)
		if got != want {
			t.Fatalf("Valid(%q) = %v, encoding/json and the depth limit say %v", b, got, want)
		}
		// The translators read with gjson: it must take all that passes.
		if got && !gjson.ValidBytes(b) {
			t.Fatalf("Valid accepts %q, which gjson's validator refuses", b)
		}
		// ValidSpans decides as Valid does, and records every container
		// at least shortSpan long, where it starts and ends.
		var spans Spans
		if ValidSpans(b, &spans) != got {
			t.Fatalf("ValidSpans(%q) = %v, Valid %v", b, !got, got)
		}
		if !got {
			if spans.n != 0 || spans.doc != "" {
				t.Fatalf("ValidSpans(%q) refused it but kept spans %v", b, spans.spans())
			}
			return
		}
		if want := containerSpans(b); !slices.Equal(spans.spans(), want) {
			t.Fatalf("ValidSpans(%q) recorded\n%v, want\n%v", b, spans.spans(), want)
		}
	})
}

// containerSpans are the spans of the containers of the valid document b
// that are at least shortSpan long, found by scanning.
func containerSpans(b []byte) []span {
	json := String(b)
	var want []span
	for i := 0; i < len(json); i++ {
		switch json[i] {
		case '"':
			end, _ := skipString(json, i)
			i = end - 1
		case '{', '[':
			if end := skipContainer(json, i); end-i >= shortSpan {
				want = append(want, span{uint32(i), uint32(end)})
			}
		}
	}
	return want
}

// TestSpansSpill holds the spans past what Spans hold without allocating
// to a scan: more containers than the room, and a short container whose
// nested ones take the spans over the room and back.
func TestSpansSpill(t *testing.T) {
	long := `{"text":"` + strings.Repeat("x", shortSpan) + `"}`
	deep := strings.Repeat("[", shortSpan/2-1) + strings.Repeat("]", shortSpan/2-1) // short, nesting 30 recorded ones
	for _, doc := range []string{
		"[" + strings.Repeat(long+",", 3*roomSpans) + long + "]",
		"[" + strings.Repeat(long+",", 5) + deep + "," + long + "]",
		"[" + strings.Repeat(long+",", roomSpans-1) + deep + "," + long + "]",
		"[" + strings.Repeat(long+",", roomSpans+1) + deep + "," + long + "]",
	} {
		b := []byte(doc)
		var spans Spans
		if !ValidSpans(b, &spans) {
			t.Fatalf("%.40s...: not valid", doc)
		}
		if want := containerSpans(b); !slices.Equal(spans.spans(), want) {
			t.Fatalf("%.40s...: recorded %d spans, a scan finds %d:\n%v\n%v", doc, spans.n, len(want), spans.spans(), want)
		}
		walkEach(t, Parse(b), 0, spans.Each)
		var indexed Spans
		if indexed.Index(b); !slices.Equal(indexed.spans(), spans.spans()) {
			t.Fatalf("%.40s...: Index recorded %v, ValidSpans %v", doc, indexed.spans(), spans.spans())
		}
	}
}
