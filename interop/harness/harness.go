// Package harness is everything of the Go SDK clients' interop runs that
// does not touch the SDK's types, so that the two client modules, pinned to
// a2a-go versions that cannot share a module, hold only an adapter from
// their SDK to the neutral shapes (model.go, Client) and the scenarios only
// their SDK has: the scenarios both run, written once against Client, the
// command line, the scenario runner and its PASS, FAIL and SKIP lines, the
// card-then-client dial, the texts of the scripted backend, the error codes
// and the hand-made JSON-RPC posts.
package harness

import "fmt"

// failure is the panic value of a failed check; the Runner turns it into
// a FAIL line, much like testing.T.FailNow ends a test.
type failure struct{ msg string }

// Checker is handed to each scenario.
type Checker struct{}

// Fatalf ends the scenario with a failure.
func (Checker) Fatalf(format string, args ...any) {
	panic(failure{fmt.Sprintf(format, args...)})
}

// Check ends the scenario when ok is false.
func (c Checker) Check(ok bool, format string, args ...any) {
	if !ok {
		c.Fatalf(format, args...)
	}
}

// Equal ends the scenario when got differs from want.
func Equal[T comparable](c Checker, got, want T, what string) {
	if got != want {
		c.Fatalf("%s: got %v, want %v", what, got, want)
	}
}

// NoErr ends the scenario on an unexpected error.
func (c Checker) NoErr(err error, what string) {
	if err != nil {
		c.Fatalf("%s: %v", what, err)
	}
}
