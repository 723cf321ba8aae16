package reliability

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/legacyagent"
)

// flood is a 0.2.5 backend whose message/stream answers are as long and as
// fast as a test wants: numbered artifact chunks written back to back until
// finish is closed, then the completed status. It measures how much it
// wrote and whether a write is blocked.
type flood struct {
	chunk   int
	card    http.Handler
	finish  chan struct{}
	written atomic.Int64
	// writing is when the write in progress started (unix nanoseconds),
	// 0 between writes.
	writing atomic.Int64
	// ended receives how each stream ended: nil once the final event is
	// written, else why it stopped.
	ended chan error
}

func newFlood(chunk int) *flood {
	return &flood{chunk: chunk, card: legacyagent.New(legacyagent.Options{}), finish: make(chan struct{}), ended: make(chan error, 1)}
}

// blockedFor returns how long the write in progress has been blocked.
func (f *flood) blockedFor() time.Duration {
	start := f.writing.Load()
	if start == 0 {
		return 0
	}
	return time.Since(time.Unix(0, start))
}

func (f *flood) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		f.card.ServeHTTP(w, r) // the legacy agent's card
		return
	}
	var body [4096]byte
	n, _ := r.Body.Read(body[:])
	req := gjson.ParseBytes(body[:n])
	if req.Get("method").Str != "message/stream" {
		http.Error(w, "this backend only streams", http.StatusBadRequest)
		return
	}
	id := req.Get("id").Raw
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	const task, ctx = "flood-task", "flood-context"
	event := func(result string) error {
		frame := "data: {\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"result\":" + result + "}\n\n"
		f.writing.Store(time.Now().UnixNano())
		_, err := w.Write([]byte(frame))
		if err == nil {
			err = rc.Flush()
		}
		f.writing.Store(0)
		f.written.Add(int64(len(frame)))
		return err
	}
	err := event(`{"kind":"task","id":"` + task + `","contextId":"` + ctx + `","status":{"state":"working"}}`)
	padding := strings.Repeat("x", f.chunk)
	for seq := 0; err == nil; seq++ {
		select {
		case <-f.finish:
			err = event(`{"kind":"status-update","taskId":"` + task + `","contextId":"` + ctx + `","status":{"state":"completed"},"final":true}`)
			f.ended <- err
			return
		case <-r.Context().Done():
			err = r.Context().Err()
			continue
		default:
		}
		err = event(`{"kind":"artifact-update","taskId":"` + task + `","contextId":"` + ctx +
			`","artifact":{"artifactId":"flood","parts":[{"kind":"text","text":"` + fmt.Sprintf("%08d:", seq) + padding + `"}]},"append":true}`)
	}
	f.ended <- err
}

// floodSeq returns the sequence number of a flood artifact chunk's text.
func floodSeq(text string) (int, bool) {
	head, _, ok := strings.Cut(text, ":")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(head)
	return n, err == nil
}
