package jsonscan

import (
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// repeatsKey is the oracle: encoding/json's tokens, a set of keys per open
// object.
func repeatsKey(t *testing.T, raw string) bool {
	d := json.NewDecoder(strings.NewReader(raw))
	d.UseNumber() // a number past float64's range is still a value
	type level struct {
		keys   map[string]bool
		object bool
		key    bool // the next string is a key
	}
	var stack []*level
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return false
		}
		if err != nil {
			t.Fatalf("oracle: %v", err)
		}
		var top *level
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if k, isString := tok.(string); isString && top != nil && top.object && top.key {
			if top.keys[k] {
				return true
			}
			top.keys[k] = true
			top.key = false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &level{keys: map[string]bool{}, object: true, key: true})
			continue
		case json.Delim('['):
			stack = append(stack, &level{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		if len(stack) > 0 && stack[len(stack)-1].object {
			stack[len(stack)-1].key = true
		}
	}
}

func TestMayRepeatKey(t *testing.T) {
	many := make([]string, manyKeys+1)
	for i := range many {
		many[i] = strconv.Quote("k"+strconv.Itoa(i)) + ":1"
	}
	cases := []struct {
		raw  string
		want bool
	}{
		{`{}`, false},
		{`{"a":1,"b":2}`, false},
		{`{"a":1,"a":2}`, true},
		{`{"a":{"b":1},"c":{"b":2}}`, false}, // one key in two objects
		{`{"a":{"b":1,"b":2}}`, true},
		{`[{"a":1},{"a":1}]`, false},
		{`[{"a":1,"a":1}]`, true},
		{`{"a":"a","b":["a","a"]}`, false}, // strings that are values
		{`{"a":1,"\u0061":2}`, true},       // the same key, escaped
		{`{"a:":1,"a":2}`, false},
		{`{"x":{"a":1},"a":2}`, false},
		{`{"a":[{"b":1}],"b":1}`, false},
		{`"a"`, false},
		{`{"` + strings.Repeat("a", 40) + `":1 , "` + strings.Repeat("a", 40) + `" : 2}`, true},
		{"{" + strings.Join(many[:manyKeys], ",") + "}", false},
		{"{" + strings.Join(many, ",") + "}", true}, // not decided: an exact check follows
	}
	for _, c := range cases {
		if got := mayRepeatKey(c.raw); got != c.want {
			t.Errorf("mayRepeatKey(%s) = %v, want %v", c.raw, got, c.want)
		}
	}
}

// FuzzRepeatedKey holds RepeatedKey, and its cheap pass mayRepeatKey, to the
// oracle: RepeatedKey finds a key exactly where one repeats; mayRepeatKey
// is never false where a key repeats, and true only where one does or an
// object is too large to decide.
func FuzzRepeatedKey(f *testing.F) {
	for _, s := range []string{`{"a":1,"a":2}`, `{"a":{"b":[{"c":1,"d":{"c":2}}]},"b":1}`, `[1,"a",{"":0,"":1}]`, `{"\"":1,"\\"":2}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if !utf8.ValidString(raw) || !Valid([]byte(raw)) || !DepthOK([]byte(raw)) {
			return // RepeatedKey's callers refuse these first
		}
		got, want := mayRepeatKey(raw), repeatsKey(t, raw)
		if _, _, found := RepeatedKey(gjson.Parse(raw)); found != want {
			t.Fatalf("RepeatedKey(%q) found %v, the oracle %v", raw, found, want)
		}
		if want && !got {
			t.Fatalf("mayRepeatKey(%q) = false, but a key repeats", raw)
		}
		if got && !want && strings.Count(raw, ":") <= manyKeys {
			t.Fatalf("mayRepeatKey(%q) = true, but no key repeats", raw)
		}
	})
}

func TestRepeatedKeyPath(t *testing.T) {
	key, path, found := RepeatedKey(gjson.Parse(`{"a":[1,{"b":{"c":1,"c":2}}],"d":{}}`))
	if !found || key != "c" || !reflect.DeepEqual(path, []any{"a", 1, "b"}) {
		t.Fatalf("RepeatedKey = %q %v %v, want \"c\" at [a 1 b]", key, path, found)
	}
	many := "{"
	for i := range 2 * manyKeys {
		many += strconv.Quote("k"+strconv.Itoa(i)) + ":1,"
	}
	if _, _, found := RepeatedKey(gjson.Parse(many + `"z":1}`)); found {
		t.Fatal("RepeatedKey found a repeat in an object of distinct keys too large for the cheap pass")
	}
}

func BenchmarkMayRepeatKey(b *testing.B) {
	raw := `{"format":"bullets","maxWords":200,"sections":["revenue","costs","outlook"],"meta":{"owner":"user-42","costCents":1375}}`
	b.ReportAllocs()
	for b.Loop() {
		if mayRepeatKey(raw) {
			b.Fatal("repeats")
		}
	}
}
