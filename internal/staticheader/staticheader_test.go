package staticheader

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestValue: a value file's one trailing newline is not
// part of the value; any other control byte, from a file or the
// environment, is refused at load with the header's name.
func TestValue(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		content, want, refused string
	}{
		{"token", "token", ""},
		{"token\n", "token", ""},
		{"token\r\n", "token", ""},
		{"token\n\n", "", "holds a control byte"},
		{"tok\r\nX-Injected: 1", "", "holds a control byte"},
		{"tok\x00en", "", "holds a control byte"},
	}
	for i, c := range cases {
		file := filepath.Join(dir, strconv.Itoa(i))
		if err := os.WriteFile(file, []byte(c.content), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := Config{Name: "X-Key", ValueFile: file}.Value()
		switch {
		case c.refused == "" && (err != nil || got != c.want):
			t.Errorf("%q: got %q, %v; want %q", c.content, got, err, c.want)
		case c.refused != "" && (err == nil || !strings.Contains(err.Error(), c.refused) || !strings.Contains(err.Error(), "X-Key")):
			t.Errorf("%q: got %q, %v; want an error saying %q", c.content, got, err, c.refused)
		}
	}
	t.Setenv("A2AGW_TEST_HEADER", "token\n")
	if _, err := (Config{Name: "X-Key", ValueEnv: "A2AGW_TEST_HEADER"}).Value(); err == nil || !strings.Contains(err.Error(), "environment variable A2AGW_TEST_HEADER holds a control byte") {
		t.Errorf("an environment value with a newline: %v", err)
	}
}

// TestValidate: a header needs an HTTP token for a name and exactly one
// source; every problem is reported under the field's name.
func TestValidate(t *testing.T) {
	cases := []struct {
		h    Config
		want []string // each must appear; none means valid
	}{
		{Config{Name: "X-Key", ValueEnv: "K"}, nil},
		{Config{Name: "X-Key", ValueFile: "/k"}, nil},
		{Config{ValueEnv: "K"}, []string{"headers[3]: name is required"}},
		{Config{Name: "X-A\r\nInjected", ValueEnv: "K"}, []string{`headers[3]: name "X-A\r\nInjected" is not an HTTP header name`}},
		{Config{Name: "X Token", ValueEnv: "K"}, []string{`headers[3]: name "X Token" is not an HTTP header name`}},
		{Config{Name: "X-Key"}, []string{"headers[3] (X-Key): set exactly one of value_file and value_env"}},
		{Config{Name: "X-Key", ValueEnv: "K", ValueFile: "/k"}, []string{"headers[3] (X-Key): set exactly one of value_file and value_env"}},
		{Config{}, []string{"headers[3]: name is required", "headers[3] (): set exactly one of value_file and value_env"}},
	}
	for _, c := range cases {
		err := c.h.Validate("headers[3]")
		if len(c.want) == 0 {
			if err != nil {
				t.Errorf("%+v: %v, want valid", c.h, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%+v: valid, want %q", c.h, c.want)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%+v: %v, want it to say %q", c.h, err, w)
			}
		}
	}
}
