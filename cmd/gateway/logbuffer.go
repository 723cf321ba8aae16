package main

import (
	"bytes"
	"io"
	"sync"
	"time"
)

// Under load the access log is a line per call, and writing each line on
// its own cost a system call per call, as much as the gateway's own work
// on a small request. logBuffer writes the first line after a quiet spell
// at once and gathers the lines that follow for up to one batch window,
// or until 32 KiB, and writes them together (Envoy batches its access log
// the same way). A warning or an error goes out at once, after what was
// gathered before it. Lines are never split: the log handler writes each
// whole.
type logBuffer struct {
	out    io.Writer
	window time.Duration

	mu     sync.Mutex
	buf    []byte
	batch  *time.Timer // set while a batch window is open
	closed bool
}

const logBufferLimit = 32 << 10

func newLogBuffer(out io.Writer, window time.Duration) *logBuffer {
	return &logBuffer{out: out, window: window}
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return l.out.Write(p)
	}
	if l.batch == nil {
		// Quiet until now: out at once, and gather what follows.
		l.batch = time.AfterFunc(l.window, l.endBatch)
		return l.out.Write(p)
	}
	l.buf = append(l.buf, p...)
	if len(l.buf) >= logBufferLimit || urgent(p) {
		l.flushLocked()
	}
	return len(p), nil
}

// urgent tells a warning or an error line of the JSON handler, whose level
// comes right after the time.
func urgent(line []byte) bool {
	head := line[:min(len(line), 80)]
	i := bytes.Index(head, []byte(`"level":"`))
	if i < 0 {
		return false
	}
	level := head[i+len(`"level":"`):]
	return bytes.HasPrefix(level, []byte("WARN")) || bytes.HasPrefix(level, []byte("ERROR"))
}

// endBatch writes what the window gathered; the next line after it is
// written at once again.
func (l *logBuffer) endBatch() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed {
		l.flushLocked()
		l.batch = nil
	}
}

func (l *logBuffer) flushLocked() {
	if len(l.buf) > 0 {
		_, _ = l.out.Write(l.buf)
		l.buf = l.buf[:0]
	}
}

// Close writes what is gathered; lines written later go out at once.
func (l *logBuffer) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.batch != nil {
		l.batch.Stop()
	}
	l.flushLocked()
	l.batch, l.closed = nil, true
}
