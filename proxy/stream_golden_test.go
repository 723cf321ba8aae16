package proxy

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/jsontest"
	sseframe "github.com/a2agate/gateway/internal/sse"
	"github.com/a2agate/gateway/internal/testfiles"
)

// sseEvents splits an SSE document into its data payloads and comments.
func sseEvents(t *testing.T, doc []byte) (data []string, comments int) {
	t.Helper()
	rd := sseframe.NewReader(bytes.NewReader(doc), 1<<20)
	for {
		ev, err := rd.Next()
		if err != nil {
			return data, comments
		}
		if ev.Data != nil {
			data = append(data, string(ev.Data))
		} else if ev.Comment != nil {
			comments++
		}
	}
}

// chunked writes doc to the caller in pieces of the sizes next returns,
// flushing each, so the gateway sees events split at every possible byte.
// withRequestID gives a golden stream's events, written with id 1, the id
// of the request they answer: the gateway sends a backend ids of its own.
func withRequestID(doc []byte, id string) []byte {
	return bytes.ReplaceAll(doc, []byte(`"id":1,`), []byte(`"id":`+id+`,`))
}

func chunked(doc []byte, next func() int) func(w http.ResponseWriter, r *http.Request, id string) {
	return func(w http.ResponseWriter, r *http.Request, id string) {
		w.Header().Set("Content-Type", "text/event-stream")
		doc := withRequestID(doc, id)
		for len(doc) > 0 {
			n := min(next(), len(doc))
			_, _ = w.Write(doc[:n])
			http.NewResponseController(w).Flush()
			doc = doc[n:]
		}
	}
}

// TestStreamGoldens replays each golden stream from a backend of one dialect
// to a caller of the other, whole, one byte at a time and in random chunks
// (also with CRLF line ends), and compares what the caller receives.
func TestStreamGoldens(t *testing.T) {
	files := testfiles.Glob(t, "testdata/stream/*.v03.sse")
	for _, f03 := range files {
		base := strings.TrimSuffix(f03, ".v03.sse")
		v03, err03 := os.ReadFile(f03)
		v10, err10 := os.ReadFile(base + ".v10.sse")
		if err03 != nil || err10 != nil {
			t.Fatalf("%s: want a .v03.sse and .v10.sse pair", base)
		}
		for _, dir := range []struct {
			from, to dialect.ID
			in, want []byte
		}{{dialect.V03, dialect.V10, v03, v10}, {dialect.V10, dialect.V03, v10, v03}} {
			wantData, wantComments := sseEvents(t, dir.want)
			chunkings := map[string]func(in []byte) ([]byte, func() int){
				"whole":    func(in []byte) ([]byte, func() int) { return in, func() int { return len(in) } },
				"one-byte": func(in []byte) ([]byte, func() int) { return in, func() int { return 1 } },
				"random": func(in []byte) ([]byte, func() int) {
					r := rand.New(rand.NewPCG(1, 2))
					return in, func() int { return 1 + r.IntN(40) }
				},
				"crlf-rand": func(in []byte) ([]byte, func() int) {
					r := rand.New(rand.NewPCG(3, 4))
					return bytes.ReplaceAll(in, []byte("\n"), []byte("\r\n")), func() int { return 1 + r.IntN(7) }
				},
			}
			for cname, chunking := range chunkings {
				name := fmt.Sprintf("%s/%s-to-%s/%s", filepath.Base(base), dir.from, dir.to, cname)
				t.Run(name, func(t *testing.T) {
					in, next := chunking(dir.in)
					version := dialect.Version03
					if dir.from == dialect.V10 {
						version = dialect.Version10
					}
					g := newGateway(t, scripted(chunked(in, next)), version)
					c := caller{dir.to}
					s := g.stream("1", c.method(dialect.SendStreamingMessage), c.send("m1", c.text("run"), ""))
					body := new(bytes.Buffer)
					_, _ = body.ReadFrom(s.res.Body)
					gotData, gotComments := sseEvents(t, body.Bytes())
					if len(gotData) != len(wantData) {
						t.Fatalf("got %d events, want %d:\n%s", len(gotData), len(wantData), body)
					}
					for i := range wantData {
						if !jsonSame(gotData[i], wantData[i]) {
							t.Errorf("event %d:\nwant %s\ngot  %s", i, jsontest.Compact([]byte(wantData[i])), gotData[i])
						}
					}
					if gotComments != wantComments {
						t.Errorf("keep-alive comments: got %d, want %d", gotComments, wantComments)
					}
				})
			}
		}
	}
}
