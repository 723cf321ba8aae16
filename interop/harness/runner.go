package harness

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

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

// AddAfter adds a scenario right after the one named prev (at the end
// when there is none), so that a client's own scenarios keep their place
// among the shared ones.
func (r *Runner) AddAfter(prev, name string, run func(ctx context.Context, c Checker)) {
	at := len(r.scenarios)
	if i := slices.IndexFunc(r.scenarios, func(s scenario) bool { return s.name == prev }); i >= 0 {
		at = i + 1
	}
	r.scenarios = slices.Insert(r.scenarios, at, scenario{name, run})
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
