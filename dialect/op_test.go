package dialect

import (
	"regexp"
	"testing"
)

// metricLabel is what a name used as a metric label value may look like.
var metricLabel = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// TestOpNamesUnique: every operation has a name of its own, safe as a
// metric label, and an out-of-range Op reads as unknown.
func TestOpNamesUnique(t *testing.T) {
	seen := map[string]Op{}
	for op := OpUnknown; op < opCount; op++ {
		name := op.String()
		if !metricLabel.MatchString(name) {
			t.Errorf("Op %d is named %q, not a snake_case label", op, name)
		}
		if prev, dup := seen[name]; dup {
			t.Errorf("Ops %d and %d are both named %q", prev, op, name)
		}
		seen[name] = op
	}
	if got := opCount.String(); got != "unknown" {
		t.Errorf("an out-of-range Op is named %q, want unknown", got)
	}
}

// TestOpsListsEveryOpOnce: Ops holds each operation once, in declaration
// order, and not OpUnknown.
func TestOpsListsEveryOpOnce(t *testing.T) {
	if len(Ops) != int(opCount)-1 {
		t.Fatalf("Ops has %d operations, want %d", len(Ops), opCount-1)
	}
	for i, op := range Ops {
		if want := Op(i + 1); op != want {
			t.Errorf("Ops[%d] = %s, want %s", i, op, want)
		}
	}
}

// TestOpClasses: the streaming operations are the two that answer with SSE,
// and every operation that addresses a task takes a task id.
func TestOpClasses(t *testing.T) {
	streaming := map[Op]bool{SendStreamingMessage: true, SubscribeToTask: true}
	addressing := map[Op]bool{GetTask: true, CancelTask: true, SubscribeToTask: true,
		CreatePushConfig: true, GetPushConfig: true, ListPushConfigs: true, DeletePushConfig: true}
	for op := OpUnknown; op < opCount; op++ {
		if got := op.Streaming(); got != streaming[op] {
			t.Errorf("%s.Streaming() = %v", op, got)
		}
		if got := op.AddressesTask(); got != addressing[op] {
			t.Errorf("%s.AddressesTask() = %v", op, got)
		}
	}
}
