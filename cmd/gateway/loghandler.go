package main

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

// Every call writes an access line, and slog's JSONHandler spent about
// 11,000 instructions on each: 5% of all the gateway does for a small
// request. jsonLogHandler writes the same bytes for the records the gateway
// logs (string, integer, boolean and duration attributes at the top level)
// in less than half of that, and hands every other record to a JSONHandler that
// holds the same attributes and groups, so the output never depends on
// which of the two wrote a line. TestJSONLogHandlerMatchesSlog and
// FuzzJSONLogHandler hold the two to the same bytes.
type jsonLogHandler struct {
	slow  slog.Handler // slog's JSONHandler, with the same attributes and groups
	level slog.Leveler
	out   *lockedWriter
	pre   []byte // the WithAttrs attributes, formatted, each after a comma
	// slowOnly is set once a group is open or an attribute needs slog's own
	// formatting: from then on every record goes to slow.
	slowOnly bool
}

// lockedWriter gives both handlers one lock, so that each line is written
// whole, whichever handler wrote it.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func newJSONLogHandler(w io.Writer, level slog.Leveler) *jsonLogHandler {
	out := &lockedWriter{w: w}
	return &jsonLogHandler{
		slow:  slog.NewJSONHandler(out, &slog.HandlerOptions{Level: level}),
		level: level,
		out:   out,
	}
}

func (h *jsonLogHandler) Enabled(_ context.Context, l slog.Level) bool {
	return l >= h.level.Level()
}

func (h *jsonLogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	if len(attrs) == 0 {
		return h
	}
	n := *h
	n.slow = h.slow.WithAttrs(attrs)
	if !n.slowOnly {
		n.pre = append([]byte(nil), h.pre...)
		for _, a := range attrs {
			var ok bool
			if n.pre, ok = appendFastAttr(n.pre, a); !ok {
				n.slowOnly, n.pre = true, nil
				break
			}
		}
	}
	return &n
}

func (h *jsonLogHandler) WithGroup(name string) slog.Handler {
	n := *h
	n.slow, n.slowOnly, n.pre = h.slow.WithGroup(name), true, nil
	return &n
}

var logLinePool = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// maxPooledLogLine keeps a rare long line's buffer out of the pool.
const maxPooledLogLine = 16 << 10

func (h *jsonLogHandler) Handle(ctx context.Context, r slog.Record) error {
	if h.slowOnly {
		return h.slow.Handle(ctx, r)
	}
	bp := logLinePool.Get().(*[]byte)
	defer logLinePool.Put(bp)
	buf := append((*bp)[:0], '{')
	if !r.Time.IsZero() {
		t := r.Time.Round(0)
		if y := t.Year(); y < 0 || y >= 10000 {
			return h.slow.Handle(ctx, r) // slog writes its own error there
		}
		buf = append(buf, `"time":"`...)
		buf = t.AppendFormat(buf, time.RFC3339Nano)
		buf = append(buf, `",`...)
	}
	buf = append(buf, `"level":`...)
	buf = appendJSONString(buf, r.Level.String())
	buf = append(buf, `,"msg":`...)
	buf = appendJSONString(buf, r.Message)
	buf = append(buf, h.pre...)
	ok := true
	r.Attrs(func(a slog.Attr) bool {
		buf, ok = appendFastAttr(buf, a)
		return ok
	})
	if !ok {
		return h.slow.Handle(ctx, r)
	}
	buf = append(buf, '}', '\n')
	if cap(buf) <= maxPooledLogLine {
		*bp = buf
	}
	_, err := h.out.Write(buf)
	return err
}

// appendFastAttr appends ,"key":value for an attribute whose JSON slog
// writes exactly so, and reports false for any other: an empty key (slog
// may elide the attribute), groups, values that resolve or marshal.
func appendFastAttr(buf []byte, a slog.Attr) ([]byte, bool) {
	if a.Key == "" {
		return buf, false
	}
	v := a.Value
	switch v.Kind() {
	case slog.KindString, slog.KindInt64, slog.KindUint64, slog.KindBool, slog.KindDuration:
	default:
		return buf, false
	}
	buf = append(buf, ',')
	buf = appendJSONString(buf, a.Key)
	buf = append(buf, ':')
	switch v.Kind() {
	case slog.KindString:
		buf = appendJSONString(buf, v.String())
	case slog.KindInt64:
		buf = strconv.AppendInt(buf, v.Int64(), 10)
	case slog.KindUint64:
		buf = strconv.AppendUint(buf, v.Uint64(), 10)
	case slog.KindBool:
		buf = strconv.AppendBool(buf, v.Bool())
	case slog.KindDuration:
		buf = strconv.AppendInt(buf, int64(v.Duration()), 10) // as slog: nanoseconds
	}
	return buf, true
}

// appendJSONString appends s quoted and escaped as slog's JSONHandler
// escapes it (log/slog's appendEscapedJSONString, from encoding/json without
// HTML escaping): control characters, quote and backslash escaped, invalid
// UTF-8 as \ufffd, U+2028 and U+2029 escaped.
func appendJSONString(buf []byte, s string) []byte {
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(s); {
		if plainJSONByte[s[i]] {
			i++
			continue
		}
		if b := s[i]; b < utf8.RuneSelf {
			buf = append(buf, s[start:i]...)
			switch b {
			case '\\', '"':
				buf = append(buf, '\\', b)
			case '\n':
				buf = append(buf, '\\', 'n')
			case '\r':
				buf = append(buf, '\\', 'r')
			case '\t':
				buf = append(buf, '\\', 't')
			default:
				buf = append(buf, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1:
			buf = append(buf, s[start:i]...)
			buf = append(buf, `\ufffd`...)
		case c == '\u2028' || c == '\u2029':
			buf = append(buf, s[start:i]...)
			buf = append(buf, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}

const hexDigits = "0123456789abcdef"

// plainJSONByte tells the bytes appendJSONString copies as they are: ASCII
// but for control characters, quote and backslash.
var plainJSONByte = func() (t [256]bool) {
	for b := ' '; b < utf8.RuneSelf; b++ {
		t[b] = b != '"' && b != '\\'
	}
	return t
}()
