package harness

import (
	"errors"
	"slices"
	"testing"
)

func TestMapKeepsNil(t *testing.T) {
	double := func(i int) int { return 2 * i }
	if got := Map([]int(nil), double); got != nil {
		t.Fatalf("Map(nil) = %#v, want nil", got)
	}
	if got := Map([]int{}, double); got == nil || len(got) != 0 {
		t.Fatalf("Map(empty) = %#v, want empty, not nil", got)
	}
	if got := Map([]int{1, 2}, double); !slices.Equal(got, []int{2, 4}) {
		t.Fatalf("Map = %v", got)
	}
}

func TestEventsPassErrorsAndStop(t *testing.T) {
	boom := errors.New("boom")
	sdk := func(yield func(string, error) bool) {
		for _, step := range []struct {
			kind string
			err  error
		}{{"a", nil}, {"", boom}, {"b", nil}, {"c", nil}} {
			if !yield(step.kind, step.err) {
				return
			}
		}
	}
	var kinds []string
	var errs []error
	for e, err := range Events(sdk, func(kind string) Event { return Event{Kind: kind} }) {
		kinds, errs = append(kinds, e.Kind), append(errs, err)
		if e.Kind == "b" {
			break
		}
	}
	if !slices.Equal(kinds, []string{"a", "", "b"}) || errs[1] != boom || errs[0] != nil || errs[2] != nil {
		t.Fatalf("events %q, errors %v", kinds, errs)
	}
}

type sdkTask struct{ id string }
type sdkMessage struct{ id string }

func TestResultOf(t *testing.T) {
	task := func(t *sdkTask) *Task { return &Task{ID: t.id} }
	message := func(m *sdkMessage) *Message { return &Message{ID: m.id} }
	if r := ResultOf(any(&sdkTask{"t"}), task, message); r.Task == nil || r.Task.ID != "t" || r.Message != nil {
		t.Fatalf("task result %+v", r)
	}
	if r := ResultOf(any(&sdkMessage{"m"}), task, message); r.Message == nil || r.Message.ID != "m" || r.Task != nil {
		t.Fatalf("message result %+v", r)
	}
	if r := ResultOf(any("other"), task, message); r.Task != nil || r.Message != nil || r.SDK != "other" {
		t.Fatalf("other result %+v", r)
	}
}
