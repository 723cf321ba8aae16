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
	"dialect":                {},
	"auth":                   {"internal/jsonscan"},
	"store":                  {},
	"normalize":              {"dialect", "internal/jsonscan"},
	"agentcard":              {"dialect", "internal/jsonscan"},
	"proxy":                  {"normalize", "agentcard", "dialect", "auth", "store", "internal/sse", "internal/readall", "internal/staticheader", "telemetry", "binding/rest", "binding/grpc", "push"},
	"binding/rest":           {"dialect", "internal/sse", "internal/rpcerror", "internal/readall", "internal/jsonscan"},
	"binding/grpc":           {"dialect", "internal/rpcerror", "internal/jsonscan"},
	"configs":                {},
	"push":                   {"dialect"},
	"telemetry":              {"internal/staticheader"},
	"legacyagent":            {"internal/agentcore"},
	"internal/agent10":       {"internal/agentcore"},
	"internal/agentcore":     {},
	"internal/agenttest":     {},
	"internal/testnet":       {},
	"internal/testclock":     {},
	"internal/testlog":       {},
	"internal/testredis":     {},
	"internal/testfiles":     {},
	"internal/sse":           {},
	"internal/jsonscan":      {},
	"internal/rpcerror":      {"dialect"},
	"internal/readall":       {},
	"internal/jsontest":      {},
	"internal/protojsontest": {"internal/jsontest"},
	"internal/staticheader":  {},
	"internal/redistopo":     {},
	"internal/grpctest":      {},
	"internal/testrace":      {},
	"internal/importpolicy":  {},
	"cmd/gateway":            {"proxy", "normalize", "dialect", "auth", "store", "configs", "legacyagent", "telemetry"},
	"bench/canned":           {"internal/readall"},
	"bench/cmd/loadbench":    {"bench/canned", "dialect", "internal/testredis"},
	"reliability":            {"*"},
	"reliability/cmd/*":      {"*"},
}

// denied lists standard-library and third-party imports a package may not
// have. The translators, cards and codecs stay functions over bytes (no
// HTTP), so they can be fuzzed and benchmarked alone; proxy holds no A2A
// JSON of its own, so it has no JSON path library to build or edit any with.
var denied = map[string][]string{
	"proxy":             {"github.com/tidwall/gjson", "github.com/tidwall/sjson"},
	"normalize":         {"net/http"},
	"internal/sse":      {"net/http"},
	"internal/jsonscan": {"net/http"},
	"agentcard":         {"net/http"},
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
			if slices.Contains(denied[name], imp) {
				t.Errorf("%s imports %s, which the policy denies it", name, imp)
			}
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
