package store

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"
)

func init() {
	conformanceCases = append(conformanceCases,
		conformanceCase{"RetryClaim", testRetryClaim},
		conformanceCase{"RetryScopedKeys", testRetryScopedKeys},
		conformanceCase{"RetrySaveLoad", testRetrySaveLoad},
		conformanceCase{"RetryExpiry", testRetryExpiry},
		conformanceCase{"RetryClaimRace", testRetryClaimRace},
		conformanceCase{"RetryClosed", testRetryClosed},
		conformanceCase{"RetryNotAcceptedClaimedOver", testRetryNotAcceptedClaimedOver},
		conformanceCase{"RetryGetClaim", testRetryGetClaim},
		conformanceCase{"RetryPutSend", testRetryPutSend},
	)
}

func running(clock *fakeClock, digest string) SendRecord {
	now := clock.Now()
	return SendRecord{Digest: digest, State: SendRunning, Holder: "r1", Lease: now.Add(10 * time.Second).UTC(), Expires: now.Add(time.Hour).UTC()}
}

func testRetryClaim(t *testing.T, open opener) {
	s, clock := open.onFakeClock(t)
	ctx := context.Background()
	mustPut(t, s, Task{ID: "t1", Agent: "a", Owner: "o", ContextID: "cx"})
	key := SendKey{Agent: "a", Owner: "o", Key: "m1"}
	first := running(clock, "d1")
	owner, prior, claimed, err := s.ClaimSend(ctx, Admission{Agent: "a", Owner: "o", ContextID: "cx"}, key, first, clock.Now())
	if err != nil || !claimed || owner != "o" || prior.State != "" {
		t.Fatalf("first ClaimSend = %q, %+v, %v, %v; want o, none, claimed", owner, prior, claimed, err)
	}
	_, prior, claimed, err = s.ClaimSend(ctx, Admission{Agent: "a", Owner: "o"}, key, running(clock, "d2"), clock.Now())
	if !errors.Is(err, ErrNotFound) || claimed || !reflect.DeepEqual(prior, first) {
		t.Fatalf("second ClaimSend = %+v, %v, %v; want the first record, not claimed, ErrNotFound for no context", prior, claimed, err)
	}
}

func testRetryScopedKeys(t *testing.T, open opener) {
	s, clock := open.onFakeClock(t)
	ctx := context.Background()
	for _, key := range []SendKey{{"a", "o", "k"}, {"a", "p", "k"}, {"b", "o", "k"}, {"a", "o:k", ""}, {"a:o", "k", "x"}} {
		if key.Key == "" {
			continue
		}
		_, _, claimed, err := s.ClaimSend(ctx, Admission{Agent: key.Agent, Owner: key.Owner}, key, running(clock, "d"), clock.Now())
		if !errors.Is(err, ErrNotFound) || !claimed {
			t.Fatalf("ClaimSend(%+v) = %v, %v; want a claim of its own", key, claimed, err)
		}
	}
	if _, _, _, err := s.ClaimSend(ctx, Admission{Agent: "a"}, SendKey{Agent: "a"}, running(clock, "d"), clock.Now()); err == nil {
		t.Fatal("ClaimSend with no key succeeded")
	}
}

func testRetrySaveLoad(t *testing.T, open opener) {
	s, clock := open.onFakeClock(t)
	ctx := context.Background()
	key := SendKey{Agent: "a", Owner: "o", Key: "m1"}
	if _, err := s.LoadSend(ctx, key, clock.Now()); !errors.Is(err, ErrNotFound) {
		t.Fatalf("LoadSend before any = %v, want ErrNotFound", err)
	}
	answer := []byte(`{"message":{"messageId":"x"}}`)
	rec := SendRecord{Digest: "d", State: SendMessage, Answer: answer, AnswerDialect: "1.0", Expires: clock.Now().Add(time.Hour).UTC()}
	if err := s.SaveSend(ctx, key, rec); err != nil {
		t.Fatal(err)
	}
	answer[0] = 'X' // the store keeps its own copy
	got, err := s.LoadSend(ctx, key, clock.Now())
	rec.Answer = []byte(`{"message":{"messageId":"x"}}`)
	if err != nil || !reflect.DeepEqual(got, rec) {
		t.Fatalf("LoadSend = %+v, %v; want %+v", got, err, rec)
	}
	task := SendRecord{Digest: "d", State: SendTask, TaskID: "t1", Expires: rec.Expires}
	if err := s.SaveSend(ctx, key, task); err != nil {
		t.Fatal(err)
	}
	if got, err := s.LoadSend(ctx, key, clock.Now()); err != nil || !reflect.DeepEqual(got, task) {
		t.Fatalf("LoadSend after overwrite = %+v, %v; want %+v", got, err, task)
	}
}

func testRetryExpiry(t *testing.T, open opener) {
	s, clock := open.onFakeClock(t)
	ctx := context.Background()
	key := SendKey{Agent: "a", Owner: "o", Key: "m1"}
	if _, _, claimed, _ := s.ClaimSend(ctx, Admission{Agent: "a", Owner: "o"}, key, running(clock, "d1"), clock.Now()); !claimed {
		t.Fatal("first claim refused")
	}
	clock.Advance(time.Hour)
	if _, err := s.LoadSend(ctx, key, clock.Now()); !errors.Is(err, ErrNotFound) {
		t.Fatalf("LoadSend at expiry = %v, want ErrNotFound", err)
	}
	if _, prior, claimed, _ := s.ClaimSend(ctx, Admission{Agent: "a", Owner: "o"}, key, running(clock, "d2"), clock.Now()); !claimed {
		t.Fatalf("claim after the window found %+v", prior)
	}
}

func testRetryClaimRace(t *testing.T, open opener) {
	s, clock := open.onFakeClock(t)
	key := SendKey{Agent: "a", Owner: "o", Key: "m1"}
	var wg sync.WaitGroup
	var mu sync.Mutex
	claims := 0
	for range 16 {
		wg.Go(func() {
			_, _, claimed, err := s.ClaimSend(context.Background(), Admission{Agent: "a", Owner: "o"}, key, running(clock, "d"), clock.Now())
			if err != nil && !errors.Is(err, ErrNotFound) {
				t.Error(err)
			}
			if claimed {
				mu.Lock()
				claims++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if claims != 1 {
		t.Fatalf("%d of 16 concurrent claims of one key succeeded, want 1", claims)
	}
}

func testRetryClosed(t *testing.T, open opener) {
	s, clock := open.onFakeClock(t)
	ctx := context.Background()
	_ = s.Close()
	key := SendKey{Agent: "a", Owner: "o", Key: "m1"}
	_, _, _, err := s.ClaimSend(ctx, Admission{Agent: "a", Owner: "o"}, key, running(clock, "d"), clock.Now())
	calls := map[string]error{"ClaimSend": err, "SaveSend": s.SaveSend(ctx, key, running(clock, "d")),
		"PutSend": s.PutSend(ctx, Task{ID: "t1", Agent: "a", Owner: "o"}, key, running(clock, "d"))}
	_, calls["LoadSend"] = s.LoadSend(ctx, key, clock.Now())
	for name, err := range calls {
		if !errors.Is(err, ErrUnavailable) {
			t.Errorf("%s after Close = %v, want ErrUnavailable", name, err)
		}
	}
}

// A claim for a send Admit refuses is not kept: the send never runs.
func TestRetryClaimReleasedOnRefusal(t *testing.T) {
	m := NewMemory(MemoryConfig{MaxTasks: 1})
	defer m.Close()
	ctx := context.Background()
	mustPut(t, m, Task{ID: "t1", Agent: "a", Owner: "o", State: "TASK_STATE_WORKING"})
	clock := newFakeClock()
	key := SendKey{Agent: "a", Owner: "o", Key: "m1"}
	if _, _, claimed, err := m.ClaimSend(ctx, Admission{Agent: "a", Owner: "o"}, key, running(clock, "d"), clock.Now()); claimed || !errors.Is(err, ErrOwnerQuota) {
		t.Fatalf("ClaimSend into a full share = %v, %v; want not claimed, ErrOwnerQuota", claimed, err)
	}
}

func testRetryNotAcceptedClaimedOver(t *testing.T, open opener) {
	s, clock := open.onFakeClock(t)
	ctx := context.Background()
	key := SendKey{Agent: "a", Owner: "o", Key: "m1"}
	failed := SendRecord{Digest: "d1", State: SendNotAccepted, Expires: clock.Now().Add(time.Hour).UTC()}
	if err := s.SaveSend(ctx, key, failed); err != nil {
		t.Fatal(err)
	}
	again := running(clock, "d1")
	_, prior, claimed, _ := s.ClaimSend(ctx, Admission{Agent: "a", Owner: "o"}, key, again, clock.Now())
	if !claimed || !reflect.DeepEqual(prior, failed) {
		t.Fatalf("claim over a not-accepted send = %+v, %v; want claimed, with the failed record", prior, claimed)
	}
	if _, prior, claimed, _ = s.ClaimSend(ctx, Admission{Agent: "a", Owner: "o"}, key, running(clock, "d1"), clock.Now()); claimed || !reflect.DeepEqual(prior, again) {
		t.Fatalf("claim after the resend = %+v, %v; want the resend's record", prior, claimed)
	}
}

// testRetryGetClaim: a send continuing a task reads the task and claims
// its key at once; a second claim finds the first; an unknown task is
// ErrNotFound, with the claim made all the same.
func testRetryGetClaim(t *testing.T, open opener) {
	s, clock := open.onFakeClock(t)
	ctx := context.Background()
	mustPut(t, s, Task{ID: "t1", Agent: "a", Owner: "o", ContextID: "cx", State: "TASK_STATE_INPUT_REQUIRED"})
	key := SendKey{Agent: "a", Owner: "o", Key: "m1"}
	first := running(clock, "d1")
	task, prior, claimed, err := s.GetClaimSend(ctx, "a", "t1", key, first, clock.Now())
	if err != nil || !claimed || !reflect.DeepEqual(prior, SendRecord{}) || task.ID != "t1" || task.Owner != "o" || task.State != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("first GetClaimSend = %+v, %+v, %v, %v; want the task, claimed", task, prior, claimed, err)
	}
	_, prior, claimed, err = s.GetClaimSend(ctx, "a", "t1", key, running(clock, "d2"), clock.Now())
	if err != nil || claimed || !reflect.DeepEqual(prior, first) {
		t.Fatalf("second GetClaimSend = %+v, %v, %v; want the first record, not claimed", prior, claimed, err)
	}
	other := SendKey{Agent: "a", Owner: "o", Key: "m2"}
	if _, _, claimed, err = s.GetClaimSend(ctx, "a", "nope", other, first, clock.Now()); !errors.Is(err, ErrNotFound) || !claimed {
		t.Fatalf("GetClaimSend of an unknown task = %v, %v; want claimed, ErrNotFound", claimed, err)
	}
	if got, err := s.LoadSend(ctx, other, clock.Now()); err != nil || !reflect.DeepEqual(got, first) {
		t.Fatalf("the claim made beside an unknown task: %+v, %v", got, err)
	}
	if _, _, _, err := s.GetClaimSend(ctx, "a", "t1", SendKey{Agent: "a"}, first, clock.Now()); err == nil {
		t.Fatal("GetClaimSend with no key succeeded")
	}
}

// testRetryPutSend: PutSend puts the task as Put does and writes the
// send's record with it; a task Put refuses (another owner's id) leaves
// the record as it was, and a key of another agent is refused.
func testRetryPutSend(t *testing.T, open opener) {
	s, clock := open.onFakeClock(t)
	ctx := context.Background()
	key := SendKey{Agent: "a", Owner: "o", Key: "m1"}
	claim := running(clock, "d1")
	if _, _, claimed, err := s.ClaimSend(ctx, Admission{Agent: "a", Owner: "o"}, key, claim, clock.Now()); !claimed || !errors.Is(err, ErrNotFound) {
		t.Fatalf("ClaimSend = %v, %v; want claimed", claimed, err)
	}
	outcome := SendRecord{Digest: "d1", State: SendTask, TaskID: "t1", Expires: claim.Expires}
	task := Task{ID: "t1", Agent: "a", Owner: "o", ContextID: "cx", Backend: "b", State: "TASK_STATE_COMPLETED", Updated: clock.Now().UTC().Truncate(time.Microsecond)}
	if err := s.PutSend(ctx, task, key, outcome); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get(ctx, "a", "t1"); err != nil || !sameTask(got, task) {
		t.Fatalf("Get after PutSend = %+v, %v; want %+v", got, err, task)
	}
	if got, err := s.ContextOwner(ctx, "a", "cx"); err != nil || got != "o" {
		t.Fatalf("ContextOwner after PutSend = %q, %v; want o", got, err)
	}
	if got, err := s.LoadSend(ctx, key, clock.Now()); err != nil || !reflect.DeepEqual(got, outcome) {
		t.Fatalf("LoadSend after PutSend = %+v, %v; want %+v", got, err, outcome)
	}

	theirs := SendKey{Agent: "a", Owner: "p", Key: "m1"}
	theirClaim := running(clock, "d2")
	if _, _, claimed, _ := s.ClaimSend(ctx, Admission{Agent: "a", Owner: "p"}, theirs, theirClaim, clock.Now()); !claimed {
		t.Fatal("the other owner's claim was refused")
	}
	taken := Task{ID: "t1", Agent: "a", Owner: "p", State: "TASK_STATE_WORKING"}
	if err := s.PutSend(ctx, taken, theirs, SendRecord{Digest: "d2", State: SendTask, TaskID: "t1", Expires: theirClaim.Expires}); !errors.Is(err, ErrOwnerConflict) {
		t.Fatalf("PutSend of another owner's task id = %v, want ErrOwnerConflict", err)
	}
	if got, err := s.LoadSend(ctx, theirs, clock.Now()); err != nil || !reflect.DeepEqual(got, theirClaim) {
		t.Fatalf("LoadSend after a refused PutSend = %+v, %v; want the claim unchanged %+v", got, err, theirClaim)
	}
	if got, err := s.Get(ctx, "a", "t1"); err != nil || !sameTask(got, task) {
		t.Fatalf("Get after a refused PutSend = %+v, %v; want %+v", got, err, task)
	}

	if err := s.PutSend(ctx, Task{ID: "t2", Agent: "b", Owner: "o"}, key, outcome); err == nil {
		t.Fatal("PutSend with a key of another agent succeeded")
	}
}

func sameTask(a, b Task) bool {
	au, bu := a.Updated, b.Updated
	a.Updated, b.Updated = time.Time{}, time.Time{}
	return a == b && au.Equal(bu)
}
