package main

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommandLine checks what an operator's script sees: help is no
// failure, a wrong invocation exits 2 naming what is wrong (never ignored),
// a bad config exits 1, and version prints the build.
func TestCommandLine(t *testing.T) {
	good := filepath.Join("testdata", "cli", "good.yaml")
	bad := filepath.Join("testdata", "config", "missing_listen.yaml")
	for _, tc := range []struct {
		name       string
		args       []string
		code       int // 0: no error
		out, inErr string
	}{
		{"help", []string{"--help"}, 0, "", "gateway validate -config FILE"},
		{"help short", []string{"-h"}, 0, "", "gateway version"},
		{"validate help", []string{"validate", "-h"}, 0, "", "-config"},
		{"version", []string{"version"}, 0, "gateway ", ""},
		{"version flag", []string{"--version"}, 0, "gateway ", ""},
		{"version stray", []string{"version", "x"}, 2, "", `unexpected argument "x"`},
		{"unknown flag", []string{"--listn", ":8080"}, 2, "", "flag provided but not defined: -listn"},
		{"stray argument", []string{"-config", good, "extra.yaml"}, 2, "", `unexpected argument "extra.yaml"`},
		{"validate stray argument", []string{"validate", "-config", good, "other.yaml"}, 2, "", `unexpected argument "other.yaml"`},
		{"validate no config", []string{"validate"}, 2, "", "-config FILE is required"},
		{"validate ok", []string{"validate", "-config", good}, 0, good + ": ok", ""},
		{"validate bad config", []string{"validate", "-config", bad}, 1, "", "listen is required"},
		{"neither config nor backend", nil, 2, "", "give -config FILE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			// Ended already: an invocation that wrongly serves stops at once.
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			err := run(ctx, tc.args, &out, &errOut)
			code := 0
			if err != nil {
				code = exitCode(err)
				errOut.WriteString(err.Error())
			}
			if code != tc.code {
				t.Errorf("exit status %d, want %d (error %v)", code, tc.code, err)
			}
			if !strings.Contains(out.String(), tc.out) {
				t.Errorf("stdout %q lacks %q", out.String(), tc.out)
			}
			if !strings.Contains(errOut.String(), tc.inErr) {
				t.Errorf("stderr and error %q lack %q", errOut.String(), tc.inErr)
			}
		})
	}
}

// TestListenFlagsChecked: --listen and --admin-listen are checked as the
// config file's addresses are, in both modes: one port for both, or an
// address without a port, is refused before anything listens.
func TestListenFlagsChecked(t *testing.T) {
	good := filepath.Join("testdata", "cli", "good.yaml")
	for _, args := range [][]string{
		{"-config", good, "--listen", "127.0.0.1:9090", "--admin-listen", ":9090"},
		{"--backend", "http://127.0.0.1:9999/", "--backend-dialect", "1.0", "--listen", ":9090", "--admin-listen", "127.0.0.1:9090"},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		err := run(ctx, args, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "takes the port of listen") {
			t.Errorf("%q: got %v", args, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := run(ctx, []string{"-config", good, "--admin-listen", "9090"}, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), `admin.listen "9090" is not host:port`) {
		t.Errorf("an admin address without a port: %v", err)
	}
}

// TestVersionFromBuildArgument: a build without VCS information (the
// image's) prints the version it was given.
func TestVersionFromBuildArgument(t *testing.T) {
	old := buildVersion
	buildVersion = "v9.8.7-test"
	t.Cleanup(func() { buildVersion = old })
	if v := version(); !strings.HasPrefix(v, "gateway v9.8.7-test ") {
		t.Errorf("version %q", v)
	}
}
