// Package testrace tells tests whether they run under the race detector.
package testrace
