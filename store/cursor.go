package store

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
)

// cursor is the keyset position of a page token: the next page starts with
// the first task after (Updated, ID) in List order. A keyset, unlike an
// offset, stays correct when tasks are added or updated between pages: an
// updated task moves ahead of the cursor and is not returned twice.
type cursor struct {
	Version int    `json:"v"`
	Filter  string `json:"f"` // filterDigest of the query that issued it
	Updated int64  `json:"u"` // microseconds since the epoch
	ID      string `json:"i"`
}

const cursorVersion = 1

// filterDigest binds a token to the query's filters, so that a token from
// another query is rejected rather than misread. It is not a security
// boundary: List always filters by agent and owner, so a forged token can
// only move the start of the caller's own walk. PageSize is left out, as
// AIP-158 allows the page size to change between pages.
func filterDigest(q Query) string {
	h := sha256.New()
	for _, s := range []string{q.Agent, q.Owner, q.ContextID, q.State} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	var after [8]byte
	if !q.UpdatedAfter.IsZero() {
		binary.BigEndian.PutUint64(after[:], uint64(afterMicros(q.UpdatedAfter)))
	}
	h.Write(after[:])
	if q.OrUnfinished {
		h.Write([]byte{1})
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// encodePageToken returns the opaque token that continues q after last.
func encodePageToken(q Query, last Task) string {
	b, err := json.Marshal(cursor{
		Version: cursorVersion,
		Filter:  filterDigest(q),
		Updated: last.Updated.UnixMicro(),
		ID:      last.ID,
	})
	if err != nil {
		panic("store: marshal page token: " + err.Error()) // a struct of strings and ints always marshals
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodePageToken returns the cursor of q.PageToken, nil for the first page.
func decodePageToken(q Query) (*cursor, error) {
	if q.PageToken == "" {
		return nil, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(q.PageToken)
	if err != nil {
		return nil, ErrBadPageToken
	}
	var c cursor
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, ErrBadPageToken
	}
	if c.Version != cursorVersion || c.Filter != filterDigest(q) || c.ID == "" {
		return nil, ErrBadPageToken
	}
	return &c, nil
}

// after reports whether a task at (updated, id) comes after c in List order
// (newest first, ties by ID).
func (c *cursor) after(updated int64, id string) bool {
	if c == nil {
		return true
	}
	return updated < c.Updated || (updated == c.Updated && id > c.ID)
}
