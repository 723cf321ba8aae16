package reliability

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
)

// faultOutcome is one line of the suite's summary.
type faultOutcome struct {
	name     string
	received []string
	pass     bool
}

var summary struct {
	mu     sync.Mutex
	faults []*faultOutcome
}

// fault is what a test tells the summary about the fault it tries.
type fault struct {
	mu  sync.Mutex
	out *faultOutcome
}

// newFault registers the fault a test tries under name. Its outcome is the
// test's: PASS when the test ends without failing.
func newFault(t *testing.T, name string) *fault {
	f := &fault{out: &faultOutcome{name: name}}
	t.Cleanup(func() {
		f.mu.Lock()
		f.out.pass = !t.Failed()
		f.mu.Unlock()
		summary.mu.Lock()
		summary.faults = append(summary.faults, f.out)
		summary.mu.Unlock()
	})
	return f
}

// saw notes what the callers received, for the summary line.
func (f *fault) saw(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.out.received = append(f.out.received, fmt.Sprintf(format, args...))
}

// printSummary writes one line per fault and the totals, and returns the
// number of failed faults.
func printSummary(w io.Writer) (failed int) {
	summary.mu.Lock()
	defer summary.mu.Unlock()
	if len(summary.faults) == 0 {
		return 0
	}
	passed := 0
	fmt.Fprintln(w, "\n== reliability summary")
	for _, f := range summary.faults {
		verdict := "PASS"
		if f.pass {
			passed++
		} else {
			verdict = "FAIL"
			failed++
		}
		received := strings.Join(f.received, "; ")
		if received == "" {
			received = "(the test failed before the callers received anything)"
		}
		fmt.Fprintf(w, "FAULT %s: %s -> %s\n", f.name, received, verdict)
	}
	fmt.Fprintf(w, "%d passed, %d failed\n", passed, failed)
	return failed
}
