package reliability

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/a2agate/gateway/internal/testrace"
)

// gatewayBin is the gateway binary under test, built once by TestMain;
// gatewayRace tells whether it has the race detector.
var (
	gatewayBin  string
	gatewayRace bool
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "reliability-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	gatewayBin = filepath.Join(dir, "gateway")
	if err := buildGateway(gatewayBin); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(2)
	}
	code := m.Run()
	os.RemoveAll(dir)
	if n := printSummary(os.Stdout); n > 0 && code == 0 {
		code = 1
	}
	os.Exit(code)
}

// buildGateway builds cmd/gateway into out, with the race detector when this
// test binary has it (or as RELIABILITY_GATEWAY_RACE says).
func buildGateway(out string) error {
	race := testrace.Enabled
	switch os.Getenv("RELIABILITY_GATEWAY_RACE") {
	case "0":
		race = false
	case "1":
		race = true
	}
	gatewayRace = race
	args := []string{"build", "-o", out}
	if race {
		args = append(args, "-race")
	}
	args = append(args, "github.com/a2agate/gateway/cmd/gateway")
	cmd := exec.Command("go", args...)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building the gateway: %v\n%s", err, b)
	}
	return nil
}
