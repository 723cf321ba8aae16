package agentcard

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"testing"
	"unicode/utf8"

	"github.com/a2agate/gateway/internal/testfiles"
)

// FuzzCardToCanonical checks, for any bytes a backend may serve as its card:
// translation never panics; an accepted card gives valid JSON; the canonical
// card is stable (translating it again returns the same bytes) and names the
// same dialect as the input; and every published form renders from it as
// valid JSON. Seeds: every golden input plus the corpus in
// testdata/fuzz/FuzzCardToCanonical.
func FuzzCardToCanonical(f *testing.F) {
	paths := testfiles.Glob(f, "testdata", "card", "*.card.json")
	for _, path := range paths {
		card, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(card)
	}
	for _, card := range []string{
		`{"name":"a"}`,
		`{"name":"a","url":"u","securitySchemes":{"s":{"type":"oauth2","flows":{"deviceCode":{}}}},"security":[{"s":5}]}`,
		`{"name":"a","supportedInterfaces":[{"url":"u","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],"skills":[{"security":[{"schemes":{"x":{"list":[1]}}}]}]}`,
		`{"name":"\u00e9","name":"b","skills":[1,{"id":"s","id":2}]}`,
	} {
		f.Add([]byte(card))
	}
	publish := PublishOptions{URL: cardTestURL, Bearer: true, ExtendedCard: true}
	f.Fuzz(func(t *testing.T, card []byte) {
		canon, err := ToCanonical(card)
		if err != nil {
			if !errors.Is(err, errInvalid) {
				t.Fatalf("ToCanonical error %v is not errInvalid", err)
			}
			return
		}
		if !json.Valid(canon) || !utf8.Valid(canon) {
			t.Fatalf("ToCanonical(%q) is not valid JSON: %s", card, canon)
		}
		again, err := ToCanonical(canon)
		if err != nil || !bytes.Equal(again, canon) {
			t.Fatalf("not stable:\ninput  %s\nfirst  %s\nsecond %s (%v)", card, canon, again, err)
		}
		v1, _, err1 := Dialect(card)
		v2, _, err2 := Dialect(canon)
		if v1 != v2 || (err1 == nil) != (err2 == nil) {
			t.Fatalf("Dialect(card) = %q, %v; Dialect(canonical) = %q, %v\ninput %s\ncanon %s", v1, err1, v2, err2, card, canon)
		}
		for _, r := range cardRenderers {
			out, err := r.render(canon, publish)
			if err != nil || !json.Valid(out) {
				t.Fatalf("Card %s(%s) = %s, %v", r.suffix, canon, out, err)
			}
		}
	})
}
