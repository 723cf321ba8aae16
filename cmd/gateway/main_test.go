package main

import (
	"os"
	"testing"
)

// runMainEnv, set to 1, makes this test binary run the gateway's main
// instead of the tests: the tests that need the process itself (its
// signal handling, its exit) run it so, without building it apart.
const runMainEnv = "A2AGW_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}
