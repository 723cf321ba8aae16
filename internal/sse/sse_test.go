package sse_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/a2agate/gateway/internal/sse"
)

// sseFramingCase is one input stream and the events and final error every
// chunking of it must produce.
type sseFramingCase struct {
	name    string
	input   string
	max     int // event size limit; 0 means sseTestLimit
	want    []sse.Event
	wantErr error // io.EOF, sse.ErrTruncated or sse.ErrEventTooLarge
}

const sseTestLimit = 1 << 16

func sseData(s string) sse.Event    { return sse.Event{Data: []byte(s)} }
func sseComment(s string) sse.Event { return sse.Event{Comment: []byte(s)} }

var (
	sseLongValue  = strings.Repeat("0123456789", 1000) // spans several bufio buffers
	sseLongCROnly = strings.Repeat("data: "+strings.Repeat("c", 300)+"\r", 40) + "\r"
)

var sseFramingCases = []sseFramingCase{
	{name: "empty stream", input: "", wantErr: io.EOF},
	{name: "blank lines only", input: "\n\r\n\r\n\n", wantErr: io.EOF},
	{name: "LF", input: "data: hello\n\n", want: []sse.Event{sseData("hello")}, wantErr: io.EOF},
	{name: "CRLF", input: "data: hello\r\n\r\n", want: []sse.Event{sseData("hello")}, wantErr: io.EOF},
	{name: "lone CR", input: "data: hello\r\r", want: []sse.Event{sseData("hello")}, wantErr: io.EOF},
	{
		name: "mixed line ends", input: "data: a\r\ndata: b\rdata: c\n\r\n",
		want: []sse.Event{sseData("a\nb\nc")}, wantErr: io.EOF,
	},
	{
		name: "CR CR LF is a line end then a blank line", input: "data: a\r\r\ndata: b\n\n",
		want: []sse.Event{sseData("a"), sseData("b")}, wantErr: io.EOF,
	},
	{name: "LF CR is a line end then a blank line", input: "data: a\n\r", want: []sse.Event{sseData("a")}, wantErr: io.EOF},
	{
		name: "CR inside a line ends it", input: "data: a\rb: c\n\n",
		want: []sse.Event{sseData("a")}, wantErr: io.EOF,
	},
	{
		name: "multi-line data", input: "data: a\ndata: b\ndata: c\n\n",
		want: []sse.Event{sseData("a\nb\nc")}, wantErr: io.EOF,
	},
	{
		name: "empty data lines", input: "data\ndata:\ndata: \n\n",
		want: []sse.Event{sseData("\n\n")}, wantErr: io.EOF,
	},
	{name: "field without colon dispatches empty data", input: "data\n\n", want: []sse.Event{sseData("")}, wantErr: io.EOF},
	{
		name: "only one space after the colon is removed", input: "data:x\n\ndata:  x \n\n",
		want: []sse.Event{sseData("x"), sseData(" x ")}, wantErr: io.EOF,
	},
	{name: "colon in value", input: "data: a: b:c\n\n", want: []sse.Event{sseData("a: b:c")}, wantErr: io.EOF},
	{
		name: "id event retry", input: "id: 42\nevent: status\nretry: 1500\ndata: {}\n\n",
		want:    []sse.Event{{ID: "42", HasID: true, Type: "status", Retry: "1500", Data: []byte("{}")}},
		wantErr: io.EOF,
	},
	{
		name: "last field wins", input: "id: 1\nid: 2\nevent: a\nevent: b\nretry: 1\nretry: 2\ndata: x\n\n",
		want:    []sse.Event{{ID: "2", HasID: true, Type: "b", Retry: "2", Data: []byte("x")}},
		wantErr: io.EOF,
	},
	{
		name: "id with NUL is ignored", input: "id: 1\nid: a\x00b\ndata: x\n\nid: \x00\ndata: y\n\n",
		want:    []sse.Event{{ID: "1", HasID: true, Data: []byte("x")}, sseData("y")},
		wantErr: io.EOF,
	},
	{
		name: "empty id is kept", input: "id\ndata: x\n\nid:\ndata: y\n\n",
		want:    []sse.Event{{HasID: true, Data: []byte("x")}, {HasID: true, Data: []byte("y")}},
		wantErr: io.EOF,
	},
	{
		name: "retry that is not all digits is ignored", input: "retry: 10s\ndata: x\n\nretry:\ndata: y\n\nretry: -1\ndata: z\n\n",
		want:    []sse.Event{sseData("x"), sseData("y"), sseData("z")},
		wantErr: io.EOF,
	},
	{
		name: "event type does not carry over", input: "event: a\ndata: 1\n\ndata: 2\n\n",
		want:    []sse.Event{{Type: "a", Data: []byte("1")}, sseData("2")},
		wantErr: io.EOF,
	},
	{
		name: "empty data buffer is not dispatched", input: "event: a\n\nevent: b\nfoo: bar\n\ndata: x\n\n",
		want: []sse.Event{sseData("x")}, wantErr: io.EOF,
	},
	{
		name: "id only block is passed on", input: "id: 7\n\n",
		want: []sse.Event{{ID: "7", HasID: true}}, wantErr: io.EOF,
	},
	{
		name: "retry only block is passed on without its type", input: "event: x\nretry: 3000\n\n",
		want: []sse.Event{{Retry: "3000"}}, wantErr: io.EOF,
	},
	{name: "unknown fields are ignored", input: "foo: bar\ndata: x\nDATA: y\ndatax: z\n\n", want: []sse.Event{sseData("x")}, wantErr: io.EOF},
	{name: "comment alone", input: ": ping\n\n", want: []sse.Event{sseComment("ping")}, wantErr: io.EOF},
	{name: "empty comment", input: ":\n\n", want: []sse.Event{sseComment("")}, wantErr: io.EOF},
	{
		name: "comment run", input: ": a\n:b\n:  c\n\n",
		want: []sse.Event{sseComment("a\nb\n c")}, wantErr: io.EOF,
	},
	{
		name: "comment run ends at the first field line", input: ": ka\ndata: x\n\n",
		want: []sse.Event{sseComment("ka"), sseData("x")}, wantErr: io.EOF,
	},
	{
		name: "comment run before an ignored block", input: ": ka\nevent: x\n\n",
		want: []sse.Event{sseComment("ka")}, wantErr: io.EOF,
	},
	{
		name: "comments after a field belong to the event", input: "data: x\n: c1\ndata: y\n: c2\n\n",
		want: []sse.Event{{Data: []byte("x\ny"), Comment: []byte("c1\nc2")}}, wantErr: io.EOF,
	},
	{
		name: "comments between events", input: "data: 1\n\n: ka\n\n: ka\n\ndata: 2\n\n",
		want: []sse.Event{sseData("1"), sseComment("ka"), sseComment("ka"), sseData("2")}, wantErr: io.EOF,
	},
	{
		name: "comment in a block without data", input: "id: 3\n: c\n\n",
		want: []sse.Event{{ID: "3", HasID: true, Comment: []byte("c")}}, wantErr: io.EOF,
	},
	{name: "BOM is skipped", input: "\xEF\xBB\xBFdata: x\n\n", want: []sse.Event{sseData("x")}, wantErr: io.EOF},
	{name: "BOM alone", input: "\xEF\xBB\xBF", wantErr: io.EOF},
	{name: "only the first BOM is skipped", input: "\xEF\xBB\xBF\xEF\xBB\xBFdata: x\n\n", wantErr: io.EOF},
	{
		name: "BOM after the start is data", input: "data: a\n\n\xEF\xBB\xBFdata: b\n\ndata: \xEF\xBB\xBF\n\n",
		want: []sse.Event{sseData("a"), sseData("\xEF\xBB\xBF")}, wantErr: io.EOF,
	},
	{name: "partial BOM is part of the line", input: "\xEF\xBBdata: x\n\n", wantErr: io.EOF},
	{
		name: "bytes pass through undecoded", input: "data: \xff\xfe caf\xc3\xa9\n\n",
		want: []sse.Event{sseData("\xff\xfe caf\xc3\xa9")}, wantErr: io.EOF,
	},
	{name: "unterminated final event", input: "data: a\n\ndata: b\n", want: []sse.Event{sseData("a")}, wantErr: sse.ErrTruncated},
	{name: "unterminated final event ending in CR", input: "data: a\r", wantErr: sse.ErrTruncated},
	{name: "stream cut inside a line", input: "data: a\n\ndata: b", want: []sse.Event{sseData("a")}, wantErr: sse.ErrTruncated},
	{name: "stream cut after an ignored field", input: "event: x\n", wantErr: sse.ErrTruncated},
	{name: "stream cut inside a comment", input: ": ka", wantErr: sse.ErrTruncated},
	{
		name: "complete comments before a cut are returned", input: ": a\n: b",
		want: []sse.Event{sseComment("a")}, wantErr: sse.ErrTruncated,
	},
	{name: "comment run at the end is a clean end", input: ": ka\n", want: []sse.Event{sseComment("ka")}, wantErr: io.EOF},
	{
		name: "long line spans buffers", input: "id: " + sseLongValue + "\ndata: " + sseLongValue + "\n: " + sseLongValue + "\n\n",
		want:    []sse.Event{{ID: sseLongValue, HasID: true, Data: []byte(sseLongValue), Comment: []byte(sseLongValue)}},
		wantErr: io.EOF,
	},
	{
		name: "CR only stream longer than the buffer", input: sseLongCROnly,
		want: []sse.Event{sseData(strings.Repeat(strings.Repeat("c", 300)+"\n", 39) + strings.Repeat("c", 300))}, wantErr: io.EOF,
	},
	{name: "event at the limit", max: 8, input: "data: 1234\ndata: 567\n\n", want: []sse.Event{sseData("1234\n567")}, wantErr: io.EOF},
	{name: "oversize data line", max: 8, input: "data: 123456789\n\ndata: x\n\n", wantErr: sse.ErrEventTooLarge},
	{name: "oversize multi-line event", max: 8, input: "data: 1234\ndata: 5678\n\n", wantErr: sse.ErrEventTooLarge},
	{name: "oversize by empty data lines", max: 2, input: "data\ndata\ndata\ndata\n\n", wantErr: sse.ErrEventTooLarge},
	{name: "oversize unterminated line", max: 8, input: "data: 123456789", wantErr: sse.ErrEventTooLarge},
	{
		name: "events before the oversize one are returned", max: 8, input: "data: ok\n\ndata: 123456789\n\n",
		want: []sse.Event{sseData("ok")}, wantErr: sse.ErrEventTooLarge,
	},
	{name: "oversize comment", max: 4, input: ": 12345\n\n", wantErr: sse.ErrEventTooLarge},
	{name: "oversize comment run", max: 4, input: ": 12\n: 34\n\n", wantErr: sse.ErrEventTooLarge},
	{name: "data and comment at the limit", max: 4, input: "data: 12\n: 34\n\n", want: []sse.Event{{Data: []byte("12"), Comment: []byte("34")}}, wantErr: io.EOF},
	{name: "oversize data and comment", max: 3, input: "data: 12\n: 34\n\n", wantErr: sse.ErrEventTooLarge},
	{name: "oversize comment and data", max: 3, input: "id: 1\n: 12\ndata: 34\n\n", wantErr: sse.ErrEventTooLarge},
	{
		name: "comment run before an oversize event is returned", max: 4, input: ": ka\ndata: 123456\n\n",
		want: []sse.Event{sseComment("ka")}, wantErr: sse.ErrEventTooLarge,
	},
	{
		name: "comment run does not count toward the next event", max: 4, input: ": ka\ndata: 1234\n\n",
		want: []sse.Event{sseComment("ka"), sseData("1234")}, wantErr: io.EOF,
	},
	{
		// Read a byte at a time, "data" could still become "data:..." or "datax...":
		// judging it early as a complete data line would count a separator too many.
		name: "partial line is not judged before its field is known", max: 3, input: "data: abc\ndatax: y\n\n",
		want: []sse.Event{sseData("abc")}, wantErr: io.EOF,
	},
	{name: "oversize id", max: 4, input: "id: 12345\ndata: x\n\n", wantErr: sse.ErrEventTooLarge},
	{name: "oversize event type", max: 4, input: "event: 12345\ndata: x\n\n", wantErr: sse.ErrEventTooLarge},
	{name: "oversize ignored line", max: 4, input: "x: " + strings.Repeat("y", 20) + "\n\n", wantErr: sse.ErrEventTooLarge},
	{name: "ignored line at its limit", max: 4, input: "xx: 123456\n\n", wantErr: io.EOF},
}

// sseRead collects every event of src until Next fails, copying Data and
// Comment because the reader reuses its buffers.
func sseRead(src io.Reader, limit int) ([]sse.Event, error) {
	r := sse.NewReader(src, limit)
	var events []sse.Event
	for {
		ev, err := r.Next()
		if err != nil {
			return events, err
		}
		ev.Data = bytes.Clone(ev.Data) // Clone keeps nil as nil and empty as empty
		ev.Comment = bytes.Clone(ev.Comment)
		events = append(events, ev)
	}
}

// sseReadAsRelay is sseRead reading as the proxy's relay does: from what is
// buffered while it holds a complete event (TryNext), and from the source
// only when it does not. TryNext must never read: it would block a relay
// that has events to flush.
func sseReadAsRelay(src io.Reader, limit int) ([]sse.Event, error) {
	guard := &sseReadGuard{r: src}
	r := sse.NewReader(guard, limit)
	var events []sse.Event
	for {
		guard.forbidden = true
		ev, err := r.TryNext()
		guard.forbidden = false
		if guard.violated {
			return events, errors.New("TryNext read from the source")
		}
		if errors.Is(err, sse.ErrNeedsRead) {
			ev, err = r.Next()
		}
		if err != nil {
			return events, err
		}
		ev.Data = bytes.Clone(ev.Data)
		ev.Comment = bytes.Clone(ev.Comment)
		events = append(events, ev)
	}
}

type sseReadGuard struct {
	r                   io.Reader
	forbidden, violated bool
}

func (g *sseReadGuard) Read(p []byte) (int, error) {
	if g.forbidden {
		g.violated = true
	}
	return g.r.Read(p)
}

// sseChunkReader returns data in chunks of random size between 1 and maxChunk.
type sseChunkReader struct {
	data     []byte
	rng      *rand.Rand
	maxChunk int
}

func (c *sseChunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := min(1+c.rng.IntN(c.maxChunk), len(p), len(c.data))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

// sseReaderShapes are the ways a case's input is served; all must give the same events.
func sseReaderShapes() []struct {
	name string
	open func([]byte) io.Reader
} {
	shapes := []struct {
		name string
		open func([]byte) io.Reader
	}{
		{"whole", func(b []byte) io.Reader { return bytes.NewReader(b) }},
		{"OneByteReader", func(b []byte) io.Reader { return iotest.OneByteReader(bytes.NewReader(b)) }},
		{"HalfReader", func(b []byte) io.Reader { return iotest.HalfReader(bytes.NewReader(b)) }},
		{"DataErrReader", func(b []byte) io.Reader { return iotest.DataErrReader(bytes.NewReader(b)) }},
	}
	for seed, maxChunk := range []int{2, 3, 7, 64, 5000} {
		shapes = append(shapes, struct {
			name string
			open func([]byte) io.Reader
		}{
			fmt.Sprintf("random chunks up to %d", maxChunk),
			func(b []byte) io.Reader {
				return &sseChunkReader{data: b, rng: rand.New(rand.NewPCG(uint64(seed), 0x55e)), maxChunk: maxChunk}
			},
		})
	}
	return shapes
}

func TestSSEReaderFraming(t *testing.T) {
	t.Parallel()
	for _, tc := range sseFramingCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			limit := tc.max
			if limit == 0 {
				limit = sseTestLimit
			}
			for _, shape := range sseReaderShapes() {
				for mode, read := range map[string]func(io.Reader, int) ([]sse.Event, error){"Next": sseRead, "TryNext, then Next": sseReadAsRelay} {
					got, err := read(shape.open([]byte(tc.input)), limit)
					if !errors.Is(err, tc.wantErr) {
						t.Errorf("%s, %s: final error = %v, want %v", shape.name, mode, err, tc.wantErr)
					}
					if !reflect.DeepEqual(got, tc.want) {
						t.Errorf("%s, %s: events mismatch\n got: %s\nwant: %s", shape.name, mode, sseFormat(got), sseFormat(tc.want))
					}
				}
			}
		})
	}
}

// sseFormat prints events readably, keeping nil and empty slices apart.
func sseFormat(events []sse.Event) string {
	var b strings.Builder
	for _, ev := range events {
		fmt.Fprintf(&b, "{ID:%q HasID:%v Type:%q Retry:%q Data:%s Comment:%s} ",
			sseShorten(ev.ID), ev.HasID, ev.Type, ev.Retry, sseQuote(ev.Data), sseQuote(ev.Comment))
	}
	return b.String()
}

func sseQuote(b []byte) string {
	if b == nil {
		return "nil"
	}
	return fmt.Sprintf("%q", sseShorten(string(b)))
}

func sseShorten(s string) string {
	if len(s) > 80 {
		return fmt.Sprintf("%s...(%d bytes)", s[:80], len(s))
	}
	return s
}

// sseScriptedReader serves fixed chunks, one per Read, then fails the test if
// read again while strict.
type sseScriptedReader struct {
	t      *testing.T
	chunks []string
	strict bool
}

var errSSEReadPastEvent = errors.New("read past the end of the event")

func (s *sseScriptedReader) Read(p []byte) (int, error) {
	if len(s.chunks) == 0 {
		if s.strict {
			s.t.Error("Next read beyond the event it had to return")
			return 0, errSSEReadPastEvent
		}
		return 0, io.EOF
	}
	n := copy(p, s.chunks[0])
	s.chunks[0] = s.chunks[0][n:]
	if s.chunks[0] == "" {
		s.chunks = s.chunks[1:]
	}
	return n, nil
}

func TestSSEReaderCRLFSplitAcrossReads(t *testing.T) {
	t.Parallel()
	// If the CR at the end of one read and the LF at the start of the next were
	// two line ends, the LF would be a blank line and dispatch "a" early.
	src := &sseScriptedReader{t: t, chunks: []string{"data: a\r", "\ndata: b\r", "\n\r", "\n: c\r", "\n\r", "\n"}}
	got, err := sseRead(src, sseTestLimit)
	want := []sse.Event{sseData("a\nb"), sseComment("c")}
	if err != io.EOF {
		t.Errorf("final error = %v, want io.EOF", err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("events mismatch\n got: %s\nwant: %s", sseFormat(got), sseFormat(want))
	}
}

// A proxy must pass an event on as soon as its blank line has arrived, never
// wait for the next read to see whether an LF follows a CR.
func TestSSEReaderDoesNotReadAhead(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		chunks []string
		want   sse.Event
	}{
		{"LF", []string{"data: a\n\n"}, sseData("a")},
		{"CRLF", []string{"data: a\r\n\r\n"}, sseData("a")},
		{"CR", []string{"data: a\r\r"}, sseData("a")},
		{"CR at the end of each read", []string{"data: a\r", "\r"}, sseData("a")},
		{"LF then CR", []string{"data: a\n\r"}, sseData("a")},
		{"keep-alive", []string{": ping\n\n"}, sseComment("ping")},
		{"keep-alive with CR", []string{":\r\r"}, sseComment("")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := sse.NewReader(&sseScriptedReader{t: t, chunks: tc.chunks, strict: true}, sseTestLimit)
			got, err := r.Next()
			if err != nil {
				t.Fatalf("Next() error = %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Next() = %s, want %s", sseFormat([]sse.Event{got}), sseFormat([]sse.Event{tc.want}))
			}
		})
	}
}

// sseCountingReader serves "data: " and then endless 'x' bytes, counting what
// it hands out; it stops after a large cap so a failing reader cannot hang.
type sseCountingReader struct {
	prefix string
	n      int
}

const sseCountingCap = 64 << 20

func (c *sseCountingReader) Read(p []byte) (int, error) {
	if c.n >= sseCountingCap {
		return 0, io.EOF
	}
	k := 0
	for k < len(p) && c.n < sseCountingCap {
		if c.n < len(c.prefix) {
			p[k] = c.prefix[c.n]
		} else {
			p[k] = 'x'
		}
		k++
		c.n++
	}
	return k, nil
}

func TestSSEReaderStopsAtTheLimit(t *testing.T) {
	t.Parallel()
	const limit = 10000
	for _, prefix := range []string{"data: ", ": ", "id: ", "unknown: "} {
		t.Run(prefix, func(t *testing.T) {
			t.Parallel()
			src := &sseCountingReader{prefix: prefix}
			_, err := sse.NewReader(src, limit).Next()
			if !errors.Is(err, sse.ErrEventTooLarge) {
				t.Fatalf("Next() error = %v, want ErrEventTooLarge", err)
			}
			// One bufio buffer of reading past the limit is the most allowed.
			if maxRead := limit + len(prefix) + 4096; src.n > maxRead {
				t.Errorf("read %d bytes before failing, want at most %d", src.n, maxRead)
			}
		})
	}
}

func TestSSEReaderErrorsAreFinal(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		src     io.Reader
		want    []sse.Event
		wantErr error
	}{
		{"EOF", strings.NewReader("data: a\n\n"), []sse.Event{sseData("a")}, io.EOF},
		{"too large", strings.NewReader("data: 123456789\n\ndata: a\n\n"), nil, sse.ErrEventTooLarge},
		{"truncated", strings.NewReader("data: a"), nil, sse.ErrTruncated},
		{
			"source error", iotest.TimeoutReader(strings.NewReader("data: a\n\ndata: b\n\n")),
			[]sse.Event{sseData("a"), sseData("b")}, iotest.ErrTimeout,
		},
		{
			"source error after a comment run", io.MultiReader(strings.NewReader(": ka\n"), iotest.ErrReader(iotest.ErrTimeout)),
			[]sse.Event{sseComment("ka")}, iotest.ErrTimeout,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := sse.NewReader(tc.src, 8)
			var got []sse.Event
			var err error
			for err == nil {
				var ev sse.Event
				if ev, err = r.Next(); err == nil {
					ev.Data, ev.Comment = bytes.Clone(ev.Data), bytes.Clone(ev.Comment)
					got = append(got, ev)
				}
			}
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("final error = %v, want %v", err, tc.wantErr)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("events mismatch\n got: %s\nwant: %s", sseFormat(got), sseFormat(tc.want))
			}
			for range 3 {
				if ev, again := r.Next(); again != err || !reflect.DeepEqual(ev, sse.Event{}) {
					t.Errorf("Next() after %v = (%s, %v), want the same error and no event", err, sseFormat([]sse.Event{ev}), again)
				}
			}
		})
	}
}

func TestSSEReaderTruncatedWrapsUnexpectedEOF(t *testing.T) {
	t.Parallel()
	if !errors.Is(sse.ErrTruncated, io.ErrUnexpectedEOF) {
		t.Error("ErrTruncated does not wrap io.ErrUnexpectedEOF")
	}
}

func TestSSEReaderDefaultLimit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		size    int
		wantErr error
	}{
		{sse.DefaultMaxEventBytes, io.EOF},
		{sse.DefaultMaxEventBytes + 1, sse.ErrEventTooLarge},
	} {
		input := "data: " + strings.Repeat("x", tc.size) + "\n\n"
		for _, limit := range []int{0, -1} {
			got, err := sseRead(strings.NewReader(input), limit)
			if !errors.Is(err, tc.wantErr) {
				t.Errorf("NewReader(limit %d), %d-byte event: error = %v, want %v", limit, tc.size, err, tc.wantErr)
			}
			if wantEvents := tc.wantErr == io.EOF; (len(got) == 1) != wantEvents {
				t.Errorf("NewReader(limit %d), %d-byte event: got %d events", limit, tc.size, len(got))
			}
		}
	}
}

func TestAppendSSEEvent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		ev   sse.Event
		want string
	}{
		{
			name: "all fields",
			ev:   sse.Event{ID: "1", HasID: true, Type: "status", Retry: "10", Data: []byte("a\nb"), Comment: []byte("c")},
			want: "id: 1\nevent: status\nretry: 10\ndata: a\ndata: b\n: c\n\n",
		},
		{name: "plain message", ev: sseData(`{"a":1}`), want: "data: {\"a\":1}\n\n"},
		{name: "empty data is one empty line", ev: sseData(""), want: "data:\n\n"},
		{name: "trailing newline in data", ev: sseData("a\n"), want: "data: a\ndata:\n\n"},
		{name: "keep-alive", ev: sseComment(""), want: ":\n\n"},
		{name: "multi-line comment", ev: sseComment("a\n b"), want: ": a\n:  b\n\n"},
		{name: "empty id", ev: sse.Event{HasID: true}, want: "id:\n\n"},
		{name: "leading space kept", ev: sse.Event{ID: " x", HasID: true, Data: []byte(" y")}, want: "id:  x\ndata:  y\n\n"},
		{name: "id without HasID is not written", ev: sse.Event{ID: "1", Data: []byte("x")}, want: "data: x\n\n"},
		{
			name: "CR and CRLF in data start new lines",
			ev:   sseData("a\rid: 2\r\nb\r\n"),
			want: "data: a\ndata: id: 2\ndata: b\ndata:\n\n",
		},
		{name: "CR in comment starts a new line", ev: sseComment("a\rdata: x"), want: ": a\n: data: x\n\n"},
		{
			name: "line breaks cannot inject fields through id, type or retry",
			ev:   sse.Event{ID: "1\ndata: evil", HasID: true, Type: "t\revent: evil", Retry: "5\r\n\r\ndata: evil"},
			want: "id: 1\nevent: t\nretry: 5\n\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := sse.AppendEvent([]byte("prefix\n"), tc.ev)
			if string(got) != "prefix\n"+tc.want {
				t.Errorf("AppendEvent() = %q, want %q", got, "prefix\n"+tc.want)
			}
		})
	}
}

// sseRandomEvent returns an event of the shape an Reader can return: no CR
// anywhere, no LF or NUL in single-line fields, a type only on a message, and
// not empty.
func sseRandomEvent(rng *rand.Rand) sse.Event {
	const multiLine = "ab :\n\x00 é{}\""
	const singleLine = "ab :\x00é{}\" "
	text := func(alphabet string, maxLen int) []byte {
		runes := []rune(alphabet)
		b := []byte{}
		for range rng.IntN(maxLen + 1) {
			b = append(b, string(runes[rng.IntN(len(runes))])...)
		}
		return b
	}
	for {
		var ev sse.Event
		if rng.IntN(4) > 0 {
			ev.Data = text(multiLine, 40)
			if rng.IntN(2) == 0 {
				ev.Type = string(text(singleLine, 10))
			}
		}
		if rng.IntN(3) == 0 {
			ev.Comment = text(multiLine, 20)
		}
		if rng.IntN(2) == 0 {
			ev.ID, ev.HasID = strings.ReplaceAll(string(text(singleLine, 10)), "\x00", ""), true
		}
		if rng.IntN(4) == 0 {
			ev.Retry = fmt.Sprint(rng.IntN(100000))
		}
		if ev.Data != nil || ev.Comment != nil || ev.HasID || ev.Retry != "" {
			return ev
		}
	}
}

func TestSSERoundTrip(t *testing.T) {
	t.Parallel()
	events := []sse.Event{
		sseData(""),
		sseData("\n"),
		sseData(" leading space\n\ttab\n"),
		sseComment(""),
		sseComment("a\n\nb"),
		{ID: "", HasID: true},
		{Retry: "0"},
		{ID: "é:1", HasID: true, Type: "status-update", Retry: "250", Data: []byte(`{"kind":"status-update"}`), Comment: []byte(" x ")},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		events = append(events, sseRandomEvent(rng))
	}
	var stream []byte
	for _, ev := range events {
		one := sse.AppendEvent(nil, ev)
		got, err := sseRead(bytes.NewReader(one), sseTestLimit)
		if err != io.EOF || len(got) != 1 || !reflect.DeepEqual(got[0], ev) {
			t.Errorf("round trip of %s through %q = %s, %v", sseFormat([]sse.Event{ev}), one, sseFormat(got), err)
		}
		stream = append(stream, one...)
	}
	// Back to back, the events must still come apart the same way.
	got, err := sseRead(iotest.HalfReader(bytes.NewReader(stream)), sseTestLimit)
	if err != io.EOF || !reflect.DeepEqual(got, events) {
		t.Errorf("round trip of %d concatenated events gave %d events, error %v", len(events), len(got), err)
	}
}

// sseRepeatReader serves chunk over and over, without end.
type sseRepeatReader struct {
	chunk []byte
	off   int
}

func (s *sseRepeatReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		k := copy(p[n:], s.chunk[s.off:])
		n += k
		s.off = (s.off + k) % len(s.chunk)
	}
	return n, nil
}

// sseBenchStreams repeat ~500-byte events as an A2A stream carries them.
var sseBenchStreams = func() []struct {
	name   string
	stream string
	events int
} {
	payload := `{"jsonrpc":"2.0","id":"req-1","result":{"kind":"status-update","taskId":"` +
		`0f9c2f4e-6c53-4b7c-9f3e-1c2b7a4d5e6f","contextId":"c2e1a6b0-3d4f-4e5a-8b9c-0d1e2f3a4b5c",` +
		`"status":{"state":"working","message":{"role":"agent","parts":[{"kind":"text","text":"` +
		strings.Repeat("partial answer ", 16) + `"}]},"timestamp":"2025-06-01T12:00:00Z"},"final":false}}`
	return []struct {
		name   string
		stream string
		events int
	}{
		{"data", "data: " + payload + "\n\n", 1},
		{
			// Two ids in turn, so every event needs a new id string as in a real stream.
			"id-event-data",
			"id: 1717243200000-42\nevent: status-update\ndata: " + payload + "\n\n" +
				"id: 1717243200000-43\nevent: status-update\ndata: " + payload + "\n\n",
			2,
		},
		{"multi-line-CRLF", "data: " + payload[:250] + "\r\ndata: " + payload[250:] + "\r\n\r\n", 1},
	}
}()

func BenchmarkSSEReader(b *testing.B) {
	for _, bc := range sseBenchStreams {
		b.Run(bc.name, func(b *testing.B) {
			r := sse.NewReader(&sseRepeatReader{chunk: []byte(bc.stream)}, sseTestLimit)
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.stream) / bc.events))
			events := 0
			for b.Loop() {
				if _, err := r.Next(); err != nil {
					b.Fatal(err)
				}
				events++
			}
			b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

func BenchmarkAppendSSEEvent(b *testing.B) {
	ev := sse.Event{ID: "1717243200000-42", HasID: true, Type: "status-update", Data: bytes.Repeat([]byte("x"), 480)}
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		buf = sse.AppendEvent(buf[:0], ev)
	}
}

// Lock in the hot path: reading an event allocates nothing but a new id
// string, and appending into a large enough buffer allocates nothing.
func TestSSEAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("alloc counts are not checked in -short mode")
	}
	for _, bc := range sseBenchStreams {
		r := sse.NewReader(&sseRepeatReader{chunk: []byte(bc.stream)}, sseTestLimit)
		want := 0.0
		if strings.HasPrefix(bc.stream, "id:") {
			want = 1 // the ID string; the type string is reused while it repeats
		}
		if got := testing.AllocsPerRun(200, func() {
			if _, err := r.Next(); err != nil {
				t.Fatal(err)
			}
		}); got != want {
			t.Errorf("%s: Next() allocates %v times per event, want %v", bc.name, got, want)
		}
	}
	ev := sse.Event{ID: "1", HasID: true, Type: "t", Data: []byte("a\nb"), Comment: []byte("c")}
	buf := make([]byte, 0, 256)
	if got := testing.AllocsPerRun(200, func() { buf = sse.AppendEvent(buf[:0], ev) }); got != 0 {
		t.Errorf("AppendEvent() allocates %v times, want 0", got)
	}
}
