package legacyagent

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// subscription is what an SSE response carries: first, then, when rec is
// set, rec's events from cursor on until the stream cycle ends.
type subscription struct {
	first  any
	rec    *record
	cursor int
}

// serveStream writes sub as Server-Sent Events, one JSON-RPC response per
// "data:" line, flushing each event as soon as it is written.
func (a *Agent) serveStream(w http.ResponseWriter, r *http.Request, id json.RawMessage, sub subscription) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // keeps nginx-style proxies from buffering
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)

	emit := func(result any) error {
		b, err := json.Marshal(successResponse{JSONRPC: "2.0", ID: id, Result: result})
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return err
		}
		return rc.Flush()
	}
	if emit(sub.first) != nil || sub.rec == nil {
		return
	}
	a.store.follow(r.Context(), a.done, sub.rec, sub.cursor, emit)
}
