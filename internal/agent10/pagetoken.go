package agent10

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The page tokens of the two listings the agent pages, ListTasks and
// ListTaskPushNotificationConfigs. Both are opaque to clients and refused
// with the same error when they are not the agent's own.

var errPageToken = errors.New("pageToken: not a token this agent issued")

// pageCursor is the last task of a page. A cursor rather than an offset
// keeps pages from repeating or skipping tasks created between two calls.
type pageCursor struct {
	updated time.Time
	id      string
}

// precedes reports whether the cursor sorts before m, so that m belongs to
// a later page.
func (c pageCursor) precedes(m listed) bool {
	if d := m.Status.Time.Compare(c.updated); d != 0 {
		return d < 0
	}
	return m.ID > c.id
}

func (c pageCursor) token() string {
	return base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "%d|%s", c.updated.UnixMilli(), c.id))
}

func parsePageToken(tok string) (pageCursor, error) {
	raw, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return pageCursor{}, errPageToken
	}
	ms, id, ok := strings.Cut(string(raw), "|")
	n, err := strconv.ParseInt(ms, 10, 64)
	if !ok || err != nil || id == "" {
		return pageCursor{}, errPageToken
	}
	return pageCursor{updated: time.UnixMilli(n).UTC(), id: id}, nil
}

// Push config pages are addressed by offset: a task has few configs and
// they are listed in creation order.

func offsetToken(n int) string {
	return base64.RawURLEncoding.EncodeToString([]byte("offset:" + strconv.Itoa(n)))
}

func parseOffsetToken(tok string) (int, error) {
	raw, err := base64.RawURLEncoding.DecodeString(tok)
	if err == nil {
		if s, ok := strings.CutPrefix(string(raw), "offset:"); ok {
			if n, err := strconv.Atoi(s); err == nil && n >= 0 {
				return n, nil
			}
		}
	}
	return 0, errPageToken
}
