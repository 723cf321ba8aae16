package agentcore

// State is a task state, named on the wire by each dialect.
type State int

// The task states the agents use. 0.2.5's "unknown" and 1.0's
// "unspecified" are never a task's state, so they have no value here.
const (
	StateSubmitted State = iota
	StateWorking
	StateInputRequired
	StateAuthRequired
	StateCompleted
	StateCanceled
	StateFailed
	StateRejected
)

// Terminal reports whether no transition leaves s.
func (s State) Terminal() bool {
	switch s {
	case StateCompleted, StateCanceled, StateFailed, StateRejected:
		return true
	}
	return false
}

// Interrupted reports whether s waits for the client.
func (s State) Interrupted() bool { return s == StateInputRequired || s == StateAuthRequired }

// Settled reports whether a blocking send returns and a stream cycle ends
// at s.
func (s State) Settled() bool { return s.Terminal() || s.Interrupted() }
