package normalize

import (
	"bytes"
	"os"
	"testing"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/testfiles"
)

// TestEventInfoMatchesInspect holds the info AppendInspectedEvent reads during its
// translation to what a separate Inspect walk reads, and its output to
// AppendEvent's with the final flag the relay writes by default, for every
// golden event in both directions.
func TestEventInfoMatchesInspect(t *testing.T) {
	t.Parallel()
	files := testfiles.Glob(t, "testdata", "event", "*.json")
	checked := 0
	for _, p := range files {
		body, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, from := range []dialect.ID{dialect.V03, dialect.V10} {
			for _, to := range []dialect.ID{dialect.V03, dialect.V10} {
				if checkEventInfo(t, from, to, body) {
					checked++
				}
			}
		}
	}
	if checked < len(files) {
		t.Fatalf("only %d translations of %d golden events succeeded: the check proves little", checked, len(files))
	}
}

// checkEventInfo compares AppendInspectedEvent with Inspect and AppendEvent on one
// event, and reports whether it translated.
func checkEventInfo(t *testing.T, from, to dialect.ID, body []byte) bool {
	t.Helper()
	out, info, err := appendInspectedEvent(nil, from, to, body, nil)
	if err != nil {
		if _, plainErr := AppendEvent(nil, from, to, body, false); plainErr == nil {
			t.Fatalf("%s to %s: AppendInspectedEvent fails (%v) where AppendEvent translates: %s", from, to, err, body)
		}
		return false
	}
	want, err := Inspect(body)
	if err != nil {
		t.Fatalf("%s to %s: Inspect fails (%v) on an event AppendInspectedEvent translates: %s", from, to, err, body)
	}
	if info != want {
		t.Fatalf("%s to %s: AppendInspectedEvent reads %+v, Inspect %+v: %s", from, to, info, want, body)
	}
	wantOut, err := AppendEvent(nil, from, to, body, dialect.TerminalState(want.State))
	if err != nil || !bytes.Equal(out, wantOut) {
		t.Fatalf("%s to %s: AppendInspectedEvent writes %s, AppendEvent with final on a terminal state %s (%v)", from, to, out, wantOut, err)
	}
	return true
}
