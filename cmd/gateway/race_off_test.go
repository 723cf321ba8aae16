//go:build !race

package main

// raceEnabled tells tests that the race detector is on; it deepens every
// frame, so stack budgets do not hold under it.
const raceEnabled = false
