package harness

import (
	"context"
	"fmt"
	"sync"
)

// Connection is an SDK client (Conn) and the agent card it was built from.
type Connection[Card, Conn any] struct {
	Card   Card
	Client Conn
}

// Dialer builds an SDK's Connection the way an application does: it
// resolves the card, then builds the client from it.
type Dialer[Card, Conn any] struct {
	Resolve  func(ctx context.Context) (Card, error)
	FromCard func(ctx context.Context, card Card) (Conn, error)

	once sync.Once
	conn *Connection[Card, Conn]
	err  error
}

// Dial builds a new Connection.
func (d *Dialer[Card, Conn]) Dial(ctx context.Context) (*Connection[Card, Conn], error) {
	card, err := d.Resolve(ctx)
	if err != nil {
		return nil, fmt.Errorf("resolve card: %w", err)
	}
	client, err := d.FromCard(ctx, card)
	if err != nil {
		return nil, fmt.Errorf("client from card: %w", err)
	}
	return &Connection[Card, Conn]{Card: card, Client: client}, nil
}

// Shared returns the Connection the scenarios share, dialed on first use
// only; a failure to dial ends the scenario.
func (d *Dialer[Card, Conn]) Shared(ctx context.Context, c Checker) *Connection[Card, Conn] {
	d.once.Do(func() { d.conn, d.err = d.Dial(ctx) })
	c.NoErr(d.err, "connect")
	return d.conn
}

// SDK is what a client module tells the harness of its SDK: its command
// line, how it resolves the card and builds its client from it, and how
// that client becomes the shared scenarios' Client.
type SDK[Card, Conn any] struct {
	Command
	Resolve  func(ctx context.Context, s Setup) (Card, error)
	FromCard func(ctx context.Context, s Setup, card Card) (Conn, error)
	Adapt    func(Conn) Client
}

// Env is one run's setup and the connection its scenarios share.
type Env[Card, Conn any] struct {
	Setup
	Dialer *Dialer[Card, Conn]
	Adapt  func(Conn) Client
}

// Client is the shared connection's client, dialed on first use only.
func (e *Env[Card, Conn]) Client(ctx context.Context, c Checker) Client {
	return e.Adapt(e.Dialer.Shared(ctx, c).Client)
}

// Card is the card the shared connection was built from.
func (e *Env[Card, Conn]) Card(ctx context.Context, c Checker) Card {
	return e.Dialer.Shared(ctx, c).Card
}

// Main parses the command line, lets register add the scenarios to the
// runner (and set its Skip) and runs them; see Command.Main.
func (sdk SDK[Card, Conn]) Main(register func(e *Env[Card, Conn], r *Runner)) int {
	return sdk.Command.Main(func(s Setup, r *Runner) {
		register(&Env[Card, Conn]{Setup: s, Adapt: sdk.Adapt, Dialer: &Dialer[Card, Conn]{
			Resolve:  func(ctx context.Context) (Card, error) { return sdk.Resolve(ctx, s) },
			FromCard: func(ctx context.Context, card Card) (Conn, error) { return sdk.FromCard(ctx, s, card) },
		}}, r)
	})
}
