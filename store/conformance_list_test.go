package store

import (
	"context"
	"encoding/base64"
	"errors"
	"testing"
	"time"
)

const (
	working   = "TASK_STATE_WORKING"
	completed = "TASK_STATE_COMPLETED"
	submitted = "TASK_STATE_SUBMITTED"
	inputReq  = "TASK_STATE_INPUT_REQUIRED"
)

func testListFilters(t *testing.T, open opener) {
	s, clock := open.onFakeClock(t)
	t0 := clock.Now().Add(-time.Hour)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	for _, task := range []Task{
		{ID: "t1", ContextID: "c1", Owner: "alice", Agent: "a", State: working, Updated: at(1 * time.Minute)},
		{ID: "t2", ContextID: "c1", Owner: "alice", Agent: "a", State: completed, Updated: at(2 * time.Minute)},
		{ID: "t4", ContextID: "", Owner: "alice", Agent: "a", State: submitted, Updated: at(3 * time.Minute)},
		{ID: "t3", ContextID: "c2", Owner: "alice", Agent: "a", State: working, Updated: at(3 * time.Minute)},
		{ID: "t5", ContextID: "c2", Owner: "alice", Agent: "a", State: working, Updated: at(5 * time.Minute)},
		{ID: "b1", ContextID: "c3", Owner: "bob", Agent: "a", State: working, Updated: at(4 * time.Minute)},
		{ID: "b2", ContextID: "c3", Owner: "bob", Agent: "a", State: working, Updated: at(6 * time.Minute)},
		{ID: "x1", ContextID: "c1", Owner: "alice", Agent: "other", State: working, Updated: at(7 * time.Minute)},
		{ID: "n1", ContextID: "c9", Owner: "", Agent: "a", State: working, Updated: at(8 * time.Minute)},
	} {
		mustPut(t, s, task)
	}
	for _, tc := range []struct {
		name string
		q    Query
		want []string
	}{
		{"all of an owner, ties by id", Query{Agent: "a", Owner: "alice"}, []string{"t5", "t3", "t4", "t2", "t1"}},
		{"context", Query{Agent: "a", Owner: "alice", ContextID: "c1"}, []string{"t2", "t1"}},
		{"state", Query{Agent: "a", Owner: "alice", State: working}, []string{"t5", "t3", "t1"}},
		{"context and state", Query{Agent: "a", Owner: "alice", ContextID: "c2", State: working}, []string{"t5", "t3"}},
		{"context and other state", Query{Agent: "a", Owner: "alice", ContextID: "c1", State: working}, []string{"t1"}},
		{"updated after is inclusive", Query{Agent: "a", Owner: "alice", UpdatedAfter: at(3 * time.Minute)}, []string{"t5", "t3", "t4"}},
		{"updated after rounds up sub-microseconds", Query{Agent: "a", Owner: "alice", UpdatedAfter: at(3*time.Minute + time.Nanosecond)}, []string{"t5"}},
		{"updated after and state", Query{Agent: "a", Owner: "alice", State: working, UpdatedAfter: at(3 * time.Minute)}, []string{"t5", "t3"}},
		{"updated after and context", Query{Agent: "a", Owner: "alice", ContextID: "c1", UpdatedAfter: at(2 * time.Minute)}, []string{"t2"}},
		{"every filter", Query{Agent: "a", Owner: "alice", ContextID: "c2", State: working, UpdatedAfter: at(4 * time.Minute)}, []string{"t5"}},
		{"another owner's context", Query{Agent: "a", Owner: "bob", ContextID: "c3"}, []string{"b2", "b1"}},
		{"another owner", Query{Agent: "a", Owner: "bob"}, []string{"b2", "b1"}},
		{"auth off", Query{Agent: "a", Owner: ""}, []string{"n1"}},
		{"unknown owner", Query{Agent: "a", Owner: "carol"}, nil},
		{"another agent", Query{Agent: "other", Owner: "alice"}, []string{"x1"}},
		{"unknown state", Query{Agent: "a", Owner: "alice", State: "TASK_STATE_FAILED"}, nil},
		{"unknown context", Query{Agent: "a", Owner: "alice", ContextID: "c3"}, nil},
		{"state or unfinished", Query{Agent: "a", Owner: "alice", State: completed, OrUnfinished: true}, []string{"t5", "t3", "t4", "t2", "t1"}},
		{"another final state or unfinished", Query{Agent: "a", Owner: "alice", State: "TASK_STATE_FAILED", OrUnfinished: true}, []string{"t5", "t3", "t4", "t1"}},
		{"context and state or unfinished", Query{Agent: "a", Owner: "alice", ContextID: "c1", State: working, OrUnfinished: true}, []string{"t1"}},
		{"nothing after", Query{Agent: "a", Owner: "alice", UpdatedAfter: at(time.Hour)}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.q.PageSize = MaxPageSize
			p := mustList(t, s, tc.q)
			wantIDs(t, "List", p.Tasks, tc.want)
			if p.TotalSize != len(tc.want) || p.NextPageToken != "" {
				t.Errorf("List() TotalSize = %d, NextPageToken = %q; want %d, \"\"", p.TotalSize, p.NextPageToken, len(tc.want))
			}
			for _, task := range p.Tasks {
				if task.Owner != tc.q.Owner || task.Agent != tc.q.Agent {
					t.Errorf("List() returned %+v, outside owner %q and agent %q", task, tc.q.Owner, tc.q.Agent)
				}
			}
		})
	}
	t.Run("small pages", func(t *testing.T) {
		q := Query{Agent: "a", Owner: "alice", PageSize: 2}
		for _, want := range [][]string{{"t5", "t3"}, {"t4", "t2"}, {"t1"}} {
			p := mustList(t, s, q)
			wantIDs(t, "page", p.Tasks, want)
			if p.TotalSize != 5 {
				t.Errorf("page TotalSize = %d, want 5", p.TotalSize)
			}
			if (p.NextPageToken == "") != (want[0] == "t1") {
				t.Fatalf("page %q NextPageToken = %q", want, p.NextPageToken)
			}
			q.PageToken = p.NextPageToken
		}
	})
	t.Run("exact last page has no token", func(t *testing.T) {
		p := mustList(t, s, Query{Agent: "a", Owner: "alice", State: working, PageSize: 3})
		wantIDs(t, "page", p.Tasks, []string{"t5", "t3", "t1"})
		if p.NextPageToken != "" {
			t.Errorf("NextPageToken = %q, want \"\"", p.NextPageToken)
		}
	})
}

func testListValidates(t *testing.T, open opener) {
	s := open(t, newFakeClock())
	for _, q := range []Query{
		{Agent: "a", Owner: "o", PageSize: 0},
		{Agent: "a", Owner: "o", PageSize: MaxPageSize + 1},
		{Agent: "a", Owner: "o", PageSize: -1},
		{Owner: "o", PageSize: 10},
	} {
		_, err := s.List(context.Background(), q)
		if err == nil || errors.Is(err, ErrBadPageToken) || errors.Is(err, ErrUnavailable) {
			t.Errorf("List(%+v) = %v, want a validation error", q, err)
		}
	}
}

func testBadPageTokens(t *testing.T, open opener) {
	s, clock := open.onFakeClock(t)
	for i, owner := range []string{"alice", "alice", "alice", "bob", "bob"} {
		mustPut(t, s, Task{ID: string(rune('a' + i)), ContextID: "c-" + owner, Owner: owner, Agent: "a", State: working})
	}
	q := Query{Agent: "a", Owner: "alice", State: working, PageSize: 1}
	first := mustList(t, s, q)
	if first.NextPageToken == "" {
		t.Fatal("first page has no NextPageToken")
	}
	token := first.NextPageToken

	// The page size may change between pages.
	resized := q
	resized.PageSize, resized.PageToken = 10, token
	if p := mustList(t, s, resized); len(p.Tasks) != 2 {
		t.Errorf("List with the token and a larger page = %q, want the 2 remaining tasks", taskIDs(p.Tasks))
	}

	b64 := base64.RawURLEncoding.EncodeToString
	for _, tc := range []struct {
		name  string
		query func(Query) Query
	}{
		{"not base64", func(q Query) Query { q.PageToken = "!!not-base64!!"; return q }},
		{"padded base64", func(q Query) Query { q.PageToken = token + "=="; return q }},
		{"not json", func(q Query) Query { q.PageToken = b64([]byte("not json")); return q }},
		{"unknown version", func(q Query) Query {
			q.PageToken = b64([]byte(`{"v":2,"f":"` + filterDigest(q) + `","u":1,"i":"a"}`))
			return q
		}},
		{"no id", func(q Query) Query {
			q.PageToken = b64([]byte(`{"v":1,"f":"` + filterDigest(q) + `","u":1,"i":""}`))
			return q
		}},
		{"truncated", func(q Query) Query { q.PageToken = token[:len(token)/2]; return q }},
		{"other owner", func(q Query) Query { q.Owner, q.PageToken = "bob", token; return q }},
		{"other agent", func(q Query) Query { q.Agent, q.PageToken = "b", token; return q }},
		{"other state", func(q Query) Query { q.State, q.PageToken = completed, token; return q }},
		{"no state", func(q Query) Query { q.State, q.PageToken = "", token; return q }},
		{"other context", func(q Query) Query { q.ContextID, q.PageToken = "c", token; return q }},
		{"other updated after", func(q Query) Query {
			q.UpdatedAfter, q.PageToken = clock.Now().Add(-time.Hour), token
			return q
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := tc.query(q)
			if p, err := s.List(context.Background(), bad); !errors.Is(err, ErrBadPageToken) {
				t.Errorf("List(%+v) = %q, %v; want ErrBadPageToken", bad, taskIDs(p.Tasks), err)
			}
		})
	}
}
