package normalize

import (
	"strconv"
	"sync"

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/internal/jsonscan"
)

// writer builds translated JSON by appending. changed records whether the
// output differs in meaning from the input, so callers can hand back the
// input itself when a translation found nothing to rewrite.
type writer struct {
	buf     []byte
	changed bool
	// spans index the document being translated when its validation
	// recorded none (conv.sp).
	spans jsonscan.Spans
}

var writerPool = sync.Pool{New: func() any { return &writer{buf: make([]byte, 0, 4096)} }}

func getWriter() *writer {
	w := writerPool.Get().(*writer)
	w.buf, w.changed = w.buf[:0], false
	return w
}

// release returns w to the pool unless its buffers grew unusually large.
func (w *writer) release() {
	w.spans.Reset()
	if cap(w.buf) <= 1<<20 {
		writerPool.Put(w)
	}
}

// bytes returns a copy of the output that the caller owns.
func (w *writer) bytes() []byte { return append([]byte(nil), w.buf...) }

func (w *writer) open(c byte) { w.buf = append(w.buf, c) }

func (w *writer) close(c byte) { w.buf = append(w.buf, c) }

// sep writes the comma between members when one is needed.
func (w *writer) sep() {
	if n := len(w.buf); n > 0 {
		if c := w.buf[n-1]; c != '{' && c != '[' {
			w.buf = append(w.buf, ',')
		}
	}
}

// key writes a member name that is a plain ASCII identifier.
func (w *writer) key(k string) {
	w.sep()
	w.buf = append(w.buf, '"')
	w.buf = append(w.buf, k...)
	w.buf = append(w.buf, '"', ':')
}

// rawKey writes a member name exactly as the input spelled it.
func (w *writer) rawKey(k gjson.Result) {
	w.sep()
	w.buf = append(w.buf, k.Raw...)
	w.buf = append(w.buf, ':')
}

func (w *writer) raw(v string) { w.buf = append(w.buf, v...) }

func (w *writer) elem() { w.sep() }

// quoted writes s, which must need no escaping (enum names, table values).
func (w *writer) quoted(s string) {
	w.buf = append(w.buf, '"')
	w.buf = append(w.buf, s...)
	w.buf = append(w.buf, '"')
}

func (w *writer) string(s string) { w.buf = gjson.AppendJSONString(w.buf, s) }

func (w *writer) bool(b bool) { w.buf = strconv.AppendBool(w.buf, b) }

func (w *writer) int(n int64) { w.buf = strconv.AppendInt(w.buf, n, 10) }

// member copies one input member unchanged.
func (w *writer) member(k, v gjson.Result) {
	w.rawKey(k)
	w.raw(v.Raw)
}
