package agentcore

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
)

// Subscription is what an SSE response carries: First, then, when follow
// is set, the events it passes on until the stream cycle ends.
type Subscription struct {
	First  any
	follow func(ctx context.Context, emit func(any) error)
}

// serveStream writes sub as Server-Sent Events, one JSON-RPC response per
// "data:" line, flushing each event as soon as it is written.
func (c *Core[M, A, C]) serveStream(w http.ResponseWriter, r *http.Request, id json.RawMessage, sub Subscription) {
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
	if emit(sub.First) != nil || sub.follow == nil {
		return
	}
	sub.follow(r.Context(), emit)
}
