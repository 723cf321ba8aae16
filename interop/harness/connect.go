package harness

import (
	"context"
	"fmt"
	"sync"
)

// Connection is an SDK client and the agent card it was built from.
type Connection[Card, Client any] struct {
	Card   Card
	Client Client
}

// Dialer builds an SDK's Connection the way an application does: it
// resolves the card, then builds the client from it.
type Dialer[Card, Client any] struct {
	Resolve  func(ctx context.Context) (Card, error)
	FromCard func(ctx context.Context, card Card) (Client, error)

	once sync.Once
	conn *Connection[Card, Client]
	err  error
}

// Dial builds a new Connection.
func (d *Dialer[Card, Client]) Dial(ctx context.Context) (*Connection[Card, Client], error) {
	card, err := d.Resolve(ctx)
	if err != nil {
		return nil, fmt.Errorf("resolve card: %w", err)
	}
	client, err := d.FromCard(ctx, card)
	if err != nil {
		return nil, fmt.Errorf("client from card: %w", err)
	}
	return &Connection[Card, Client]{Card: card, Client: client}, nil
}

// Shared returns the Connection the scenarios share, dialed on first use
// only; a failure to dial ends the scenario.
func (d *Dialer[Card, Client]) Shared(ctx context.Context, c Checker) *Connection[Card, Client] {
	d.once.Do(func() { d.conn, d.err = d.Dial(ctx) })
	c.NoErr(d.err, "connect")
	return d.conn
}
