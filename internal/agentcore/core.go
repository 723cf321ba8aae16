package agentcore

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// Options configures an agent. The zero value is usable.
type Options struct {
	// Name is the agent card's name. Defaults to the agent's DefaultName.
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
	// Like makes the agent answer as one SDK's server does where the SDK
	// servers of its dialect differ; the zero value is the agent's own
	// answers. Tests of the gateway use it to meet each SDK's behaviour.
	Like SDKServer
}

// SDKServer names an SDK server whose answers an agent can give where they
// differ from the bundled agents' own.
type SDKServer uint8

const (
	// OwnAnswers is the bundled agent's own behaviour.
	OwnAnswers SDKServer = iota
	// JS025 is the @a2a-js/sdk 0.2.5 (and 0.3) server: a tasks/get without
	// historyLength answers no history, and a message to a task in a final
	// state is -32600.
	JS025
	// GoV2 is the a2a-go v2 server: a subscription to a task in a final
	// state is -32001 "no active execution", a message to one -32602, a
	// cancel of one answers the task, and a push config delete answers no
	// result member.
	GoV2
)

// Dialect is what the core needs to know of a wire's message type M and
// artifact type A.
type Dialect[M, A any] interface {
	// IDs points at msg's taskId and contextId, "" when absent, for the
	// core to read and to set.
	IDs(msg *M) (taskID, contextID *string)
	// FirstText is the text of msg's first text part, or "".
	FirstText(msg M) string
	// AgentMessage is a message from the agent holding text, about the task
	// taskID ("" for none) of contextID.
	AgentMessage(text, taskID, contextID string) M
	// ResultArtifact is an artifact named "result" holding text followed by
	// a copy of every non-text part of msg.
	ResultArtifact(text string, msg M) A
	// NotAccepting is the error for a message to a task that does not wait
	// for input: why says which task and why, detail names the task and its
	// state.
	NotAccepting(why string, detail map[string]string) *Error
}

// Core is an agent's dialect-neutral part for messages M, artifacts A and
// push configs C. It is safe for concurrent use.
type Core[M, A, C any] struct {
	// Opts is the agent's configuration; Name is already defaulted.
	Opts    Options
	dialect Dialect[M, A]
	store   *store[M, A, C]
	// states are the dialect's names of the task states.
	states  map[State]string
	methods *Methods
	// cards maps each card route to the card it serves, given the public
	// JSON-RPC URL.
	cards  map[string]func(url string) any
	card   CardSpelling
	pushID func(cfg *C, taskID string) *string
	// webhooks, when set, sends push notifications (webhook.go).
	webhooks *Webhooks[M, A, C]

	// ctx is the parent of every task script; Close cancels it.
	ctx    context.Context
	cancel context.CancelFunc
	// done is closed by Close to end open streams and blocking sends.
	done chan struct{}

	mu      sync.Mutex // guards closed and the scripts.Add that follows its check
	closed  bool
	scripts sync.WaitGroup
}

// Wire is what a dialect adds to the core: its spelling of messages,
// artifacts and push configs C, its JSON-RPC methods and its agent cards.
type Wire[M, A, C any] struct {
	// DefaultName is the card's name when Options.Name is empty.
	DefaultName string
	Dialect     Dialect[M, A]
	Methods     *Methods
	// Cards maps each card route to the card it serves, given the public
	// JSON-RPC URL.
	Cards map[string]func(url string) any
	// Card is how the cards describe the agent.
	Card CardSpelling
	// PushID is where push config cfg, about to be stored for task taskID,
	// keeps its id; a 1.0 config names its task too, which PushID sets.
	PushID func(cfg *C, taskID string) *string
	// Spelling is how the dialect writes task states, in task bodies and
	// error details, and timestamps.
	Spelling Spelling
}

// New returns a Core speaking w.
func New[M, A, C any](opts Options, w Wire[M, A, C]) *Core[M, A, C] {
	if opts.Name == "" {
		opts.Name = w.DefaultName
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Core[M, A, C]{
		Opts:    opts,
		dialect: w.Dialect,
		store:   newStore[M, A, C](time.Now, w.Spelling.Precision),
		states:  w.Spelling.States,
		methods: w.Methods,
		cards:   w.Cards,
		card:    w.Card,
		pushID:  w.PushID,
		ctx:     ctx,
		cancel:  cancel,
		done:    make(chan struct{}),
	}
}

// ServeHTTP serves JSON-RPC on POST / and the cards on GET and HEAD.
func (c *Core[M, A, C]) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/" {
		if r.Method != http.MethodPost {
			MethodNotAllowed(w, http.MethodPost)
			return
		}
		c.serveRPC(w, r)
		return
	}
	if card, ok := c.cards[r.URL.Path]; ok {
		c.serveCard(w, r, card)
		return
	}
	http.NotFound(w, r)
}

// Close stops every running task script, ends open streams and blocking
// sends, and waits for the scripts to return. Later JSON-RPC calls get 503.
// Close is idempotent.
func (c *Core[M, A, C]) Close() {
	c.mu.Lock()
	if !c.closed {
		c.closed = true
		close(c.done)
		c.cancel()
	}
	c.mu.Unlock()
	c.scripts.Wait()
}

func (c *Core[M, A, C]) closedNow() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// spawn runs script for rec on its own goroutine, cancelable through a
// cancel call and Close. If the agent is already closed the task fails
// instead, so that it never sits in a state nothing will advance.
func (c *Core[M, A, C]) spawn(rec *Record[M, A, C], script func(ctx context.Context)) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		c.store.setStatus(rec, StateFailed, c.agentMessage(rec, "The agent is shutting down."))
		return
	}
	ctx, cancel := context.WithCancel(c.ctx)
	c.scripts.Add(1)
	c.mu.Unlock()

	c.store.setStop(rec, cancel)
	go func() {
		defer c.scripts.Done()
		defer cancel()
		script(ctx)
	}()
}

// pause waits StepDelay and reports whether the script should go on.
func (c *Core[M, A, C]) pause(ctx context.Context) bool {
	if c.Opts.StepDelay <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(c.Opts.StepDelay)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
