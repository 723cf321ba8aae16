package readall

import (
	"errors"
	"net/http"
	"os"
	"time"
)

// BodyDeadline bounds the reading of one request's body, not the
// connection's: http.Server's ReadTimeout would stay on the connection
// while a stream is answered, and its expiry there cancels the call.
type BodyDeadline struct {
	rc *http.ResponseController
}

// StartBodyDeadline sets a read deadline d from now on w's connection; with
// d 0, or a connection that takes no deadline, it bounds nothing.
func StartBodyDeadline(w http.ResponseWriter, d time.Duration) BodyDeadline {
	if d <= 0 {
		return BodyDeadline{}
	}
	rc := http.NewResponseController(w)
	if rc.SetReadDeadline(time.Now().Add(d)) != nil {
		return BodyDeadline{}
	}
	return BodyDeadline{rc: rc}
}

// End clears the deadline once the body is read (err is the read's), so
// that it cannot cut a stream answered afterwards. A deadline that passed
// stays: the server's read of the rest of the body after the answer then
// fails at once, and it closes the connection instead of waiting for it.
func (b BodyDeadline) End(err error) {
	if b.rc != nil && !Expired(err) {
		_ = b.rc.SetReadDeadline(time.Time{})
	}
}

// Expired reports whether a body's read failed on its deadline.
func Expired(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }
