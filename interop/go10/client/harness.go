package main

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

// failure is the panic value of a failed check; the runner turns it into
// a FAIL line, much like testing.T.FailNow ends a test.
type failure struct{ msg string }

// checker is handed to each scenario.
type checker struct{}

// Fatalf ends the scenario with a failure.
func (checker) Fatalf(format string, args ...any) {
	panic(failure{fmt.Sprintf(format, args...)})
}

// Check ends the scenario when ok is false.
func (c checker) Check(ok bool, format string, args ...any) {
	if !ok {
		c.Fatalf(format, args...)
	}
}

// Equal ends the scenario when got differs from want.
func Equal[T comparable](c checker, got, want T, what string) {
	if got != want {
		c.Fatalf("%s: got %v, want %v", what, got, want)
	}
}

// NoErr ends the scenario on an unexpected error.
func (c checker) NoErr(err error, what string) {
	if err != nil {
		c.Fatalf("%s: %v", what, err)
	}
}

type scenario struct {
	name string
	run  func(ctx context.Context, c checker)
}

type runner struct {
	scenarios []scenario
	label     func(name string) string
	only      []string
	// skip names why a scenario cannot run over the client's transport
	// ("" runs it); a skipped scenario prints a SKIP line run.sh ignores.
	skip     func(name string) string
	timeout  time.Duration
	recorder *recordingTransport
	origin   string
}

func (r *runner) add(name string, run func(ctx context.Context, c checker)) {
	r.scenarios = append(r.scenarios, scenario{name, run})
}

// run executes every selected scenario and returns how many failed.
func (r *runner) run(ctx context.Context) int {
	failures := 0
	for _, s := range r.scenarios {
		if len(r.only) > 0 && !slices.Contains(r.only, s.name) {
			continue
		}
		if reason := r.skip(s.name); reason != "" {
			fmt.Printf("SKIP %s %s\n", r.label(s.name), reason)
			continue
		}
		r.recorder.reset()
		err := r.runOne(ctx, s)
		if err == nil {
			if foreign := r.recorder.foreign(r.origin); len(foreign) > 0 {
				err = fmt.Errorf("requests left %s: %v", r.origin, foreign)
			}
		}
		if err != nil {
			failures++
			fmt.Printf("FAIL %s %s\n", r.label(s.name), strings.Join(strings.Fields(err.Error()), " "))
			continue
		}
		fmt.Printf("PASS %s\n", r.label(s.name))
	}
	return failures
}

func (r *runner) runOne(parent context.Context, s scenario) (err error) {
	ctx, cancel := context.WithTimeout(parent, r.timeout)
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
		s.run(ctx, checker{})
		done <- nil
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("scenario %s timed out after %v", s.name, r.timeout)
	}
}

// recordingTransport remembers every URL the SDK requested, so a scenario
// fails if a card made the client bypass the endpoint under test.
type recordingTransport struct {
	base http.RoundTripper
	mu   sync.Mutex
	urls []string
}

func (t *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.mu.Lock()
	t.urls = append(t.urls, req.URL.String())
	t.mu.Unlock()
	return t.base.RoundTrip(req)
}

// requested returns the URLs requested since the last reset.
func (t *recordingTransport) requested() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.urls)
}

func (t *recordingTransport) reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.urls = nil
}

func (t *recordingTransport) foreign(origin string) []string {
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
