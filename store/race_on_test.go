//go:build race

package store

// raceEnabled tells tests that the race detector is on; it allocates, so
// allocation budgets do not hold under it.
const raceEnabled = true
