// Package testfiles finds the files a test reads its cases from, and
// writes the files a test hands to the code under test by path.
package testfiles

import (
	"os"
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

// Write writes data to a file called name in a new directory of tb's,
// readable by the owner only as a secret file must be, and returns its path.
func Write(tb testing.TB, name string, data []byte) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		tb.Fatalf("writing %s: %v", name, err)
	}
	return path
}
