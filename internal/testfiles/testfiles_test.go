package testfiles

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// recorder is a testing.TB that records a failure and ends its goroutine
// as the testing package does.
type recorder struct {
	testing.TB
	msg string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.msg = format
	runtime.Goexit()
}

func glob(t *testing.T, elem ...string) ([]string, *recorder) {
	r := &recorder{TB: t}
	var files []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		files = Glob(r, elem...)
	}()
	<-done
	return files, r
}

func TestGlob(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a.json", "b.json", "c.txt"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	files, r := glob(t, dir, "*.json")
	if r.msg != "" || len(files) != 2 || !strings.HasSuffix(files[0], "a.json") || !strings.HasSuffix(files[1], "b.json") {
		t.Errorf("Glob(*.json) = %q, failure %q; want a.json and b.json", files, r.msg)
	}
	if _, r := glob(t, dir, "*.yaml"); !strings.HasPrefix(r.msg, "no file matches") {
		t.Errorf("Glob with no match failed with %q, want no file matches", r.msg)
	}
	if _, r := glob(t, dir, "["); !strings.HasPrefix(r.msg, "bad pattern") {
		t.Errorf("Glob of a bad pattern failed with %q, want bad pattern", r.msg)
	}
}
