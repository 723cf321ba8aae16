package harness

import (
	"context"
	"slices"
	"testing"
)

func TestAddAfterKeepsTheOwnScenariosInPlace(t *testing.T) {
	var r Runner
	noop := func(context.Context, Checker) {}
	for _, name := range []string{"a", "b", "c"} {
		r.Add(name, noop)
	}
	r.AddAfter("a", "a2", noop)
	r.AddAfter("a2", "a3", noop)
	r.AddAfter("c", "d", noop)
	r.AddAfter("missing", "z", noop)
	var got []string
	for _, s := range r.scenarios {
		got = append(got, s.name)
	}
	if want := []string{"a", "a2", "a3", "b", "c", "d", "z"}; !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
}
