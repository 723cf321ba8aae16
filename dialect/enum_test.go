package dialect

import "testing"

var enumTables = map[string][]Pair{"TaskStates": TaskStates, "Roles": Roles, "EventKinds": EventKinds}

// TestEnumTablesBijective: in every enum table each 0.x spelling, 1.0
// spelling and number names one value, and ToV10, ToV03 and ByNumber
// invert each other. Only a 1.0 value with no 0.x counterpart (V03 "")
// maps one way.
func TestEnumTablesBijective(t *testing.T) {
	for name, table := range enumTables {
		v03, v10, numbers := map[string]bool{}, map[string]bool{}, map[int]bool{}
		for _, p := range table {
			if p.V10 == "" {
				t.Errorf("%s: %+v has no 1.0 spelling", name, p)
			}
			if p.V03 != "" && v03[p.V03] {
				t.Errorf("%s: 0.x %q is in two pairs", name, p.V03)
			}
			if v10[p.V10] {
				t.Errorf("%s: 1.0 %q is in two pairs", name, p.V10)
			}
			if numbers[p.Number] {
				t.Errorf("%s: number %d is in two pairs", name, p.Number)
			}
			v03[p.V03], v10[p.V10], numbers[p.Number] = true, true, true

			if got, ok := ByNumber(table, p.Number); !ok || got != p {
				t.Errorf("%s: ByNumber(%d) = %+v, %v; want %+v", name, p.Number, got, ok, p)
			}
			got03, ok03 := ToV03(table, p.V10)
			if p.V03 == "" {
				if ok03 {
					t.Errorf("%s: ToV03(%q) = %q; it has no 0.x spelling", name, p.V10, got03)
				}
				continue
			}
			if !ok03 || got03 != p.V03 {
				t.Errorf("%s: ToV03(%q) = %q, %v; want %q", name, p.V10, got03, ok03, p.V03)
			}
			if got, ok := ToV10(table, p.V03); !ok || got != p.V10 {
				t.Errorf("%s: ToV10(%q) = %q, %v; want %q", name, p.V03, got, ok, p.V10)
			}
		}
		if got, ok := ToV10(table, ""); ok {
			t.Errorf("%s: ToV10(\"\") = %q", name, got)
		}
		if got, ok := ToV03(table, "NOT_A_VALUE"); ok {
			t.Errorf("%s: ToV03 of an unknown value = %q", name, got)
		}
	}
}

// TestStateClasses: the terminal and interrupted states are states of the
// table, and no state is both.
func TestStateClasses(t *testing.T) {
	terminal := map[string]bool{"completed": true, "canceled": true, "failed": true, "rejected": true}
	interrupted := map[string]bool{"input-required": true, "auth-required": true}
	for _, p := range TaskStates {
		if got := TerminalState(p.V10); got != terminal[p.V03] {
			t.Errorf("TerminalState(%s) = %v", p.V10, got)
		}
		if got := InterruptedState(p.V10); got != interrupted[p.V03] {
			t.Errorf("InterruptedState(%s) = %v", p.V10, got)
		}
	}
}
