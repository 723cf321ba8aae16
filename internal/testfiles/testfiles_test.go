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

// recorded runs f with a recorder, on a goroutine of its own that a
// failure ends.
func recorded(t *testing.T, f func(r *recorder)) *recorder {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	return r
}

func glob(t *testing.T, elem ...string) ([]string, *recorder) {
	var files []string
	r := recorded(t, func(r *recorder) { files = Glob(r, elem...) })
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

func TestWrite(t *testing.T) {
	a, b := Write(t, "config.yaml", []byte("a: 1\n")), Write(t, "config.yaml", nil)
	if a == b || filepath.Base(a) != "config.yaml" {
		t.Fatalf("Write gave %s and %s, want two files called config.yaml", a, b)
	}
	got, err := os.ReadFile(a)
	if err != nil || string(got) != "a: 1\n" {
		t.Fatalf("the file holds %q, %v; want what was written", got, err)
	}
	info, err := os.Stat(a)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, %v; want -rw-------", info.Mode(), err)
	}
	if r := recorded(t, func(r *recorder) { Write(r, "no/such/dir", nil) }); !strings.HasPrefix(r.msg, "writing") {
		t.Errorf("Write into a missing directory failed with %q, want writing ...", r.msg)
	}
}
