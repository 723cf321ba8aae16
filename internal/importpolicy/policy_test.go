package importpolicy

import (
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/a2agate/gateway/"

// allowed lists, for each package, the module packages it may import.
// A package missing here may not exist: new packages need a line.
var allowed = map[string][]string{
	"dialect":               {},
	"auth":                  {},
	"store":                 {},
	"normalize":             {"dialect"},
	"proxy":                 {"normalize", "dialect", "auth", "store", "telemetry", "binding/grpc"},
	"binding/grpc":          {"dialect"},
	"configs":               {},
	"push":                  {"dialect"},
	"telemetry":             {},
	"legacyagent":           {},
	"internal/agent10":      {},
	"internal/testnet":      {},
	"internal/testredis":    {},
	"internal/importpolicy": {},
	"cmd/gateway":           {"proxy", "normalize", "dialect", "auth", "store", "configs", "legacyagent", "telemetry"},
	"bench/canned":          {},
	"bench/cmd/loadbench":   {"bench/canned", "dialect"},
	"reliability":           {"*"},
	"reliability/cmd/*":     {"*"},
}

type pkg struct {
	ImportPath string
	Imports    []string
}

// TestImportPolicy checks the non-test imports of every package.
func TestImportPolicy(t *testing.T) {
	out, err := exec.Command("go", "list", "-json", "../../...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	seen := 0
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(p.ImportPath, module)
		rule, ok := allowed[name]
		if !ok {
			for pattern, r := range allowed {
				if strings.HasSuffix(pattern, "/*") && strings.HasPrefix(name, strings.TrimSuffix(pattern, "*")) {
					rule, ok = r, true
				}
			}
		}
		if !ok {
			t.Errorf("package %s has no line in the import policy", name)
			continue
		}
		seen++
		if slices.Contains(rule, "*") {
			continue
		}
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			// A main package built with a profile (a default.pgo beside it)
			// imports its own builds of the module's packages, which go list
			// names "PKG [MAIN]".
			imp, _, _ = strings.Cut(imp, " [")
			dep := strings.TrimPrefix(imp, module)
			if !slices.Contains(rule, dep) {
				t.Errorf("%s imports %s, which the policy does not allow", name, dep)
			}
		}
	}
	if seen < 8 {
		t.Fatalf("only %d packages checked: go list did not see the module", seen)
	}
}
