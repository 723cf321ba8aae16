package proxy

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/a2agate/gateway/dialect"
	sseframe "github.com/a2agate/gateway/internal/sse"
)

// withEventIDs gives every event of a golden stream an id (e0, e1, ...),
// the first a retry field too, and adds an id-only block after the first
// event, as a backend that supports resumption may send them.
func withEventIDs(t *testing.T, doc []byte) []byte {
	t.Helper()
	rd := sseframe.NewReader(bytes.NewReader(doc), 1<<20)
	var out []byte
	for i := 0; ; i++ {
		ev, err := rd.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		ev.ID, ev.HasID = fmt.Sprintf("e%d", i), true
		if i == 0 {
			ev.Retry = "2500"
		}
		out = sseframe.AppendEvent(out, ev)
		if i == 0 {
			out = sseframe.AppendEvent(out, sseframe.Event{ID: "e0-idle", HasID: true})
		}
	}
}

// TestStreamPassesEventIDs: the backend's event ids and retry reach the
// caller on the events they came with, in all four caller/backend
// combinations, an input-required event held for its final flag (0.x
// caller of a 1.0 backend) included; and the caller's Last-Event-ID
// reaches the backend.
func TestStreamPassesEventIDs(t *testing.T) {
	for _, golden := range []string{"task_lifecycle", "input_required"} {
		for _, from := range []dialect.ID{dialect.V03, dialect.V10} {
			for _, to := range []dialect.ID{dialect.V03, dialect.V10} {
				t.Run(fmt.Sprintf("%s/%s-to-%s", golden, to, from), func(t *testing.T) {
					t.Parallel()
					doc, err := os.ReadFile("testdata/stream/" + golden + "." + map[dialect.ID]string{dialect.V03: "v03", dialect.V10: "v10"}[from] + ".sse")
					if err != nil {
						t.Fatal(err)
					}
					in := withEventIDs(t, doc)
					version := dialect.Version03
					if from == dialect.V10 {
						version = dialect.Version10
					}
					lastEventID := make(chan string, 1)
					g := newGateway(t, scripted(func(w http.ResponseWriter, r *http.Request, id string) {
						lastEventID <- r.Header.Get("Last-Event-ID")
						w.Header().Set("Content-Type", "text/event-stream")
						sseWrite(w, string(withRequestID(in, id)))
					}), version)
					c := caller{to}
					req := g.streamRequest(t.Context(), "1", c.method(dialect.SendStreamingMessage), c.send("m1", c.text("run"), ""))
					req.Header.Set("Last-Event-ID", "e-before")
					res, err := http.DefaultClient.Do(req)
					if err != nil {
						t.Fatal(err)
					}
					defer res.Body.Close()
					if got := <-lastEventID; got != "e-before" {
						t.Errorf("the backend got Last-Event-ID %q, want the caller's %q", got, "e-before")
					}
					want, got := eventFields(t, in), eventFields(t, mustRead(t, res.Body))
					if !slices.Equal(got, want) {
						t.Errorf("event fields through the gateway:\n got %q\nwant %q", got, want)
					}
				})
			}
		}
	}
}

// eventFields lists, per event of an SSE document, its id and retry fields
// and whether it has data.
func eventFields(t *testing.T, doc []byte) []string {
	t.Helper()
	rd := sseframe.NewReader(bytes.NewReader(doc), 1<<20)
	var out []string
	for {
		ev, err := rd.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if ev.Data != nil && strings.Contains(string(ev.Data), `"error"`) {
			t.Fatalf("error event: %s", ev.Data)
		}
		out = append(out, fmt.Sprintf("id=%q(%v) retry=%q data=%v", ev.ID, ev.HasID, ev.Retry, ev.Data != nil))
	}
}

func mustRead(t *testing.T, r io.Reader) []byte {
	t.Helper()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestStreamBoundsTheBackendsRetry: a backend's retry field reaches the
// caller within 1s and 60s: an hour, a value past uint64 and zero are
// brought within, on a data event and on a block without data alike, and
// a value within passes as it is. Before, each passed unchanged, so a
// backend set every caller's reconnection time to an hour, or to none.
func TestStreamBoundsTheBackendsRetry(t *testing.T) {
	doc, err := os.ReadFile("testdata/stream/task_lifecycle.v10.sse")
	if err != nil {
		t.Fatal(err)
	}
	rd := sseframe.NewReader(bytes.NewReader(doc), 1<<20)
	var in []byte
	retries := []string{"3600000", "0", "99999999999999999999999", "2500"}
	for i := 0; ; i++ {
		ev, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if i < len(retries) {
			ev.Retry = retries[i]
		}
		in = sseframe.AppendEvent(in, ev)
		if i == 0 {
			in = sseframe.AppendEvent(in, sseframe.Event{Retry: "7200000"})
		}
	}
	g := newGateway(t, scripted(func(w http.ResponseWriter, r *http.Request, id string) {
		w.Header().Set("Content-Type", "text/event-stream")
		sseWrite(w, string(withRequestID(in, id)))
	}), dialect.Version10)
	c := callers[1]
	res, err := http.DefaultClient.Do(g.streamRequest(t.Context(), "1", c.method(dialect.SendStreamingMessage), c.send("m1", c.text("run"), "")))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var got []string
	out := sseframe.NewReader(bytes.NewReader(mustRead(t, res.Body)), 1<<20)
	for {
		ev, err := out.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if ev.Retry != "" {
			got = append(got, ev.Retry)
		}
	}
	if want := []string{"60000", "60000", "1000", "60000", "2500"}; !slices.Equal(got, want) {
		t.Fatalf("the caller's retry fields: %q, want %q", got, want)
	}
}
