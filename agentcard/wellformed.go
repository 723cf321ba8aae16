package agentcard

import (
	"fmt"

	"github.com/a2agate/gateway/internal/jsonscan"
)

// maxCardDepth bounds how deep a backend's card nests. A card's own
// structure is a few levels deep; only an extension's params hold free
// JSON. A deeper card is refused before it is parsed: its clients'
// parsers stop at a depth (protojson, encoding/json) and would refuse the
// card the gateway published, and parsing it costs time in proportion.
const maxCardDepth = 64

// wellFormed checks card's nesting against maxCardDepth and returns it with
// every lone UTF-16 surrogate escape ("\ud83d" with no low half after it,
// as a JS agent that cut a string inside an emoji writes) replaced by
// "\ufffd", the character encoding/json reads it as: protojson refuses a
// card holding one, and other parsers read it each their own way. The
// card's JSON syntax is checked afterwards, by the parser; this pass only
// tells strings from the rest.
func wellFormed(card []byte) ([]byte, error) {
	depth := 0
	inString := false
	for i := 0; i < len(card); i++ {
		c := card[i]
		if !inString {
			switch c {
			case '"':
				inString = true
			case '{', '[':
				if depth++; depth > maxCardDepth {
					return nil, fmt.Errorf("%w: nests deeper than %d levels", errInvalid, maxCardDepth)
				}
			case '}', ']':
				depth--
			}
			continue
		}
		switch {
		case c == '"':
			inString = false
		case c == '\\':
			i++ // an escape: its second byte ends no string
		}
	}
	return jsonscan.ReplaceLoneSurrogates(card), nil
}
