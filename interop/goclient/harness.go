package main

import "github.com/a2agate/gateway/interop/harness"

// The scenario runner is shared with the other Go SDK client
// (interop/harness); these names keep the scenarios' own spelling.
type (
	checker            = harness.Checker
	runner             = harness.Runner
	recordingTransport = harness.RecordingTransport
)

// Equal fails c unless got == want.
func Equal[T comparable](c checker, got, want T, what string) { harness.Equal(c, got, want, what) }
