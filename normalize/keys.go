package normalize

import (
	"strings"

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/jsonscan"
)

// keySpec is one member an object translator knows, with the proto field
// name that ProtoJSON parsers must also accept on input.
type keySpec struct{ camel, snake string }

// maxMembers is the size of the largest spec table, so that members has room
// for every table's members: adding a member to a table needs nothing else.
// A new table joins this list (TestKeySpecsFitMembers checks that it did).
const maxMembers = max(len(envelopeKeys), len(replyKeys), len(updateKeys),
	len(listTasksKeys), len(messageKeys), len(partKeys), len(fileKeys),
	len(pushKeys), len(authKeys), len(sendKeys), len(configurationKeys),
	len(taskIDKeys), len(pushParamsKeys), len(pushListKeys), len(taskListKeys),
	len(taskKeys), len(statusKeys), len(artifactKeys), len(extendedCardKeys))

// members holds the known members of one input object, indexed like its
// spec table. A zero Result means absent.
type members struct {
	vals    [maxMembers]gjson.Result
	unknown bool // the object has members the spec does not know
	renamed bool // a member used its snake_case spelling
}

// collect reads obj's members against specs. Duplicate members and members
// whose names differ from a known one only in case are errors: a backend
// decoding with encoding/json would read those differently from the gateway
// (last duplicate wins there, first here; names match case-insensitively
// there), and ownership checks must see what the backend will see.
func collect(obj gjson.Result, specs []keySpec, m *members) error {
	return collectIn(nil, obj, specs, m)
}

// collectIn is collect stepping over the containers sp knows by lookup.
func collectIn(sp *jsonscan.Spans, obj gjson.Result, specs []keySpec, m *members) error {
	if !obj.IsObject() {
		return fail("must be an object, got %s", typeName(obj))
	}
	var err error
	sp.Each(obj, func(k, v gjson.Result) bool {
		i, snake := match(specs, k.Str)
		if i < 0 {
			if j := foldMatch(specs, k.Str); j >= 0 {
				err = fail("member %q differs only in letter case from %q", k.Str, specs[j].camel)
				return false
			}
			m.unknown = true
			return true
		}
		if m.vals[i].Exists() {
			err = fail("duplicate member %q", specs[i].camel)
			return false
		}
		m.vals[i] = v
		m.renamed = m.renamed || snake
		return true
	})
	return err
}

func match(specs []keySpec, k string) (int, bool) {
	for i, s := range specs {
		if k == s.camel {
			return i, false
		}
		if s.snake != "" && k == s.snake {
			return i, true
		}
	}
	return -1, false
}

func foldMatch(specs []keySpec, k string) int {
	for i, s := range specs {
		if strings.EqualFold(k, s.camel) || (s.snake != "" && strings.EqualFold(k, s.snake)) {
			return i
		}
	}
	return -1
}

// unknownMembers copies every member of obj that specs does not know, so
// extensions a peer added travel on untouched.
func (w *writer) unknownMembers(obj gjson.Result, specs []keySpec) {
	jsonscan.Each(obj, func(k, v gjson.Result) bool {
		if i, _ := match(specs, k.Str); i < 0 {
			w.member(k, v)
		}
		return true
	})
}

// closeObject copies obj's members that specs does not know, when collect
// found any (unknown), and closes the object.
func (w *writer) closeObject(obj gjson.Result, specs []keySpec, unknown bool) {
	if unknown {
		w.unknownMembers(obj, specs)
	}
	w.close('}')
}

// copyPresent writes member i of m as it came, under its camelCase name,
// when it is present.
func (w *writer) copyPresent(m *members, specs []keySpec, i int) {
	if v := m.vals[i]; v.Exists() {
		w.key(specs[i].camel)
		w.raw(v.Raw)
	}
}

// copyUnlessDefault writes each present member idx of m as it came, under
// its camelCase name, leaving out of a 1.0 output one at its proto3
// default (see skipDefault).
func (c *conv) copyUnlessDefault(m *members, specs []keySpec, to dialect.ID, idx ...int) {
	for _, i := range idx {
		if v := m.vals[i]; v.Exists() && !c.skipDefault(v, to) {
			c.w.key(specs[i].camel)
			c.w.raw(v.Raw)
		}
	}
}

func typeName(v gjson.Result) string {
	switch v.Type {
	case gjson.Null:
		return "null"
	case gjson.False, gjson.True:
		return "a boolean"
	case gjson.Number:
		return "a number"
	case gjson.String:
		return "a string"
	}
	if v.IsArray() {
		return "an array"
	}
	if v.IsObject() {
		return "an object"
	}
	return "nothing"
}

func wantString(v gjson.Result, name string) error {
	if v.Type != gjson.String {
		return at(fail("must be a string, got %s", typeName(v)), name)
	}
	return nil
}

func requireString(v gjson.Result, name string) error {
	if !v.Exists() {
		return at(fail("is required"), name)
	}
	if err := wantString(v, name); err != nil {
		return err
	}
	if v.Str == "" {
		return at(fail("must not be empty"), name)
	}
	return nil
}

func wantObject(v gjson.Result, name string) error {
	return wantAbsentOr(v, name, v.IsObject(), "an object")
}

func wantArray(v gjson.Result, name string) error {
	return wantAbsentOr(v, name, v.IsArray(), "an array")
}

func wantBool(v gjson.Result, name string) error {
	return wantAbsentOr(v, name, v.IsBool(), "a boolean")
}

// wantAbsentOr fails member name when it is present but not of its type:
// is says whether v is, what names the type for the message.
func wantAbsentOr(v gjson.Result, name string, is bool, what string) error {
	if v.Exists() && !is {
		return at(fail("must be %s, got %s", what, typeName(v)), name)
	}
	return nil
}

// wantStringArray checks v is absent or an array of strings.
func wantStringArray(v gjson.Result, name string) error {
	if err := wantArray(v, name); err != nil || !v.Exists() {
		return err
	}
	var err error
	i := 0
	jsonscan.Each(v, func(_, e gjson.Result) bool {
		if e.Type != gjson.String {
			err = at(atIndex(fail("must be a string, got %s", typeName(e)), i), name)
			return false
		}
		i++
		return true
	})
	return err
}
