package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/a2agate/gateway/internal/testredis"
)

type sendWireCase struct {
	name string
	rec  SendRecord
	// wire is the record as stored, as the first layout wrote it too (so
	// that a rolling upgrade reads either replica's).
	wire string
}

func sendWireCases() []sendWireCase {
	at := func(s string) time.Time {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			panic(err)
		}
		return t
	}
	return []sendWireCase{
		{"running, with a lease", SendRecord{Digest: "9c5d1e0f3b7a2c64", State: SendRunning, Holder: "gw-3f9a1c",
			Lease: at("2031-05-07T18:00:30.123456789Z"), Expires: at("2031-05-07T18:10:00.5Z")},
			`1935943800500000|{"d":"9c5d1e0f3b7a2c64","s":"running","h":"gw-3f9a1c","l":"2031-05-07T18:00:30.123456789Z","e":"2031-05-07T18:10:00.5Z"}`},
		{"a task, an id to escape, a zone east", SendRecord{Digest: "d", State: SendTask, TaskID: "task\"<&>\u2028\\é",
			Expires: at("2031-05-07T23:40:00.000001+05:30")},
			`1935943800000001|{"d":"d","s":"task","t":"task\"\u003c\u0026\u003e\u2028\\é","e":"2031-05-07T23:40:00.000001+05:30"}`},
		{"a message answered, a zone west", SendRecord{Digest: "d2", State: SendMessage,
			Answer: []byte(`{"messageId":"r1","role":"ROLE_AGENT","parts":[{"text":"hi <b>&</b>"}]}`), AnswerDialect: "1",
			Expires: at("2031-05-07T11:10:00-07:00")},
			`1935943800000000|{"d":"d2","s":"message","a":"eyJtZXNzYWdlSWQiOiJyMSIsInJvbGUiOiJST0xFX0FHRU5UIiwicGFydHMiOlt7InRleHQiOiJoaSA8Yj4mPC9iPiJ9XX0=","ad":"1","e":"2031-05-07T11:10:00-07:00"}`},
		{"not accepted, the least", SendRecord{State: SendNotAccepted, Expires: at("2031-05-07T18:10:00.000123Z")},
			`1935943800000123|{"d":"","s":"not_accepted","e":"2031-05-07T18:10:00.000123Z"}`},
		{"lease and expiry in two zones", SendRecord{Digest: "d", State: SendRunning, Holder: "h",
			Lease: at("2031-05-07T19:00:30+01:00"), Expires: at("2031-05-07T18:10:00.999999999Z")},
			`1935943800999999|{"d":"d","s":"running","h":"h","l":"2031-05-07T19:00:30+01:00","e":"2031-05-07T18:10:00.999999999Z"}`},
	}
}

// sameSend reports whether two records are equal, their times to the
// nanosecond and in the same zone offset.
func sameSend(a, b SendRecord) bool {
	sameTime := func(x, y time.Time) bool { return x.Format(time.RFC3339Nano) == y.Format(time.RFC3339Nano) }
	return a.Digest == b.Digest && a.State == b.State && a.TaskID == b.TaskID && string(a.Answer) == string(b.Answer) &&
		a.AnswerDialect == b.AnswerDialect && a.Holder == b.Holder && sameTime(a.Lease, b.Lease) && sameTime(a.Expires, b.Expires)
}

// TestSendWire: a send record is stored as the previous versions stored
// it, byte for byte (golden), and what they stored reads as the record.
func TestSendWire(t *testing.T) {
	for _, c := range sendWireCases() {
		if got, err := encodeSend(c.rec); err != nil || got != c.wire {
			t.Errorf("%s: encodeSend =\n%s, %v\nwant\n%s", c.name, got, err, c.wire)
		}
		rec, expires, err := decodeSend(c.wire)
		if err != nil || !sameSend(rec, c.rec) || !expires.Equal(c.rec.Expires.Truncate(time.Microsecond)) {
			t.Errorf("%s: decodeSend = %+v, %v, %v; want %+v", c.name, rec, expires, err, c.rec)
		}
	}
	for _, rec := range []SendRecord{
		{State: SendRunning, Expires: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
		{State: SendRunning, Lease: time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC), Expires: time.Now()},
	} {
		if v, err := encodeSend(rec); err == nil {
			t.Errorf("encodeSend(a time past RFC 3339's years) = %q, want an error", v)
		}
	}
}

// TestRedisSendWire: what Redis holds for a send's record, written by
// each of the calls that write one, is the record's wire form (TestSendWire).
func TestRedisSendWire(t *testing.T) {
	t.Parallel()
	prefix := testPrefix(t)
	s := openRedisStore(t, RedisConfig{Address: testredis.Addr(t), KeyPrefix: prefix})
	admin := adminClient(t)
	ctx := context.Background()
	mustPut(t, s, Task{ID: "t", Agent: "a", Owner: "o"})
	for i, c := range sendWireCases() {
		for _, w := range []struct {
			name  string
			write func(key SendKey) error
		}{
			{"ClaimSend", func(key SendKey) error {
				_, _, _, err := s.ClaimSend(ctx, Admission{Agent: "a", Owner: "o"}, key, c.rec, time.Now())
				return err
			}},
			{"GetClaimSend", func(key SendKey) error {
				_, _, _, err := s.GetClaimSend(ctx, "a", "t", key, c.rec, time.Now())
				return err
			}},
			{"PutSend", func(key SendKey) error {
				return s.PutSend(ctx, Task{ID: "t", Agent: "a", Owner: "o"}, key, c.rec)
			}},
			{"SaveSend", func(key SendKey) error { return s.SaveSend(ctx, key, c.rec) }},
		} {
			key := SendKey{Agent: "a", Owner: "o", Key: w.name + string(rune('0'+i))}
			if err := w.write(key); err != nil && !errors.Is(err, ErrNotFound) {
				t.Fatalf("%s of %s: %v", w.name, c.name, err)
			}
			if got, err := admin.Get(ctx, s.keys.sendKey(key)).Result(); err != nil || got != c.wire {
				t.Errorf("%s of %s: Redis holds\n%s, %v\nwant\n%s", w.name, c.name, got, err, c.wire)
			}
		}
	}
}

// BenchmarkSendWire is the encoding of a send's record as a script's call
// makes it (into the call's buffers).
//
//	go test -run '^$' -bench SendWire -benchmem ./store
func BenchmarkSendWire(b *testing.B) {
	rec := sendWireCases()[0].rec
	var w sendWire
	for b.Loop() {
		if _, err := w.encode(rec); err != nil {
			b.Fatal(err)
		}
	}
}
