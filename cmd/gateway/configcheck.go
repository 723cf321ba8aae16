package main

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// checkFields walks a config document against the type it decodes into and
// reports every key it does not know and every value that does not fit its
// field, each named by its path (agents[0].backend.connect_timeout) and
// line: yaml's own decoder names only a line and a Go type
// (proxy.BackendConfig), which an operator has not seen. It also refuses
// what the decoder takes silently and wrongly: a number without a unit for
// a duration (which would be nanoseconds, if it were taken) and a fraction
// for a whole number (which the decoder truncates: 1.5 streams become 1).
func checkFields(doc *yaml.Node) error {
	w := fieldWalker{seen: map[walked]bool{}}
	w.walk(doc, reflect.TypeFor[Config](), "")
	return errors.Join(w.errs...)
}

type fieldWalker struct {
	errs []error
	// seen is every aliased node walked, by the type it was walked as, so
	// that an alias bomb (aliases of aliases, each used many times) costs
	// one walk per anchor rather than one per use.
	seen map[walked]bool
}

type walked struct {
	n *yaml.Node
	t reflect.Type
}

var (
	durationType    = reflect.TypeFor[time.Duration]()
	unmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()
)

func (w *fieldWalker) fail(path string, n *yaml.Node, format string, args ...any) {
	if path == "" {
		path = "the document"
	}
	w.errs = append(w.errs, fmt.Errorf("%s (line %d): %s", path, n.Line, fmt.Sprintf(format, args...)))
}

func (w *fieldWalker) walk(n *yaml.Node, t reflect.Type, path string) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			w.walk(c, t, path)
		}
		return
	case yaml.AliasNode:
		if k := (walked{n.Alias, t}); !w.seen[k] {
			w.seen[k] = true
			w.walk(n.Alias, t, path)
		}
		return
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return // the field's zero value, its default
	}
	// A pointer field tells an unset value from a zero one; any other field
	// takes its zero value as unset, hence its default.
	zeroAllowed := t.Kind() == reflect.Pointer
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		w.leaf(n, t, path)
		return
	}
	switch {
	case t == durationType:
		if n.Kind == yaml.ScalarNode && (n.Tag == "!!int" || n.Tag == "!!float") {
			w.fail(path, n, "%s is not a duration: give it a unit, e.g. %ss, %sms or %sm", n.Value, n.Value, n.Value, n.Value)
			return
		}
		var d time.Duration
		if n.Decode(&d) == nil && d == 0 && !zeroAllowed {
			w.fail(path, n, "%s would be taken as unset, so the default would apply, not a zero duration: give a positive duration, or leave the setting out for its default", n.Value)
			return
		}
		w.leaf(n, t, path)
	case t.Kind() == reflect.Struct && n.Kind == yaml.MappingNode:
		w.mapping(n, t, path)
	case t.Kind() == reflect.Slice && n.Kind == yaml.SequenceNode:
		for i, c := range n.Content {
			w.walk(c, t.Elem(), fmt.Sprintf("%s[%d]", path, i))
		}
	case t.Kind() == reflect.Map && n.Kind == yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			w.walk(n.Content[i+1], t.Elem(), join(path, n.Content[i].Value))
		}
	case t.Kind() == reflect.Interface:
	default:
		w.leaf(n, t, path)
	}
}

// mapping walks the keys of a struct's mapping; a merge key (<<) brings in
// the mappings it names as if written here.
func (w *fieldWalker) mapping(n *yaml.Node, t reflect.Type, path string) {
	fields := yamlFields(t)
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if first, ok := seen[k.Value]; ok && k.Tag != "!!merge" {
			w.fail(join(path, k.Value), k, "set twice (first at line %d): remove one", first.Line)
			continue
		}
		seen[k.Value] = k
		if k.Tag == "!!merge" {
			if v.Kind == yaml.SequenceNode {
				for _, m := range v.Content {
					w.walk(m, t, path)
				}
			} else {
				w.walk(v, t, path)
			}
			continue
		}
		f, ok := fields[k.Value]
		if !ok {
			w.fail(join(path, k.Value), k, "not a known setting%s", knownHint(path, fields))
			continue
		}
		if tag := v.ShortTag(); f.Tag.Get("zero") == "unset" && v.Kind == yaml.ScalarNode && (tag == "!!int" || tag == "!!float") {
			if n, err := strconv.ParseFloat(v.Value, 64); err == nil && n == 0 {
				w.fail(join(path, k.Value), v, "%s would be taken as unset, so the default would apply, not zero: give a positive number, or leave the setting out for its default", v.Value)
				continue
			}
		}
		w.walk(v, f.Type, join(path, k.Value))
	}
}

// leaf checks a value by decoding it alone into its field's type, with
// yaml's own rules; a fraction for a whole number, which yaml truncates,
// is refused.
func (w *fieldWalker) leaf(n *yaml.Node, t reflect.Type, path string) {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if n.Kind == yaml.ScalarNode && n.Tag == "!!float" {
			if f, err := strconv.ParseFloat(n.Value, 64); err == nil && f != math.Trunc(f) {
				w.fail(path, n, "%s is not a whole number", n.Value)
				return
			}
		}
	}
	if err := n.Decode(reflect.New(t).Interface()); err != nil {
		msg := err.Error()
		var te *yaml.TypeError
		if errors.As(err, &te) && len(te.Errors) > 0 {
			msg = te.Errors[0]
			if _, rest, ok := strings.Cut(msg, ": "); ok && strings.HasPrefix(msg, "line ") {
				msg = rest
			}
		}
		w.fail(path, n, "%s", msg)
	}
}

// yamlFields are the fields of struct t by their yaml key. A field tagged
// zero:"unset" takes its zero value as unset (its default applies), so a
// zero written there is refused.
func yamlFields(t reflect.Type) map[string]reflect.StructField {
	m := map[string]reflect.StructField{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = strings.ToLower(f.Name)
		}
		m[name] = f
	}
	return m
}

// knownHint lists the settings a mapping may hold, when they are few
// enough to read in one line.
func knownHint(path string, fields map[string]reflect.StructField) string {
	of := " of " + cmp.Or(path, "the config")
	if len(fields) > 12 {
		return of + " (see the README's table of fields)"
	}
	return of + ": want one of " + strings.Join(slices.Sorted(maps.Keys(fields)), ", ")
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
