package normalize

import (
	"github.com/tidwall/gjson"
)

// Translation walks a document level by level, and each level must find
// where every nested object or array ends before it can go on: a text at
// depth d was scanned d times, which made the skipping of containers the
// largest single cost of a translation. spans records, in one pass, where
// every container of a document opens and ends, and each carries it from a
// value to the values inside it (in gjson.Result's Indexes, which gjson
// sets only for '#' queries the translators never make), so a container's
// end becomes a lookup. gjson's own ForEach reads Indexes as element
// offsets: walk values that came from each with each, never ForEach. A value that did not come from each, such as a
// gjson.Get result, has no spans and is skipped by scanning, as before.

// parseWithSpans is parse for a document the translators will walk: its
// root value carries the document's container spans, recorded in *spans
// (reused: pass the same slice back for the next document).
func parseWithSpans(b []byte, spans *[]int) gjson.Result {
	*spans = containerSpans(str(b), (*spans)[:0])
	return withSpans(parse(b), *spans)
}

// docSpans is where a value sits in the document it was read from, with the
// spans of that whole document, recorded while it was validated (see
// validJSONSpans). The zero docSpans knows nothing: the value is scanned.
type docSpans struct {
	at    int
	spans []int
}

// root is the gjson view of value, which sits where d says, carrying d's
// spans; without them it is parseWithSpans.
func (d docSpans) root(value []byte, scratch *[]int) gjson.Result {
	if d.spans == nil {
		return parseWithSpans(value, scratch)
	}
	return d.view(value)
}

// view is the gjson view of value with d's spans if it has any, else the
// plain parse.
func (d docSpans) view(value []byte) gjson.Result {
	root := withSpans(parse(value), d.spans)
	// Offsets in spans are the document's.
	root.Index = d.at
	return root
}

// derefSpans is *spans, or nil.
func derefSpans(spans *[]int) []int {
	if spans == nil {
		return nil
	}
	return *spans
}

// withSpans is v carrying spans, unless they are too few to help.
func withSpans(v gjson.Result, spans []int) gjson.Result {
	if len(spans) > 2 { // a flat document gains nothing
		v.Indexes = spans
	}
	return v
}

// containerSpans appends, for each object or array of the validated
// document json in order of its opening bracket, the bracket's offset and
// the offset just past its closing one.
func containerSpans(json string, spans []int) []int {
	var open [MaxDepth]int // where in spans each enclosing container is
	depth := 0
	for i := 0; i < len(json); i++ {
		switch json[i] {
		case '"':
			end, _ := skipString(json, i)
			i = end - 1
		case '{', '[':
			if depth == MaxDepth {
				return spans[:0] // not validated; walk by scanning
			}
			open[depth] = len(spans)
			depth++
			spans = append(spans, i, 0)
		case '}', ']':
			if depth == 0 {
				return spans[:0]
			}
			depth--
			spans[open[depth]+1] = i + 1
		}
	}
	if depth != 0 {
		return spans[:0]
	}
	return spans
}

// spanEnd returns the end of the container that opens at offset in the
// document spans describe, or -1 when spans has none there.
func spanEnd(spans []int, offset int) int {
	// A binary search over the opening offsets, written out: sort.Search
	// calls a closure per probe (0.5% of a request's instructions).
	lo, hi := 0, len(spans)/2
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if spans[2*mid] < offset {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo == len(spans)/2 || spans[2*lo] != offset {
		return -1
	}
	return spans[2*lo+1]
}
