//go:build race

package testrace

// Enabled tells tests that the race detector is on: it allocates and
// deepens every frame, so allocation and stack budgets do not hold under it.
const Enabled = true
