package dialect

import (
	"strings"
	"testing"
)

// TestMethodTablesBijective: in each dialect every method name maps to one
// operation and back, Lookup and MethodName agree both ways, and no name
// is spelled in both dialects (the name alone decides the dialect).
func TestMethodTablesBijective(t *testing.T) {
	dialectOf := map[string]ID{}
	for _, d := range []ID{V03, V10} {
		ops := map[Op]string{}
		for _, m := range methods(d) {
			if m.Op == OpUnknown || m.Op >= opCount {
				t.Errorf("%s: %q maps to no operation (%d)", d, m.Name, m.Op)
			}
			if prev, dup := ops[m.Op]; dup {
				t.Errorf("%s: %s is spelled both %q and %q", d, m.Op, prev, m.Name)
			}
			ops[m.Op] = m.Name
			if prev, dup := dialectOf[m.Name]; dup {
				t.Errorf("%q is a method of %s and of %s", m.Name, prev, d)
			}
			dialectOf[m.Name] = d
			if gd, gop, ok := Lookup(m.Name); !ok || gd != d || gop != m.Op {
				t.Errorf("Lookup(%q) = %s, %s, %v; want %s, %s", m.Name, gd, gop, ok, d, m.Op)
			}
			if name, ok := MethodName(d, m.Op); !ok || name != m.Name {
				t.Errorf("MethodName(%s, %s) = %q, %v; want %q", d, m.Op, name, ok, m.Name)
			}
		}
	}
}

// TestMethodTablesCoverEveryOp: 1.0 has a method for every operation, 0.x
// for every one but ListTasks, which the gateway emulates there.
func TestMethodTablesCoverEveryOp(t *testing.T) {
	for _, op := range Ops {
		if _, ok := MethodName(V10, op); !ok {
			t.Errorf("1.0 has no method for %s", op)
		}
		_, ok := MethodName(V03, op)
		if want := op != ListTasks; ok != want {
			t.Errorf("MethodName(0.x, %s) found %v, want %v", op, ok, want)
		}
	}
	if name, ok := MethodName(V10, OpUnknown); ok {
		t.Errorf("OpUnknown has a 1.0 method %q", name)
	}
}

// TestMethodSpelling: 0.x names are slash-style, 1.0 names PascalCase, as
// Lookup's rule assumes.
func TestMethodSpelling(t *testing.T) {
	for _, m := range methodsV03 {
		if !strings.Contains(m.Name, "/") {
			t.Errorf("0.x method %q has no slash", m.Name)
		}
	}
	for _, m := range methodsV10 {
		if strings.Contains(m.Name, "/") || m.Name[0] < 'A' || m.Name[0] > 'Z' {
			t.Errorf("1.0 method %q is not PascalCase", m.Name)
		}
	}
}

// TestUnknownMethods: retired and unknown names are no method, in either
// dialect.
func TestUnknownMethods(t *testing.T) {
	for _, name := range append([]string{"", "message/Send", "sendMessage", "SendMessage "}, Retired...) {
		if d, op, ok := Lookup(name); ok || op != OpUnknown {
			t.Errorf("Lookup(%q) = %s, %s, %v; want no method", name, d, op, ok)
		}
	}
}
