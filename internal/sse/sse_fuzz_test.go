package sse_test

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"testing"
	"testing/iotest"

	"github.com/a2agate/gateway/internal/sse"
)

// FuzzSSEReader feeds arbitrary bytes to an Reader with an arbitrary limit
// from 1 to 65536 bytes (limitMinus1 + 1). Properties:
//   - it never panics and always ends with io.EOF, ErrTruncated,
//     ErrEventTooLarge or nothing else;
//   - no event is empty or larger than the limit, and only messages have a type;
//   - reading one byte at a time gives the same events and error as reading
//     all at once, so chunking never changes framing;
//   - every event written back with AppendEvent reads back unchanged;
//   - reading as the relay does (TryNext, and Next only when it needs a
//     read) gives the same events, and TryNext never reads.
func FuzzSSEReader(f *testing.F) {
	for _, tc := range sseFramingCases {
		limit := tc.max
		if limit == 0 {
			limit = sseTestLimit
		}
		f.Add([]byte(tc.input), uint16(limit-1))
	}
	f.Fuzz(func(t *testing.T, input []byte, limitMinus1 uint16) {
		limit := int(limitMinus1) + 1
		whole, wholeErr := sseRead(bytes.NewReader(input), limit)
		if !sseExpectedEnd(wholeErr) {
			t.Fatalf("final error = %v, want io.EOF, ErrTruncated or ErrEventTooLarge", wholeErr)
		}
		for i, ev := range whole {
			if size := len(ev.Data) + len(ev.Comment); size > limit {
				t.Errorf("event %d has %d data and comment bytes, limit %d", i, size, limit)
			}
			if ev.Data == nil && ev.Comment == nil && !ev.HasID && ev.Retry == "" {
				t.Errorf("event %d is empty: %s", i, sseFormat([]sse.Event{ev}))
			}
			if ev.Data == nil && ev.Type != "" {
				t.Errorf("event %d has type %q but no data", i, ev.Type)
			}
			wire := sse.AppendEvent(nil, ev)
			back, err := sseRead(bytes.NewReader(wire), limit)
			if err != io.EOF || len(back) != 1 || !reflect.DeepEqual(back[0], ev) {
				t.Errorf("event %d %s written as %q reads back as %s, %v",
					i, sseFormat([]sse.Event{ev}), wire, sseFormat(back), err)
			}
		}

		oneByte, oneByteErr := sseRead(iotest.OneByteReader(bytes.NewReader(input)), limit)
		if sseErrKind(oneByteErr) != sseErrKind(wholeErr) {
			t.Errorf("one byte at a time: final error = %v, all at once: %v", oneByteErr, wholeErr)
		}
		if !reflect.DeepEqual(oneByte, whole) {
			t.Errorf("one byte at a time gives different events\n one byte: %s\nall at once: %s", sseFormat(oneByte), sseFormat(whole))
		}
		for _, src := range []io.Reader{bytes.NewReader(input), iotest.OneByteReader(bytes.NewReader(input)), iotest.HalfReader(bytes.NewReader(input))} {
			relayed, relayedErr := sseReadAsRelay(src, limit)
			if sseErrKind(relayedErr) != sseErrKind(wholeErr) || !reflect.DeepEqual(relayed, whole) {
				t.Errorf("read as the relay does: %s, %v\nwith Next alone: %s, %v", sseFormat(relayed), relayedErr, sseFormat(whole), wholeErr)
			}
		}
	})
}

func sseExpectedEnd(err error) bool {
	return err == io.EOF || errors.Is(err, sse.ErrTruncated) || errors.Is(err, sse.ErrEventTooLarge)
}

func sseErrKind(err error) string {
	switch {
	case err == io.EOF:
		return "EOF"
	case errors.Is(err, sse.ErrTruncated):
		return "truncated"
	case errors.Is(err, sse.ErrEventTooLarge):
		return "too large"
	}
	return "other: " + err.Error()
}
