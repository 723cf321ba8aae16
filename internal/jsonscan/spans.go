package jsonscan

import (
	"unsafe"

	"github.com/tidwall/gjson"
)

// Spans are where the containers of one document end, by where they start,
// recorded in one pass. A walk with Each reads every nesting level again at
// the level above it, to step over the value it will then descend into: a
// task's text was scanned once per enclosing object and array, five to
// seven times in all, and that was a third of a translated request's
// instructions. Spans.Each steps over a container of the document in one
// lookup instead.
type Spans struct {
	doc string
	// at holds pairs: a container's offset in doc and the offset just
	// past it, in the order the containers open (so by offset).
	at []int
}

// spansWorthIt is the smallest document worth indexing: below it the
// scans a lookup saves cost less than the pass that records them.
const spansWorthIt = 512

// Index records doc's container spans, replacing what s held. doc must be
// a document Valid accepted and must not change while s is used; a
// document too small to gain is left unindexed, and s.Each then scans.
func (s *Spans) Index(doc []byte) {
	s.doc, s.at = "", s.at[:0]
	if len(doc) < spansWorthIt {
		return
	}
	json := String(doc)
	var open [MaxDepth]int // where in at each enclosing container is
	depth := 0
	for i := 0; i < len(json); i++ {
		switch json[i] {
		case '"':
			end, _ := skipString(json, i)
			i = end - 1
		case '{', '[':
			if depth == MaxDepth {
				s.at = s.at[:0]
				return
			}
			open[depth] = len(s.at)
			depth++
			s.at = append(s.at, i, 0)
		case '}', ']':
			if depth == 0 {
				s.at = s.at[:0]
				return
			}
			depth--
			s.at[open[depth]+1] = i + 1
		}
	}
	if depth != 0 {
		s.at = s.at[:0]
		return
	}
	s.doc = json
}

// SpansIn returns empty Spans that record into room's array (ValidTop
// records no more than it holds).
func SpansIn(room []int) Spans { return Spans{at: room[:0]} }

// Reset forgets the document, so that s keeps no reference to it.
func (s *Spans) Reset() { s.doc, s.at = "", s.at[:0] }

// Each is the package's Each for a value of the indexed document (any
// other value, or a nil s, is walked by scanning, as Each does).
func (s *Spans) Each(v gjson.Result, fn func(key, value gjson.Result) bool) {
	each(s, v, fn)
}

// end returns the index in json just past the container that starts at
// json[i], where json is a part of the indexed document; -1 when s does
// not know it.
func (s *Spans) end(json string, i int) int {
	if s == nil || s.doc == "" {
		return -1
	}
	base := uintptr(unsafe.Pointer(unsafe.StringData(s.doc)))
	p := uintptr(unsafe.Pointer(unsafe.StringData(json))) + uintptr(i)
	if p < base || p >= base+uintptr(len(s.doc)) {
		return -1
	}
	off := int(p - base)
	lo, hi := 0, len(s.at)/2
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if s.at[2*mid] < off {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo == len(s.at)/2 || s.at[2*lo] != off {
		return -1
	}
	return s.at[2*lo+1] - off + i
}
