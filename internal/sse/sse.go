// Package sse reads and writes text/event-stream framing (WHATWG server-sent
// events) with a size limit on every event, for a proxy that passes streams on.
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
)

// DefaultMaxEventBytes is the event size limit NewReader applies when it
// is given a limit of zero or less.
const DefaultMaxEventBytes = 1 << 20

// sseReadBufferSize is the bufio buffer size. Lines longer than this are
// assembled in a side buffer, so it bounds nothing but the read size: 2 KiB
// holds a few of the usual A2A events (a few hundred bytes each), which a
// relay passes on in one write.
const sseReadBufferSize = 2048

// readBuffers are the bufio readers of the streams that are reading. A
// Reader that waits for its source with nothing buffered holds none: it
// waits in a read into 128 bytes of its own, and takes a buffer once bytes
// came, so an idle stream costs 2 KiB less.
var readBuffers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, sseReadBufferSize) }}

// keptBufferBytes bounds what a reader keeps, between events, of a buffer
// a large event or line grew: a stream that once carried a large artifact
// and then idles would hold up to the event limit for as long as it stays
// open. Past this size, allocating afresh costs little beside the event's
// own translation.
const keptBufferBytes = 8 << 10

// sseFieldPrefixSlack is the length of "retry: ", the longest known field
// prefix. An ignored line may be this much longer than the event limit, so a
// partial line is only ever judged once its field name is settled.
const sseFieldPrefixSlack = len("retry: ")

var (
	// ErrEventTooLarge reports an event whose data and comment bytes exceed
	// the reader's limit, or a single line whose value does.
	ErrEventTooLarge = errors.New("sse: event exceeds the size limit")

	// ErrTruncated reports a stream that ended inside an event, after some
	// of its lines but before the blank line that dispatches it. It wraps
	// io.ErrUnexpectedEOF.
	ErrTruncated = fmt.Errorf("sse: stream ended inside an event: %w", io.ErrUnexpectedEOF)

	// ErrNeedsRead is what TryNext returns when the next event is not
	// all buffered yet. It is not final: Next reads on from where it was.
	ErrNeedsRead = errors.New("sse: the next event is not buffered yet")
)

var sseBOM = []byte("\xEF\xBB\xBF")

// Event is one server-sent event as the WHATWG spec frames it.
//
// Data is nil for a block that WHATWG does not dispatch as a message: a run of
// comment lines, or a block that only set id or retry (those still change the
// client's last event ID or reconnection time, so a proxy must pass them on).
// A non-nil Data, even empty, is a dispatched message.
type Event struct {
	ID      string // last "id:" field value of the event ("" if none)
	HasID   bool   // an "id" field was present, even with an empty value
	Type    string // "event:" field ("" means "message"); always "" when Data is nil
	Data    []byte // "data:" lines joined with "\n"; nil when no data line was seen
	Comment []byte // the text of ":" comment lines, joined with "\n" (keep-alives); nil if none
	Retry   string // last "retry:" value consisting of ASCII digits only, unparsed; "" if none
}

// Reader splits a text/event-stream into events, following the WHATWG
// event stream interpretation:
// https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation
//
// Two deliberate differences serve a proxy. The stream is not UTF-8 decoded:
// bytes pass through unchanged, so the end client's decoder sees what the
// upstream sent (framing is unaffected, as CR, LF and ':' never occur inside a
// multi-byte sequence). And "id" is reported per event (HasID) rather than
// carried over to later events, so it is re-emitted only where it was sent.
//
// A Reader is not safe for concurrent use.
type Reader struct {
	src io.Reader
	br  *bufio.Reader // from readBuffers; nil while waiting with nothing buffered
	// first is what br reads from: the bytes the wait read, then src.
	first firstRead
	// resumed is set while br holds what a wait's read began: the next
	// refill reads on in br, and the one after that waits again.
	resumed bool
	max     int
	err     error // sticky: once set, every Next returns it

	noRead  bool   // TryNext is running: return ErrNeedsRead rather than read
	started bool   // the leading byte-order mark has been looked for
	skipLF  bool   // the last line ended in CR, so a leading LF completes that line end
	noLF    bool   // the unread part of the bufio buffer holds no LF
	line    []byte // assembles a line that spans buffer refills

	// inBlock reports whether a field line has been seen since the last blank
	// line. Comment lines before it form a run that is returned on its own.
	inBlock    bool
	data       []byte
	hasData    bool
	comment    []byte
	hasComment bool
	id         []byte
	hasID      bool
	typ        []byte
	retry      []byte
	hasRetry   bool

	// The strings last handed out, reused when the bytes repeat: event types
	// mostly do, and this saves an allocation per event.
	idStr, typStr, retryStr string
}

// NewReader returns a reader of the events in r. An event whose data and
// comment bytes together exceed maxEventBytes is rejected with
// ErrEventTooLarge, as is an id, event or retry value longer than that or
// an ignored line longer than maxEventBytes plus a field prefix. A
// maxEventBytes of zero or less means DefaultMaxEventBytes.
//
// Between events the reader keeps buffers of up to keptBufferBytes.
func NewReader(r io.Reader, maxEventBytes int) *Reader {
	if maxEventBytes <= 0 {
		maxEventBytes = DefaultMaxEventBytes
	}
	return &Reader{
		src: r,
		max: maxEventBytes,
		// Non-nil from the start: a nil Data or Comment means "none" in Event.
		data:    make([]byte, 0, 512),
		comment: make([]byte, 0, 64),
	}
}

// Next returns the next event: one dispatched at a blank line, or a run of
// comment lines on their own. A comment run is returned as soon as the blank
// line, or the next complete non-comment line, shows that it ended, so
// keep-alives can be passed on; comment lines after a field line belong to
// that event. A block without data lines is not a message (Data is nil) and is
// returned only if it carried a comment, an id or a retry value.
//
// Data and Comment alias the reader's buffers and stay valid only until the
// next call of Next.
//
// At the end of the stream an event not terminated by a blank line is not
// dispatched (WHATWG): Next returns ErrTruncated if the stream stopped after
// a field line or inside a line, and io.EOF otherwise. Complete comment lines
// are still returned first, as they are before any other error, unless they
// are what exceeded the size limit. Past the size limit Next returns
// ErrEventTooLarge at once, without reading the rest of the event. Every
// error is final: later calls return it again.
func (r *Reader) Next() (Event, error) {
	if r.err != nil {
		return Event{}, r.err
	}
	for {
		line, err := r.readLine()
		if err == ErrNeedsRead {
			return Event{}, err
		}
		if err != nil {
			return r.fail(err)
		}
		ev, ok, err := r.processLine(line)
		if err != nil {
			return r.fail(err)
		}
		if ok {
			return ev, nil
		}
	}
}

// TryNext is Next from the bytes already buffered: when they hold no
// complete event it returns ErrNeedsRead, having consumed what they do
// hold, and a later Next or TryNext goes on from there. A relay uses it to
// tell when its source has nothing more ready, the moment to flush.
func (r *Reader) TryNext() (Event, error) {
	r.noRead = true
	ev, err := r.Next()
	r.noRead = false
	return ev, err
}

// fail records err as final and returns a pending comment run first, since its
// lines are complete.
func (r *Reader) fail(err error) (Event, error) {
	if err == io.EOF && (len(r.line) > 0 || r.inBlock) {
		err = ErrTruncated
	} else if errors.Is(err, ErrEventTooLarge) {
		err = fmt.Errorf("%w of %d bytes", ErrEventTooLarge, r.max)
	}
	r.err = err
	if r.hasComment && !r.inBlock {
		return r.takeComment(), nil
	}
	return Event{}, err
}

// readLine returns the next line without its line end. The line aliases the
// bufio buffer or r.line and stays valid until the next readLine call.
func (r *Reader) readLine() ([]byte, error) {
	for {
		buf, err := r.buffered()
		if err != nil {
			return nil, err
		}
		if !r.started {
			if r.noRead && buf[0] == sseBOM[0] && len(buf) < len(sseBOM) {
				return nil, ErrNeedsRead // the Peek below would read
			}
			r.started = true
			if buf[0] == sseBOM[0] {
				// May block for two more bytes, but only when the stream starts
				// with 0xEF, which no well-formed first line does.
				if b, _ := r.br.Peek(len(sseBOM)); bytes.Equal(b, sseBOM) {
					r.discard(len(sseBOM))
				}
				r.noLF = false
				continue
			}
		}
		if r.skipLF {
			r.skipLF = false
			if buf[0] == '\n' {
				r.discard(1)
				continue
			}
		}
		end := r.lineEnd(buf)
		if end < 0 {
			r.line = append(r.line, buf...)
			r.discard(len(buf))
			if err := r.checkLine(r.line, false); err != nil {
				return nil, err
			}
			continue
		}
		line := buf[:end]
		if len(r.line) > 0 {
			line = append(r.line, line...)
			r.line = reuse(line)
		}
		n := end + 1
		if buf[end] == '\r' {
			// A CR ends the line at once, so an event ending in CR is never
			// held back waiting for the next read; an LF that follows, here or
			// at the start of the next read, is part of the same line end.
			if end+1 == len(buf) {
				r.skipLF = true
			} else if buf[end+1] == '\n' {
				n++
			}
		}
		// The line still aliases buf: Discard only moves the read index, and
		// nothing refills the buffer before the line is processed.
		r.discard(n)
		return line, nil
	}
}

// buffered returns the unread bytes of the bufio buffer, reading once from the
// source if there are none.
func (r *Reader) buffered() ([]byte, error) {
	n := 0
	if r.br != nil {
		n = r.br.Buffered()
	}
	if n == 0 && r.noRead {
		return nil, ErrNeedsRead
	}
	if n == 0 {
		r.noLF = false
		if r.br == nil || !r.resumed {
			if err := r.wait(); err != nil {
				return nil, err
			}
			r.resumed = true
		} else {
			r.resumed = false
		}
		if _, err := r.br.Peek(1); err != nil {
			return nil, err
		}
		n = r.br.Buffered()
	}
	buf, _ := r.br.Peek(n) // n bytes are buffered, so Peek cannot fail
	return buf, nil
}

// wait gives the empty bufio reader back, reads the first bytes the source
// has into a small buffer of its own, and takes a reader again to read from
// those bytes on.
func (r *Reader) wait() error {
	if r.br != nil {
		r.br.Reset(nil)
		readBuffers.Put(r.br)
		r.br = nil
	}
	f := &r.first
	f.src = r.src
	// As bufio does, a source that keeps returning nothing is given up on.
	for range 100 {
		n, err := r.src.Read(f.buf[:])
		if n > 0 {
			f.head, f.err = f.buf[:n], err
			r.br = readBuffers.Get().(*bufio.Reader)
			r.br.Reset(f)
			return nil
		}
		if err != nil {
			return err
		}
	}
	return io.ErrNoProgress
}

// firstRead is the source as a Reader resumes it after a wait: the bytes
// the wait read, then the rest.
type firstRead struct {
	buf  [128]byte
	head []byte // what is left of the wait's bytes
	err  error  // what the wait's read returned with them
	src  io.Reader
}

func (f *firstRead) Read(p []byte) (int, error) {
	if len(f.head) == 0 {
		if err := f.err; err != nil {
			f.err = nil
			return 0, err
		}
		return f.src.Read(p)
	}
	n := copy(p, f.head)
	f.head = f.head[n:]
	if len(f.head) > 0 {
		return n, nil
	}
	err := f.err
	f.err = nil
	return n, err
}

// discard drops n bytes that are already buffered, which cannot fail.
func (r *Reader) discard(n int) {
	_, _ = r.br.Discard(n)
}

// lineEnd returns the index of the first CR or LF in buf, or -1.
func (r *Reader) lineEnd(buf []byte) int {
	lf := -1
	// Remembering that the buffer has no LF keeps a CR-only stream from
	// rescanning the whole buffer for every line.
	if !r.noLF {
		lf = bytes.IndexByte(buf, '\n')
		r.noLF = lf < 0
	}
	return firstLineEnd(buf, lf)
}

// firstLineEnd returns the index of the first CR in buf before lf, the
// index of its first LF (-1: none), else lf.
func firstLineEnd(buf []byte, lf int) int {
	head := buf
	if lf >= 0 {
		head = buf[:lf]
	}
	if cr := bytes.IndexByte(head, '\r'); cr >= 0 {
		return cr
	}
	return lf
}

// processLine applies one complete line and reports whether it finished an
// event to return.
func (r *Reader) processLine(line []byte) (Event, bool, error) {
	if len(line) == 0 {
		ev, ok := r.endBlock()
		return ev, ok, nil
	}
	if err := r.checkLine(line, true); err != nil {
		return Event{}, false, err
	}
	kind, value := sseClassify(line, true)
	if kind == sseComment {
		r.comment = sseAppendLine(r.comment, r.hasComment, value)
		r.hasComment = true
		return Event{}, false, nil
	}
	var run Event
	flushRun := false
	if !r.inBlock {
		r.inBlock = true
		if r.hasComment {
			run, flushRun = r.takeComment(), true
		}
	}
	switch kind {
	case sseData:
		r.data = sseAppendLine(r.data, r.hasData, value)
		r.hasData = true
	case sseEventType:
		r.typ = append(r.typ[:0], value...)
	case sseID:
		if bytes.IndexByte(value, 0) < 0 {
			r.id = append(r.id[:0], value...)
			r.hasID = true
		}
	case sseRetry:
		if sseIsDigits(value) {
			r.retry = append(r.retry[:0], value...)
			r.hasRetry = true
		}
	}
	return run, flushRun, nil
}

// checkLine returns ErrEventTooLarge if line, or the line it is the start
// of when not complete, would take the event past the limit. The sizes only
// grow as a partial line grows, so a line rejected early would be rejected
// complete too, and chunking never changes the outcome.
func (r *Reader) checkLine(line []byte, complete bool) error {
	kind, value := sseClassify(line, complete)
	var size int
	switch kind {
	case sseComment:
		size = len(r.data) + len(r.comment) + len(value)
		if r.hasComment {
			size++
		}
	case sseData:
		if r.inBlock {
			size = len(r.data) + len(r.comment)
		} // else a pending comment run is returned on its own and does not count
		size += len(value)
		if r.hasData {
			size++
		}
	case sseOther:
		size = len(line) - sseFieldPrefixSlack
	default:
		size = len(value)
	}
	if size <= r.max {
		return nil
	}
	if kind == sseComment {
		// The comments themselves overflowed: none of them is returned.
		r.comment, r.hasComment = r.comment[:0], false
	}
	return ErrEventTooLarge
}

// endBlock handles a blank line and reports whether it finished an event.
func (r *Reader) endBlock() (Event, bool) {
	if !r.inBlock {
		if r.hasComment {
			return r.takeComment(), true
		}
		return Event{}, false
	}
	var ev Event
	if r.hasData {
		ev.Data = r.data[:len(r.data):len(r.data)]
		if len(r.typ) > 0 {
			ev.Type = sseCachedString(&r.typStr, r.typ)
		}
	}
	if r.hasComment {
		ev.Comment = r.comment[:len(r.comment):len(r.comment)]
	}
	if r.hasID {
		ev.ID, ev.HasID = sseCachedString(&r.idStr, r.id), true
	}
	if r.hasRetry {
		ev.Retry = sseCachedString(&r.retryStr, r.retry)
	}
	ok := r.hasData || r.hasComment || r.hasID || r.hasRetry
	// The buffers keep their bytes until the next Next appends to them, so the
	// slices in ev stay valid until then.
	r.inBlock = false
	r.data, r.hasData = reuse(r.data), false
	r.comment, r.hasComment = reuse(r.comment), false
	r.typ, r.id, r.retry = reuse(r.typ), reuse(r.id), reuse(r.retry)
	r.hasID, r.hasRetry = false, false
	return ev, ok
}

// takeComment returns the pending comments as an event of their own.
func (r *Reader) takeComment() Event {
	ev := Event{Comment: r.comment[:len(r.comment):len(r.comment)]}
	r.comment, r.hasComment = reuse(r.comment), false
	return ev
}

// reuse empties a buffer whose bytes were handed out, letting one that
// grew past keptBufferBytes go: the next append allocates. It is never nil,
// as a nil Data or Comment means "none".
func reuse(b []byte) []byte {
	if cap(b) > keptBufferBytes {
		return []byte{}
	}
	return b[:0]
}

type sseLineKind uint8

const (
	sseOther sseLineKind = iota // unknown field, ignored
	sseComment
	sseData
	sseEventType
	sseID
	sseRetry
)

// sseClassify returns the kind of line and its value: the text after the
// colon without one leading space. It looks only at the known field prefixes,
// never scans the line, so a long partial line costs nothing to classify. A
// line without a colon is a field with an empty value, which only a complete
// line can be.
func sseClassify(line []byte, complete bool) (sseLineKind, []byte) {
	var name string
	var kind sseLineKind
	switch line[0] {
	case ':':
		return sseComment, sseTrimSpace(line[1:])
	case 'd':
		name, kind = "data", sseData
	case 'e':
		name, kind = "event", sseEventType
	case 'i':
		name, kind = "id", sseID
	case 'r':
		name, kind = "retry", sseRetry
	default:
		return sseOther, nil
	}
	n := len(name)
	if len(line) > n && line[n] == ':' && string(line[:n]) == name {
		return kind, sseTrimSpace(line[n+1:])
	}
	if complete && string(line) == name {
		return kind, nil
	}
	return sseOther, nil
}

func sseTrimSpace(value []byte) []byte {
	if len(value) > 0 && value[0] == ' ' {
		return value[1:]
	}
	return value
}

// sseAppendLine appends value to buf, after an LF if buf already holds a line.
func sseAppendLine(buf []byte, hasLine bool, value []byte) []byte {
	if hasLine {
		buf = append(buf, '\n')
	}
	return append(buf, value...)
}

func sseIsDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(b) > 0
}

func sseCachedString(cache *string, b []byte) string {
	if string(b) != *cache { // the comparison does not allocate
		*cache = string(b)
	}
	return *cache
}

// AppendEvent appends the wire form of ev to dst: "id:", "event:" and
// "retry:" lines, one "data:" line per line of Data, one ": text" line per
// line of Comment, then a blank line, all with LF line ends.
//
// A field is written when set: ID when HasID, Type and Retry when not empty,
// Data and Comment when not nil (an empty non-nil Data is one empty "data:"
// line, a dispatched empty message). CR, LF and CRLF inside Data and Comment
// all start a new line, and an ID, Type or Retry value is cut at its first CR
// or LF: a value can never inject fields of its own. Any event an Reader
// returns reads back unchanged.
func AppendEvent(dst []byte, ev Event) []byte {
	dst = slices.Grow(dst, len(ev.ID)+len(ev.Type)+len(ev.Retry)+len(ev.Data)+len(ev.Comment)+32)
	if ev.HasID {
		dst = sseAppendField(dst, "id", sseFirstLine(ev.ID))
	}
	if ev.Type != "" {
		dst = sseAppendField(dst, "event", sseFirstLine(ev.Type))
	}
	if ev.Retry != "" {
		dst = sseAppendField(dst, "retry", sseFirstLine(ev.Retry))
	}
	if ev.Data != nil {
		dst = sseAppendLines(dst, "data", ev.Data)
	}
	if ev.Comment != nil {
		dst = sseAppendLines(dst, "", ev.Comment)
	}
	return append(dst, '\n')
}

// sseAppendField appends one "name: value" line. The space is written only
// before a value, and then always, so a value that starts with a space keeps it.
func sseAppendField[T string | []byte](dst []byte, name string, value T) []byte {
	dst = append(dst, name...)
	dst = append(dst, ':')
	if len(value) > 0 {
		dst = append(dst, ' ')
		dst = append(dst, value...)
	}
	return append(dst, '\n')
}

// sseAppendLines appends one field line per line of text.
func sseAppendLines(dst []byte, name string, text []byte) []byte {
	for {
		i := sseIndexLineEnd(text)
		if i < 0 {
			return sseAppendField(dst, name, text)
		}
		dst = sseAppendField(dst, name, text[:i])
		if text[i] == '\r' && i+1 < len(text) && text[i+1] == '\n' {
			i++
		}
		text = text[i+1:]
	}
}

func sseIndexLineEnd(b []byte) int { return firstLineEnd(b, bytes.IndexByte(b, '\n')) }

func sseFirstLine(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		return s[:i]
	}
	return s
}
