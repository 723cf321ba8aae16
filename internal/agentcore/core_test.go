package agentcore

import (
	"strings"
	"testing"
	"time"
)

func TestClassify(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text string
		want behaviour
	}{
		{"Is it up?", answer},
		{"  wait, is it up?  ", answer},
		{"FAILURE", fail},
		{"fail?", answer},
		{"Input", askInput},
		{"WAIT here", waitForCancel},
		{"hello", complete},
		{"", complete},
		{"please fail", complete},
	}
	for _, tt := range tests {
		if got := classify(tt.text); got != tt.want {
			t.Errorf("classify(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}

func TestStoreForgetsOldestTerminalTask(t *testing.T) {
	t.Parallel()
	s := newStore[string, string, string](time.Now, time.Millisecond)
	s.maxTasks = 2
	running, _ := s.create(NewID(), "ctx", "m")
	done, _ := s.create(NewID(), "ctx", "m")
	s.setStatus(done, StateCompleted, nil)

	newest, _ := s.create(NewID(), "ctx", "m")
	for rec, want := range map[*Record[string, string, string]]bool{running: true, done: false, newest: true} {
		if _, ok := s.lookup(rec.task.ID); ok != want {
			t.Errorf("task in state %d kept = %v, want %v", rec.task.Status.State, ok, want)
		}
	}
	// Nothing terminal left to forget: the store grows past the bound
	// rather than dropping live tasks.
	s.create(NewID(), "ctx", "m")
	if len(s.tasks) != 3 {
		t.Fatalf("store holds %d tasks, want 3", len(s.tasks))
	}
}

func TestStoreStampsAtThePrecisionWritten(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 7, 31, 14, 0, 0, 123456789, time.FixedZone("CEST", 2*3600))
	s := newStore[string, string, string](func() time.Time { return at }, time.Millisecond)
	_, snap := s.create("t", "c", "m")
	if want := time.Date(2025, 7, 31, 12, 0, 0, 123000000, time.UTC); !snap.Status.Time.Equal(want) || snap.Status.Time.Location() != time.UTC {
		t.Fatalf("status time = %v, want %v", snap.Status.Time, want)
	}
}

func TestNewIDIsAUUID(t *testing.T) {
	t.Parallel()
	id := NewID()
	if len(id) != 36 || id[14] != '4' || strings.Count(id, "-") != 4 || !strings.ContainsRune("89ab", rune(id[19])) {
		t.Fatalf("NewID() = %q, want a version 4 UUID", id)
	}
	if NewID() == id {
		t.Fatal("two ids are equal")
	}
}

func TestStates(t *testing.T) {
	t.Parallel()
	for s := StateSubmitted; s <= StateRejected; s++ {
		terminal := s == StateCompleted || s == StateCanceled || s == StateFailed || s == StateRejected
		interrupted := s == StateInputRequired || s == StateAuthRequired
		if s.Terminal() != terminal || s.Interrupted() != interrupted || s.Settled() != (terminal || interrupted) {
			t.Errorf("state %d: terminal %v interrupted %v settled %v", s, s.Terminal(), s.Interrupted(), s.Settled())
		}
	}
}
