// Package testfiles finds the files a test reads its cases from.
package testfiles

import (
	"path/filepath"
	"testing"
)

// Glob returns the files matching the pattern that elem joins to, and fails
// tb when none does: a golden or seed test that finds no files would pass
// having checked nothing.
func Glob(tb testing.TB, elem ...string) []string {
	tb.Helper()
	pattern := filepath.Join(elem...)
	files, err := filepath.Glob(pattern)
	if err != nil {
		tb.Fatalf("bad pattern %s: %v", pattern, err)
	}
	if len(files) == 0 {
		tb.Fatalf("no file matches %s", pattern)
	}
	return files
}
