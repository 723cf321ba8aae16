package main

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// syncBuffer records each write the log buffer makes.
type syncBuffer struct {
	mu     sync.Mutex
	writes []string
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.writes = append(b.writes, string(p))
	return len(p), nil
}

func (b *syncBuffer) snapshot() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.writes...)
}

// TestLogBufferBatches: the first line after a quiet spell is written at
// once, the lines that follow in the window are written together when it
// ends (or on Close), each whole, in order, and a full buffer goes out
// without waiting.
func TestLogBufferBatches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out syncBuffer
		l := newLogBuffer(&out, 100*time.Millisecond)
		l.Write([]byte("a\n"))
		if got := out.snapshot(); len(got) != 1 || got[0] != "a\n" {
			t.Fatalf("first line: %q", got)
		}
		l.Write([]byte("b\n"))
		l.Write([]byte("c\n"))
		if got := out.snapshot(); len(got) != 1 {
			t.Fatalf("lines in the window were written at once: %q", got)
		}
		time.Sleep(100 * time.Millisecond)
		synctest.Wait()
		if got := out.snapshot(); len(got) != 2 || got[1] != "b\nc\n" {
			t.Fatalf("after the window: %q", got)
		}
		l.Write([]byte("d\n")) // quiet again: at once
		if got := out.snapshot(); len(got) != 3 || got[2] != "d\n" {
			t.Fatalf("after a quiet spell: %q", got)
		}
		big := strings.Repeat("x", logBufferLimit) + "\n"
		l.Write([]byte(big))
		if got := out.snapshot(); len(got) != 4 || got[3] != big {
			t.Fatalf("a full buffer waited: %d writes", len(got))
		}
		l.Write([]byte("e\n"))
		warn := `{"time":"2026-11-29T20:11:05.119Z","level":"WARN","msg":"w"}` + "\n"
		l.Write([]byte(warn)) // out at once, after what was gathered
		if got := out.snapshot(); len(got) != 5 || got[4] != "e\n"+warn {
			t.Fatalf("a warning waited: %q", got[len(got)-1])
		}
		l.Close()
		l.Write([]byte("f\n"))
		got := out.snapshot()
		if strings.Join(got, "") != "a\nb\nc\nd\n"+big+"e\n"+warn+"f\n" {
			t.Fatalf("lines lost or reordered: %q", bytes.TrimSpace([]byte(strings.Join(got, ""))))
		}
	})
}
