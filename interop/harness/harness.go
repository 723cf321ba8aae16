// Package harness is everything of the Go SDK clients' interop runs that
// does not touch the SDK's types, so that the two client modules, pinned to
// a2a-go versions that cannot share a module, hold only the SDK calls and
// the checks on what they return: the command line, the scenario runner
// and its PASS, FAIL and SKIP lines, the card-then-client dial, the texts
// of the scripted backend, the error codes and the hand-made JSON-RPC posts.
package harness

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

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

type scenario struct {
	name string
	run  func(ctx context.Context, c Checker)
}

type Runner struct {
	scenarios []scenario
	Label     func(name string) string
	Only      []string
	// skip names why a scenario cannot run over the client's transport
	// ("" runs it); a skipped scenario prints a SKIP line run.sh ignores.
	Skip     func(name string) string
	Timeout  time.Duration
	Recorder *RecordingTransport
	Origin   string
}

func (r *Runner) Add(name string, run func(ctx context.Context, c Checker)) {
	r.scenarios = append(r.scenarios, scenario{name, run})
}

// Run executes every selected scenario and returns how many failed.
func (r *Runner) Run(ctx context.Context) int {
	failures := 0
	for _, s := range r.scenarios {
		if len(r.Only) > 0 && !slices.Contains(r.Only, s.name) {
			continue
		}
		if reason := r.Skip(s.name); reason != "" {
			fmt.Printf("SKIP %s %s\n", r.Label(s.name), reason)
			continue
		}
		r.Recorder.Reset()
		err := r.runOne(ctx, s)
		if err == nil {
			if foreign := r.Recorder.Foreign(r.Origin); len(foreign) > 0 {
				err = fmt.Errorf("requests left %s: %v", r.Origin, foreign)
			}
		}
		if err != nil {
			failures++
			fmt.Printf("FAIL %s %s\n", r.Label(s.name), strings.Join(strings.Fields(err.Error()), " "))
			continue
		}
		fmt.Printf("PASS %s\n", r.Label(s.name))
	}
	return failures
}

func (r *Runner) runOne(parent context.Context, s scenario) (err error) {
	ctx, cancel := context.WithTimeout(parent, r.Timeout)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				if f, ok := p.(failure); ok {
					done <- errors.New(f.msg)
					return
				}
				done <- fmt.Errorf("panic: %v", p)
			}
		}()
		s.run(ctx, Checker{})
		done <- nil
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("scenario %s timed out after %v", s.name, r.Timeout)
	}
}

// RecordingTransport remembers every URL the SDK requested, so a scenario
// fails if a card made the client bypass the endpoint under test.
type RecordingTransport struct {
	Base http.RoundTripper
	mu   sync.Mutex
	urls []string
}

func (t *RecordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.mu.Lock()
	t.urls = append(t.urls, req.URL.String())
	t.mu.Unlock()
	return t.Base.RoundTrip(req)
}

// Requested returns the URLs requested since the last reset.
func (t *RecordingTransport) Requested() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.urls)
}

func (t *RecordingTransport) Reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.urls = nil
}

func (t *RecordingTransport) Foreign(origin string) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	for _, u := range t.urls {
		parsed, err := url.Parse(u)
		if err != nil || parsed.Scheme+"://"+parsed.Host != origin {
			out = append(out, u)
		}
	}
	return out
}
