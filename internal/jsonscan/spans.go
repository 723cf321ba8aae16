package jsonscan

import (
	"math"
	"unsafe"

	"github.com/tidwall/gjson"
)

// Spans are where the containers of one document end, by where they start.
// A walk with Each reads every nesting level again at the level above it,
// to step over the value it will then descend into: a task's text was
// scanned once per enclosing object and array, five to seven times in all,
// and that was a third of a translated request's instructions. Spans.Each
// steps over a container of the document in one lookup instead.
//
// ValidSpans records them while it validates, so that a body read once
// (an envelope, then its params or result) is not scanned again to index
// it; Index records them for a document validated elsewhere. Spans are a
// value: a copy reads the same spans, and the zero Spans know none.
type Spans struct {
	doc string
	// n spans are recorded, in the order their containers open (so by
	// offset): in room, or in more once they outgrew it.
	n       int
	room    [roomSpans]span
	more    []span
	spilled bool
}

// span is one container: its offset in the document and the offset just
// past it.
type span struct{ start, end uint32 }

// roomSpans is how many containers Spans hold without allocating: the
// envelope of a send with its message, or of a task with a short history
// (short containers take no room, see shortSpan). Spans ride in Envelope
// and Reply, on the stacks of the calls that translate: a larger room
// doubles a keep-alive connection's stack (proxy's BenchmarkCallStack).
const roomSpans = 24

// shortSpan is the length below which a container is not recorded:
// scanning it costs about what the lookup does, and leaving the many small
// parts and metadata objects out keeps a document's spans within room.
const shortSpan = 64

// spansWorthIt is the smallest document Index records: below it the scans
// a lookup saves cost less than the pass that records them.
const spansWorthIt = 512

// ValidSpans is Valid that also records in spans where b's containers end,
// replacing what spans held, in the same pass: b must then not change
// while spans are used. On false, spans know none.
func ValidSpans(b []byte, spans *Spans) bool {
	spans.Reset()
	rec := spans
	if uint64(len(b)) > math.MaxUint32 {
		rec = nil // offsets are 32 bits: such a document is walked by scanning
	}
	if !valid(b, rec) {
		spans.Reset()
		return false
	}
	spans.doc = String(b)
	return true
}

// Index records doc's container spans, replacing what s held, for a
// document that was validated without recording them. doc must be a
// document Valid accepted and must not change while s is used; a document
// too small to gain is left unindexed, and s.Each then scans.
func (s *Spans) Index(doc []byte) {
	s.Reset()
	if len(doc) < spansWorthIt || uint64(len(doc)) > math.MaxUint32 {
		return
	}
	json := String(doc)
	var open [MaxDepth]int // the slot of each enclosing container
	depth := 0
	for i := 0; i < len(json); i++ {
		switch json[i] {
		case '"':
			end, _ := skipString(json, i)
			i = end - 1
		case '{', '[':
			if depth == MaxDepth {
				s.Reset()
				return
			}
			open[depth] = s.open(i)
			depth++
		case '}', ']':
			if depth == 0 {
				s.Reset()
				return
			}
			depth--
			s.close(open[depth], i+1)
		}
	}
	if depth != 0 {
		s.Reset()
		return
	}
	s.doc = json
}

// Reset forgets the document, so that s keeps no reference to it; s keeps
// the room it grew.
func (s *Spans) Reset() { s.doc, s.n, s.more, s.spilled = "", 0, s.more[:0], false }

// Holds reports whether doc is a part of the document s indexes.
func (s *Spans) Holds(doc []byte) bool {
	if s == nil || s.doc == "" || len(doc) == 0 {
		return false
	}
	base := uintptr(unsafe.Pointer(unsafe.StringData(s.doc)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(doc)))
	return p >= base && p+uintptr(len(doc)) <= base+uintptr(len(s.doc))
}

// Each is the package's Each for a value of the indexed document (any
// other value, or a nil s, is walked by scanning, as Each does).
func (s *Spans) Each(v gjson.Result, fn func(key, value gjson.Result) bool) {
	each(s, v, fn)
}

// spans returns the spans recorded.
func (s *Spans) spans() []span {
	if s.spilled {
		return s.more[:s.n]
	}
	return s.room[:s.n]
}

// open records a container that starts at offset i, its end not yet
// known, and returns its slot.
func (s *Spans) open(i int) int {
	k := s.n
	switch {
	case s.spilled:
		s.more = append(s.more, span{start: uint32(i)})
	case k < len(s.room):
		s.room[k] = span{start: uint32(i)}
	default:
		if cap(s.more) == 0 {
			s.more = make([]span, 0, 4*len(s.room)) // one allocation for a long history
		}
		s.more = append(append(s.more[:0], s.room[:]...), span{start: uint32(i)})
		s.spilled = true
	}
	s.n++
	return k
}

// close notes that the container in slot k ends just before offset end.
// A short one goes, and with it the containers recorded after it: they
// are inside it, so shorter still.
func (s *Spans) close(k, end int) {
	sp := &s.spans()[k]
	if end-int(sp.start) < shortSpan {
		s.n = k
		if s.spilled {
			s.more = s.more[:k]
		}
		return
	}
	sp.end = uint32(end)
}

// end returns the index in json just past the container that starts at
// json[i], where json is a part of the indexed document; -1 when s does
// not know it.
func (s *Spans) end(json string, i int) int {
	if s == nil || s.n == 0 {
		return -1
	}
	base := uintptr(unsafe.Pointer(unsafe.StringData(s.doc)))
	p := uintptr(unsafe.Pointer(unsafe.StringData(json))) + uintptr(i)
	if p < base || p >= base+uintptr(len(s.doc)) {
		return -1
	}
	off := uint32(p - base)
	at := s.spans()
	lo, hi := 0, len(at)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if at[mid].start < off {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo == len(at) || at[lo].start != off {
		return -1
	}
	// A document changed since it was indexed must not slice past json.
	if end := int(at[lo].end-off) + i; end <= len(json) && at[lo].end > off {
		return end
	}
	return -1
}
