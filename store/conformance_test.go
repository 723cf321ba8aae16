package store

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/a2agate/gateway/internal/testclock"
)

// The conformance suite states the Store contract once and runs it against
// every implementation, so that Memory and Redis cannot drift apart.

// opener returns a fresh, empty store whose clock is clock, closed (and
// emptied) when the test ends.
type opener func(t *testing.T, clock *fakeClock) Store

// onFakeClock opens a store on a fresh fake clock, for a case that moves
// time.
func (open opener) onFakeClock(t *testing.T) (Store, *fakeClock) {
	clock := newFakeClock()
	return open(t, clock), clock
}

type conformanceCase struct {
	name string
	run  func(t *testing.T, open opener)
}

var conformanceCases = []conformanceCase{
	{"PutGet", testPutGet},
	{"PutValidates", testPutValidates},
	{"OwnerConflict", testOwnerConflict},
	{"UpdateRules", testUpdateRules},
	{"KeysDoNotCollide", testKeysDoNotCollide},
	{"ContextOwner", testContextOwner},
	{"ContextConflict", testContextConflict},
	{"ListFilters", testListFilters},
	{"ListValidates", testListValidates},
	{"PagingWalk", testPagingWalk},
	{"BadPageTokens", testBadPageTokens},
	{"Expiry", testExpiry},
	{"ExpiryRenewedByPut", testExpiryRenewedByPut},
	{"TakeoverAfterExpiry", testTakeoverAfterExpiry},
	{"RecreateAfterExpiry", testRecreateAfterExpiry},
	{"Len", testLen},
	{"Concurrency", testConcurrency},
	{"OwnerRace", testOwnerRace},
	{"Known", testKnown},
	{"Close", testClose},
}

func runConformance(t *testing.T, open opener) { runCases(t, conformanceCases, open) }

// runCases runs each case as a parallel subtest on stores from open.
func runCases(t *testing.T, cases []conformanceCase, open opener) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, open)
		})
	}
}

// fakeClock is a settable clock shared by a test and its store.
type fakeClock = testclock.Clock

func newFakeClock() *fakeClock {
	return testclock.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
}

func mustPut(t *testing.T, s Store, task Task) {
	t.Helper()
	if err := s.Put(context.Background(), task); err != nil {
		t.Fatalf("Put(%+v) = %v", task, err)
	}
}

func mustGet(t *testing.T, s Store, agent, id string) Task {
	t.Helper()
	got, err := s.Get(context.Background(), agent, id)
	if err != nil {
		t.Fatalf("Get(%q, %q) = %v", agent, id, err)
	}
	return got
}

func wantNotFound(t *testing.T, s Store, agent, id string) {
	t.Helper()
	if got, err := s.Get(context.Background(), agent, id); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get(%q, %q) = %+v, %v; want ErrNotFound", agent, id, got, err)
	}
}

func mustList(t *testing.T, s Store, q Query) Page {
	t.Helper()
	p, err := s.List(context.Background(), q)
	if err != nil {
		t.Fatalf("List(%+v) = %v", q, err)
	}
	return p
}

func mustLen(t *testing.T, s Store) int {
	t.Helper()
	n, err := s.Len(context.Background())
	if err != nil {
		t.Fatalf("Len() = %v", err)
	}
	return n
}

func taskIDs(tasks []Task) []string {
	ids := make([]string, len(tasks))
	for i, task := range tasks {
		ids[i] = task.ID
	}
	return ids
}

func wantIDs(t *testing.T, what string, got []Task, want []string) {
	t.Helper()
	if ids := taskIDs(got); !slices.Equal(ids, want) {
		t.Errorf("%s: ids = %q, want %q", what, ids, want)
	}
}

func testClose(t *testing.T, open opener) {
	s := open(t, newFakeClock())
	ctx := context.Background()
	mustPut(t, s, Task{ID: "t1", Agent: "a", Owner: "o"})
	if err := s.Ping(ctx); err != nil {
		t.Fatalf("Ping() before Close = %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close() = %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close() = %v", err)
	}
	calls := map[string]error{
		"Ping": s.Ping(ctx),
		"Put":  s.Put(ctx, Task{ID: "t2", Agent: "a", Owner: "o"}),
	}
	_, calls["Get"] = s.Get(ctx, "a", "t1")
	_, calls["ContextOwner"] = s.ContextOwner(ctx, "a", "c")
	_, calls["List"] = s.List(ctx, Query{Agent: "a", Owner: "o", PageSize: 10})
	_, calls["Len"] = s.Len(ctx)
	_, calls["Known"] = s.Known(ctx, "t1")
	_, calls["Admit"] = s.Admit(ctx, Admission{Agent: "a", Owner: "o"})
	for name, err := range calls {
		if !errors.Is(err, ErrUnavailable) {
			t.Errorf("%s after Close = %v, want ErrUnavailable", name, err)
		}
	}
}
