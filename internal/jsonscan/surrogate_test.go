package jsonscan

import (
	"encoding/json"
	"reflect"
	"testing"
	"unicode/utf8"
)

func TestReplaceLoneSurrogates(t *testing.T) {
	for in, want := range map[string]string{
		`"a\ud800b"`:           `"a\ufffdb"`,
		`"\udc00"`:             `"\ufffd"`,
		`"\uD83D\uDE00"`:       `"\uD83D\uDE00"`,
		`"\ud83d\ud83d\ude00"`: `"\ufffd\ud83d\ude00"`,
		`"\\ud800"`:            `"\\ud800"`,
		`"\\\ud800"`:           `"\\\ufffd"`,
		`"x\n\u00e9\ud800"`:    `"x\n\u00e9\ufffd"`,
		`{"k\udfff":"\ud800"}`: `{"k\ufffd":"\ufffd"}`,
		`"end\ud800"`:          `"end\ufffd"`,
	} {
		if got := ReplaceLoneSurrogates([]byte(in)); string(got) != want {
			t.Errorf("ReplaceLoneSurrogates(%s) = %s, want %s", in, got, want)
		}
		if found := NextLoneSurrogate([]byte(in), 0) >= 0; found != (in != want) {
			t.Errorf("NextLoneSurrogate(%s) found %v", in, found)
		}
	}
	clean := []byte(`{"a":"\u00e9\ud83d\ude00"}`)
	if got := ReplaceLoneSurrogates(clean); &got[0] != &clean[0] {
		t.Error("a document without lone surrogates is copied")
	}
}

// FuzzReplaceLoneSurrogates holds the replacement to encoding/json: the
// document reads the same before and after, and holds no lone surrogate
// after.
func FuzzReplaceLoneSurrogates(f *testing.F) {
	for _, s := range []string{`"a\ud800b"`, `["\\\ud800","\uD83D\uDE00"]`, `{"\udc00":1}`, `"\\u"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if !utf8.ValidString(raw) || !json.Valid([]byte(raw)) {
			return
		}
		out := ReplaceLoneSurrogates([]byte(raw))
		var before, after any
		if err := json.Unmarshal([]byte(raw), &before); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(out, &after); err != nil {
			t.Fatalf("%q became %q, not JSON: %v", raw, out, err)
		}
		if !reflect.DeepEqual(before, after) {
			t.Fatalf("%q reads %v, its replacement %q reads %v", raw, before, out, after)
		}
		if i := NextLoneSurrogate(out, 0); i >= 0 {
			t.Fatalf("%q still holds a lone surrogate at %d", out, i)
		}
	})
}
