package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"math"
	"testing"
	"time"
)

// logBoth writes r through jsonLogHandler and through slog's JSONHandler,
// each derived by derive, and returns both outputs.
func logBoth(t testing.TB, level slog.Level, derive func(slog.Handler) slog.Handler, records ...slog.Record) (fast, slow string) {
	t.Helper()
	var fb, sb bytes.Buffer
	fh := derive(newJSONLogHandler(&fb, level))
	sh := derive(slog.NewJSONHandler(&sb, &slog.HandlerOptions{Level: level}))
	for _, r := range records {
		if fh.Enabled(context.Background(), r.Level) != sh.Enabled(context.Background(), r.Level) {
			t.Fatalf("level %v: Enabled differs", r.Level)
		}
		if !fh.Enabled(context.Background(), r.Level) {
			continue
		}
		if err := fh.Handle(context.Background(), r.Clone()); err != nil {
			t.Fatal(err)
		}
		if err := sh.Handle(context.Background(), r.Clone()); err != nil {
			t.Fatal(err)
		}
	}
	return fb.String(), sb.String()
}

type logValuer struct{}

func (logValuer) LogValue() slog.Value { return slog.StringValue("resolved") }

func TestJSONLogHandlerMatchesSlog(t *testing.T) {
	at := time.Date(2026, 11, 30, 4, 5, 6, 789012345, time.UTC)
	record := func(level slog.Level, msg string, attrs ...slog.Attr) slog.Record {
		r := slog.NewRecord(at, level, msg, 0)
		r.AddAttrs(attrs...)
		return r
	}
	access := []slog.Attr{
		slog.String("caller_dialect", "0.3"), slog.String("backend_dialect", "1.0"),
		slog.String("op", "SendMessage"), slog.String("outcome", "ok"),
		slog.Duration("duration", 1234567*time.Nanosecond), slog.Int("bytes", 1712),
		slog.Int("code", -32001), slog.String("reason", "task not found"),
	}
	same := func(h slog.Handler) slog.Handler { return h }
	cases := []struct {
		name    string
		level   slog.Level
		derive  func(slog.Handler) slog.Handler
		records []slog.Record
	}{
		{"access line", slog.LevelInfo, func(h slog.Handler) slog.Handler { return h.WithAttrs([]slog.Attr{slog.String("agent", "bench")}) },
			[]slog.Record{record(slog.LevelInfo, "call", access...)}},
		{"no attributes", slog.LevelInfo, same, []slog.Record{record(slog.LevelInfo, "listening")}},
		{"zero time", slog.LevelInfo, same, []slog.Record{slog.NewRecord(time.Time{}, slog.LevelWarn, "no time", 0)}},
		{"local time zone", slog.LevelInfo, same, []slog.Record{slog.NewRecord(at.In(time.FixedZone("X", -3*3600-1800)), slog.LevelInfo, "tz", 0)}},
		{"monotonic clock reading", slog.LevelInfo, same, []slog.Record{slog.NewRecord(time.Now(), slog.LevelInfo, "now", 0)}},
		{"year past 9999", slog.LevelInfo, same, []slog.Record{slog.NewRecord(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), slog.LevelInfo, "future", 0)}},
		{"levels", slog.LevelDebug, same, []slog.Record{
			record(slog.LevelDebug, "d"), record(slog.LevelInfo+2, "i2"), record(slog.LevelError+4, "e4"), record(slog.LevelWarn-1, "w-1"),
		}},
		{"below the level", slog.LevelWarn, same, []slog.Record{record(slog.LevelInfo, "dropped"), record(slog.LevelError, "kept")}},
		{"escapes", slog.LevelInfo, same, []slog.Record{record(slog.LevelInfo, "q\"b\\n\nr\rt\t\x00\x1f\x7f<>&",
			slog.String("ké\"y", "v\u2028\u2029\xff\xfe é 😀"), slog.String("html", "<script>&amp;</script>"))}},
		{"numbers and booleans", slog.LevelInfo, same, []slog.Record{record(slog.LevelInfo, "n",
			slog.Int64("min", math.MinInt64), slog.Uint64("max", math.MaxUint64), slog.Bool("t", true), slog.Bool("f", false),
			slog.Duration("neg", -time.Second))}},
		{"kinds slog formats itself", slog.LevelInfo, same, []slog.Record{record(slog.LevelInfo, "k",
			slog.Float64("f", 0.1), slog.Float64("big", 1e21), slog.Time("t", at), slog.Any("err", errors.New("boom")),
			slog.Any("map", map[string]int{"a": 1}), slog.Any("nil", nil), slog.Any("valuer", logValuer{}),
			slog.Group("g", slog.Int("a", 1)), slog.Group("empty"), slog.Attr{}, slog.String("", "no key"))}},
		{"group after attributes", slog.LevelInfo, func(h slog.Handler) slog.Handler {
			return h.WithAttrs([]slog.Attr{slog.String("agent", "a")}).WithGroup("req").WithAttrs([]slog.Attr{slog.Int("n", 1)})
		}, []slog.Record{record(slog.LevelInfo, "grouped", slog.String("x", "y")), record(slog.LevelInfo, "empty group")}},
		{"attributes slog formats itself, then more", slog.LevelInfo, func(h slog.Handler) slog.Handler {
			return h.WithAttrs([]slog.Attr{slog.Any("v", logValuer{})}).WithAttrs([]slog.Attr{slog.Int("n", 2)})
		}, []slog.Record{record(slog.LevelInfo, "m", slog.String("x", "y"))}},
		{"empty WithAttrs and WithGroup", slog.LevelInfo, func(h slog.Handler) slog.Handler {
			return h.WithAttrs(nil).WithGroup("")
		}, []slog.Record{record(slog.LevelInfo, "m", slog.Int("n", 3))}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fast, slow := logBoth(t, tc.level, tc.derive, tc.records...)
			if fast != slow {
				t.Errorf("lines differ\n  jsonLogHandler: %s\n  slog:           %s", fast, slow)
			}
		})
	}
}

func FuzzJSONLogHandler(f *testing.F) {
	f.Add("call", "agent", "bench", "op", "SendMessage", int64(12), uint8(0), int64(1))
	f.Add("q\"\\\n\x00\xff\u2028", "k\u2029", "v\xc3", "", "", int64(-1), uint8(5), int64(0))
	f.Fuzz(func(t *testing.T, msg, k1, v1, k2, v2 string, n int64, kinds uint8, nanos int64) {
		at := time.Unix(0, nanos).UTC()
		r := slog.NewRecord(at, slog.Level(int(kinds%12)-4), msg, 0)
		r.AddAttrs(slog.String(k1, v1))
		switch kinds % 5 {
		case 0:
			r.AddAttrs(slog.Int64(k2, n))
		case 1:
			r.AddAttrs(slog.Duration(k2, time.Duration(n)))
		case 2:
			r.AddAttrs(slog.Bool(k2, n%2 == 0), slog.Uint64(v2, uint64(n)))
		case 3:
			r.AddAttrs(slog.Float64(k2, float64(n)/7))
		case 4:
			r.AddAttrs(slog.Group(k2, slog.String(v2, msg)))
		}
		derive := func(h slog.Handler) slog.Handler { return h.WithAttrs([]slog.Attr{slog.String(v2, k2)}) }
		fast, slow := logBoth(t, slog.LevelDebug-4, derive, r)
		if fast != slow {
			t.Errorf("lines differ\n  jsonLogHandler: %q\n  slog:           %q", fast, slow)
		}
	})
}

func BenchmarkAccessLogLine(b *testing.B) {
	r := slog.NewRecord(time.Now(), slog.LevelInfo, "call", 0)
	r.AddAttrs(slog.String("caller_dialect", "0.3"), slog.String("backend_dialect", "1.0"),
		slog.String("op", "SendMessage"), slog.String("outcome", "ok"),
		slog.Duration("duration", 1234567*time.Nanosecond), slog.Int("bytes", 1712))
	handlers := []struct {
		name string
		h    slog.Handler
	}{
		{"jsonLogHandler", newJSONLogHandler(io.Discard, slog.LevelInfo)},
		{"slog.JSONHandler", slog.NewJSONHandler(io.Discard, nil)},
	}
	for _, h := range handlers {
		handler := h.h.WithAttrs([]slog.Attr{slog.String("agent", "bench")})
		b.Run(h.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = handler.Handle(context.Background(), r)
			}
		})
	}
}
