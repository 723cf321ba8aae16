package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
)

// testConcurrency runs writers and readers at once; under -race it also
// checks the implementations' locking.
func testConcurrency(t *testing.T, open opener) {
	s := open(t, newFakeClock())
	const workers, perWorker = 8, 40
	ctx := context.Background()
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			owner := fmt.Sprintf("owner-%d", w%2)
			for i := range perWorker {
				id := fmt.Sprintf("w%d-t%d", w, i)
				task := Task{ID: id, ContextID: fmt.Sprintf("%s-c%d", owner, i%3), Owner: owner, Agent: "a", State: working}
				if err := s.Put(ctx, task); err != nil {
					errs <- fmt.Errorf("Put(%s): %w", id, err)
					return
				}
				if _, err := s.Get(ctx, "a", id); err != nil {
					errs <- fmt.Errorf("Get(%s): %w", id, err)
					return
				}
				if _, err := s.List(ctx, Query{Agent: "a", Owner: owner, ContextID: owner + "-c1", PageSize: 5}); err != nil {
					errs <- fmt.Errorf("List: %w", err)
					return
				}
				if _, err := s.Len(ctx); err != nil {
					errs <- fmt.Errorf("Len: %w", err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := mustLen(t, s); n != workers*perWorker {
		t.Errorf("Len() = %d, want %d", n, workers*perWorker)
	}
	for _, owner := range []string{"owner-0", "owner-1"} {
		if p := mustList(t, s, Query{Agent: "a", Owner: owner, PageSize: 1}); p.TotalSize != workers*perWorker/2 {
			t.Errorf("List(%s).TotalSize = %d, want %d", owner, p.TotalSize, workers*perWorker/2)
		}
	}
}

// testOwnerRace starts several owners' Puts of the same new id at once:
// exactly one may win, and the stored task is the winner's.
func testOwnerRace(t *testing.T, open opener) {
	s := open(t, newFakeClock())
	raceOwners(t, []Store{s}, 20, 8)
}

// raceOwners races racers Puts of each of ids new task ids, spread over
// stores, each with its own owner.
func raceOwners(t *testing.T, stores []Store, ids, racers int) {
	t.Helper()
	ctx := context.Background()
	for i := range ids {
		id := fmt.Sprintf("race-%d", i)
		start := make(chan struct{})
		results := make([]error, racers)
		var wg sync.WaitGroup
		for r := range racers {
			wg.Go(func() {
				<-start
				results[r] = stores[r%len(stores)].Put(ctx, Task{ID: id, Owner: fmt.Sprintf("owner-%d", r), Agent: "a"})
			})
		}
		close(start)
		wg.Wait()
		winner := -1
		for r, err := range results {
			switch {
			case err == nil && winner >= 0:
				t.Fatalf("%s: owners %d and %d both won", id, winner, r)
			case err == nil:
				winner = r
			case !errors.Is(err, ErrOwnerConflict):
				t.Fatalf("%s: Put by owner %d = %v", id, r, err)
			}
		}
		if winner < 0 {
			t.Fatalf("%s: no owner won", id)
		}
		for _, s := range stores {
			if got := mustGet(t, s, "a", id); got.Owner != fmt.Sprintf("owner-%d", winner) {
				t.Errorf("%s: Get().Owner = %q, want owner-%d", id, got.Owner, winner)
			}
		}
	}
}
