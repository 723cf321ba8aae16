package dialect

// Pair is one value of an enum in both dialects: V03 is the 0.x JSON-RPC
// spelling, V10 the ProtoJSON name, Number the proto enum number (ProtoJSON
// parsers accept it in place of the name).
type Pair struct {
	V03    string
	V10    string
	Number int
}

// TaskStates maps task states. "unknown" and TASK_STATE_UNSPECIFIED have no
// other counterpart; any unmapped 1.0 value becomes "unknown" in 0.x, as the
// Python and JS compat layers do.
var TaskStates = []Pair{
	{"unknown", "TASK_STATE_UNSPECIFIED", 0},
	{"submitted", "TASK_STATE_SUBMITTED", 1},
	{"working", "TASK_STATE_WORKING", 2},
	{"completed", "TASK_STATE_COMPLETED", 3},
	{"failed", "TASK_STATE_FAILED", 4},
	{"canceled", "TASK_STATE_CANCELED", 5},
	{"input-required", "TASK_STATE_INPUT_REQUIRED", 6},
	{"rejected", "TASK_STATE_REJECTED", 7},
	{"auth-required", "TASK_STATE_AUTH_REQUIRED", 8},
}

// Roles maps message roles. 0.x has no unspecified role; the SDK compat
// layers send anything that is not the user as "agent".
var Roles = []Pair{
	{"user", "ROLE_USER", 1},
	{"agent", "ROLE_AGENT", 2},
	{"", "ROLE_UNSPECIFIED", 0},
}

// EventKinds maps stream event discriminators: the 0.x "kind" value against
// the 1.0 StreamResponse wrapper key.
var EventKinds = []Pair{
	{"task", "task", 1},
	{"message", "message", 2},
	{"status-update", "statusUpdate", 3},
	{"artifact-update", "artifactUpdate", 4},
}

// ToV10 returns the 1.0 spelling of a 0.x value in table t.
func ToV10(t []Pair, v string) (string, bool) {
	for _, p := range t {
		if p.V03 == v && v != "" {
			return p.V10, true
		}
	}
	return "", false
}

// ToV03 returns the 0.x spelling of a 1.0 value in table t.
func ToV03(t []Pair, v string) (string, bool) {
	for _, p := range t {
		if p.V10 == v && p.V03 != "" {
			return p.V03, true
		}
	}
	return "", false
}

// ByNumber returns the pair whose proto enum number is n.
func ByNumber(t []Pair, n int) (Pair, bool) {
	for _, p := range t {
		if p.Number == n {
			return p, true
		}
	}
	return Pair{}, false
}

// TerminalState reports whether a 1.0 task state ends the task: no further
// message may continue it and no stream follows it.
func TerminalState(v10 string) bool {
	switch v10 {
	case "TASK_STATE_COMPLETED", "TASK_STATE_CANCELED", "TASK_STATE_FAILED", "TASK_STATE_REJECTED":
		return true
	}
	return false
}

// InterruptedState reports whether a 1.0 task state pauses the task for the
// caller (input or authentication required).
func InterruptedState(v10 string) bool {
	return v10 == "TASK_STATE_INPUT_REQUIRED" || v10 == "TASK_STATE_AUTH_REQUIRED"
}
