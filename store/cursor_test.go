package store

import (
	"testing"
	"time"
)

func TestFilterDigestSeparatesFields(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
	queries := []Query{
		{Agent: "ab", Owner: "c"},
		{Agent: "a", Owner: "bc"},
		{Agent: "a", Owner: "b", ContextID: "c"},
		{Agent: "a", Owner: "b", State: "c"},
		{Agent: "a", Owner: "b", UpdatedAfter: at},
		{Agent: "a", Owner: "b", UpdatedAfter: at.Add(time.Microsecond)},
		{Agent: "a", Owner: "b"},
	}
	seen := map[string]int{}
	for i, q := range queries {
		d := filterDigest(q)
		if j, dup := seen[d]; dup {
			t.Errorf("queries %d and %d share the digest %s", j, i, d)
		}
		seen[d] = i
	}
	// What does not filter does not bind.
	q := queries[0]
	resized := q
	resized.PageSize, resized.PageToken = 50, "x"
	if filterDigest(q) != filterDigest(resized) {
		t.Error("page size or token changed the digest")
	}
}

func TestPageTokenRoundTrip(t *testing.T) {
	t.Parallel()
	q := Query{Agent: "a", Owner: "o", State: working, PageSize: 3}
	last := Task{ID: "id/with:odd chars", Updated: time.Date(2026, 1, 2, 3, 4, 5, 123456000, time.UTC)}
	q.PageToken = encodePageToken(q, last)
	c, err := decodePageToken(q)
	if err != nil {
		t.Fatalf("decodePageToken() = %v", err)
	}
	if c.ID != last.ID || c.Updated != last.Updated.UnixMicro() {
		t.Errorf("decodePageToken() = %+v, want position of %+v", c, last)
	}
	if c.after(c.Updated, c.ID) || !c.after(c.Updated, c.ID+"x") || !c.after(c.Updated-1, "") || c.after(c.Updated+1, "~") {
		t.Error("cursor.after does not follow List order")
	}
}

func TestAfterMicros(t *testing.T) {
	t.Parallel()
	base := time.Date(2026, 1, 2, 3, 4, 5, 7000, time.UTC)
	for _, tc := range []struct {
		in   time.Time
		want int64
	}{
		{base, base.UnixMicro()},
		{base.Add(time.Nanosecond), base.UnixMicro() + 1},
		{base.Add(999 * time.Nanosecond), base.UnixMicro() + 1},
		{base.Add(-time.Nanosecond), base.UnixMicro()},
	} {
		if got := afterMicros(tc.in); got != tc.want {
			t.Errorf("afterMicros(%v) = %d, want %d", tc.in, got, tc.want)
		}
	}
}
