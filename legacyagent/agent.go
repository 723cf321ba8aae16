package legacyagent

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// Routes served by an Agent.
const (
	rpcPath          = "/"
	cardPath         = "/.well-known/agent.json"
	extendedCardPath = "/agent/authenticatedExtendedCard"
)

// DefaultName is the agent card's name when Options.Name is empty.
const DefaultName = "Legacy Helpdesk Agent"

// Options configures an Agent. The zero value is usable.
type Options struct {
	// Name is the agent card's name. Defaults to DefaultName.
	Name string
	// PublicURL is the JSON-RPC endpoint advertised in the agent card. When
	// empty, each card request derives it from its Host header, so the card
	// is right on whatever listener the agent is mounted.
	PublicURL string
	// StepDelay is the pause between two task state transitions: a few
	// hundred milliseconds make a demo stream watchable, tests use zero.
	// Defaults to 0.
	StepDelay time.Duration
	// Hold, when non-nil, completes every "wait" task once it is closed, so
	// a test can hold a stream open at a known point. When nil a "wait" task
	// stays working until it is canceled.
	Hold chan struct{}
}

// Agent is an A2A 0.2.5 agent. It is an http.Handler; see the package
// documentation for its routes and behaviour.
type Agent struct {
	opts  Options
	store *store

	// ctx is the parent of every task script; Close cancels it.
	ctx    context.Context
	cancel context.CancelFunc
	// done is closed by Close to end open streams and blocking sends.
	done chan struct{}

	mu      sync.Mutex // guards closed and the scripts.Add that follows its check
	closed  bool
	scripts sync.WaitGroup
}

// New returns an Agent configured by opts.
func New(opts Options) *Agent {
	if opts.Name == "" {
		opts.Name = DefaultName
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Agent{
		opts:   opts,
		store:  newStore(time.Now),
		ctx:    ctx,
		cancel: cancel,
		done:   make(chan struct{}),
	}
}

// ServeHTTP serves JSON-RPC on POST / and the agent cards on GET.
func (a *Agent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case rpcPath:
		if r.Method != http.MethodPost {
			methodNotAllowed(w, http.MethodPost)
			return
		}
		a.serveRPC(w, r)
	case cardPath:
		a.serveCard(w, r, false)
	case extendedCardPath:
		a.serveCard(w, r, true)
	default:
		http.NotFound(w, r)
	}
}

// Close stops every running task script, ends open streams and blocking
// sends, and waits for the scripts to return. Later JSON-RPC calls get 503.
// Close is idempotent.
func (a *Agent) Close() {
	a.mu.Lock()
	if !a.closed {
		a.closed = true
		close(a.done)
		a.cancel()
	}
	a.mu.Unlock()
	a.scripts.Wait()
}

func (a *Agent) isClosed() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.closed
}

// spawn runs script for rec on its own goroutine, cancelable through
// tasks/cancel and Close. If the agent is already closed the task fails
// instead, so that it never sits in a state nothing will advance.
func (a *Agent) spawn(rec *record, script func(ctx context.Context)) {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		a.store.setStatus(rec, stateFailed, agentMessage(rec, "The agent is shutting down."))
		return
	}
	ctx, cancel := context.WithCancel(a.ctx)
	a.scripts.Add(1)
	a.mu.Unlock()

	a.store.setStop(rec, cancel)
	go func() {
		defer a.scripts.Done()
		defer cancel()
		script(ctx)
	}()
}

// pause waits StepDelay and reports whether the script should go on.
func (a *Agent) pause(ctx context.Context) bool {
	if a.opts.StepDelay <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(a.opts.StepDelay)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func methodNotAllowed(w http.ResponseWriter, allow string) {
	w.Header().Set("Allow", allow)
	http.Error(w, http.StatusText(http.StatusMethodNotAllowed), http.StatusMethodNotAllowed)
}
