package proxy

import (
	"net/http"
	"strconv"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/normalize"
)

// writeJSON answers a unary call. JSON-RPC errors go out with status 200
// too: several SDK clients reject any other status before reading the body.
func writeJSON(w http.ResponseWriter, status int, body []byte) {
	writeJSONIn(w, status, body, new([1]string))
}

// writeJSONIn is writeJSON with the Content-Length value held in length,
// a call's (c.length), where a slice of its own would be one more
// allocation per answer. length must not be used again.
func writeJSONIn(w http.ResponseWriter, status int, body []byte, length *[1]string) {
	h := w.Header()
	h["Content-Type"] = headerJSON // canonical keys, set directly: no copies
	length[0] = strconv.Itoa(len(body))
	h["Content-Length"] = length[:]
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// errorResponse renders e as a JSON-RPC error response in dialect d.
func errorResponse(d dialect.ID, id []byte, e *normalize.Error) []byte {
	obj := normalize.AppendError(make([]byte, 0, 256), d, e)
	return normalize.AppendErrorResponse(make([]byte, 0, len(obj)+64), id, obj)
}

// sseHeaders marks a response as an event stream that nothing on the way
// may buffer or compress.
func sseHeaders(h http.Header) {
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	h.Del("Content-Length")
}
