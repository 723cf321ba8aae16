package agentcard

import (
	"errors"
	"runtime/debug"
	"strings"
	"testing"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/protobuf/encoding/protojson"
)

// TestCardLoneSurrogates: a backend card holding a lone UTF-16 surrogate
// escape (a JS agent that cut a string inside an emoji writes "\ud83d")
// is published with U+FFFD in its place, as encoding/json reads it: left
// as it is, protojson refuses the whole card (a2a-go's ProtoJSON readers,
// the gateway's own gRPC GetExtendedAgentCard). Paired surrogates and an
// escaped backslash before "u" are kept as they are.
func TestCardLoneSurrogates(t *testing.T) {
	card := `{"name":"cut \ud83d","description":"low \ude00 then pair \ud83d\ude00 and \\ud800 text","version":"\ud800\ud800",` +
		`"skills":[{"id":"s","name":"n","description":"\udbff","tags":["\uD800"]}],` +
		`"capabilities":{"extensions":[{"uri":"u","params":{"k\ud800":"v\udfff"}}]}}`
	canon, err := ToCanonical([]byte(card))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"cut \ufffd"`, `"low \ufffd then pair \ud83d\ude00 and \\ud800 text"`, `"\ufffd\ufffd"`, `"\ufffd"`, `"k\ufffd":"v\ufffd"`} {
		if !strings.Contains(string(canon), want) {
			t.Errorf("the canonical card lacks %s: %s", want, canon)
		}
	}
	out, err := V10(canon, PublishOptions{URL: "https://gw.example.com/"})
	if err != nil {
		t.Fatal(err)
	}
	if err := protojson.Unmarshal(out, new(a2apb.AgentCard)); err != nil {
		t.Errorf("the 1.0 card is not ProtoJSON an AgentCard parser reads: %v\n%s", err, out)
	}
}

// TestCardOfBracketsWithoutRecursion: a backend card of nothing but '['
// (as large as a card may be) is refused by Dialect, ToCanonical and
// HasSignatures without a stack as deep as the card: gjson's validator,
// which they used, recursed once a bracket (about 128 MiB of stack for
// such a card, at each refresh). The stack bound makes a recursion fatal.
func TestCardOfBracketsWithoutRecursion(t *testing.T) {
	defer debug.SetMaxStack(debug.SetMaxStack(32 << 20))
	card := []byte(strings.Repeat("[", 1<<20))
	if _, _, err := Dialect(card); !errors.Is(err, errInvalid) || !strings.Contains(err.Error(), "nests deeper than 100 levels") {
		t.Errorf("Dialect: %v", err)
	}
	if _, err := ToCanonical(card); !errors.Is(err, errInvalid) {
		t.Errorf("ToCanonical: %v", err)
	}
	if HasSignatures(card) {
		t.Error("HasSignatures of brackets")
	}
}

// TestCardTooDeep: a card nested deeper than maxCardDepth (in an
// extension's params, the one place a card holds free JSON) is refused as
// invalid before it is parsed, rather than published for clients whose parsers stop
// at a depth (protojson, encoding/json) to refuse.
func TestCardTooDeep(t *testing.T) {
	const n = 200000
	deep := strings.Repeat(`{"a":`, n) + `1` + strings.Repeat(`}`, n)
	for _, card := range []string{
		`{"name":"x","capabilities":{"extensions":[{"uri":"u","params":` + deep + `}]}}`,
		`{"name":"x","skills":` + strings.Repeat(`[`, n) + strings.Repeat(`]`, n) + `}`,
	} {
		_, err := ToCanonical([]byte(card))
		if !errors.Is(err, errInvalid) || !strings.Contains(err.Error(), "levels") {
			t.Errorf("a card nested %d deep: %v", n, err)
		}
	}
	within := `{"name":"x","capabilities":{"extensions":[{"uri":"u","params":` + strings.Repeat(`{"a":`, maxCardDepth-5) + `1` + strings.Repeat(`}`, maxCardDepth-5) + `}]}}`
	if _, err := ToCanonical([]byte(within)); err != nil {
		t.Errorf("a card nested %d deep: %v", maxCardDepth, err)
	}
}

// TestCardExtensionParamsRepeatedKey: an extension's params (a
// google.protobuf.Struct) naming a member twice, at the top or deeper, is
// refused as invalid, naming the extension and the key, rather than
// published for clients that read different params (the first, the last)
// or, with protojson, refuse the card. A key repeated across objects, or
// in an array's objects, is no repeat.
func TestCardExtensionParamsRepeatedKey(t *testing.T) {
	for _, params := range []string{
		`{"mode":"a","mode":"b"}`,
		`{"outer":{"k":1,"other":2,"k":3}}`,
		`{"list":[{"x":1},{"y":1,"y":2}]}`,
		`{"esc":1,"\u0065sc":2}`,
	} {
		card := `{"name":"x","capabilities":{"extensions":[{"uri":"urn:ok","params":{"a":1}},{"uri":"urn:bad","params":` + params + `}]}}`
		_, err := ToCanonical([]byte(card))
		if !errors.Is(err, errInvalid) || !strings.Contains(err.Error(), `capabilities.extensions[1] ("urn:bad"): params repeats key`) {
			t.Errorf("params %s: %v", params, err)
		}
	}
	for _, params := range []string{`{"a":{"k":1},"b":{"k":2}}`, `{"list":[{"k":1},{"k":2}]}`, `{"k":[1,1]}`} {
		card := `{"name":"x","capabilities":{"extensions":[{"uri":"u","params":` + params + `}]}}`
		if _, err := ToCanonical([]byte(card)); err != nil {
			t.Errorf("params %s: %v", params, err)
		}
	}
}
