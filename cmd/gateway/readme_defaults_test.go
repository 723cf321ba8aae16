package main

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a2agate/gateway/auth"
	"github.com/a2agate/gateway/proxy"
)

// TestREADMEDefaults holds the README's table of config fields to the
// defaults the code fills in: every row whose default is a plain value
// (`30s`, `250`, `a2agw:`, `false`, or several such for the keys of one
// row, `2s` / `1s` / `1s`) must be what setDefaults gives that field. A
// default changed in the code and not in the README, or the other way,
// fails here.
func TestREADMEDefaults(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var c Config
	c.Agents = []proxy.AgentConfig{{Auth: &auth.Config{}}}
	c.setDefaults()
	checked := 0
	for line := range strings.Lines(string(readme)) {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		keys, ok := literals(cells[1])
		if !ok || !strings.Contains(keys[0], ".") || strings.HasPrefix(keys[0], "a2a") || strings.HasSuffix(keys[0], "[]") {
			continue // not a setting, or a list
		}
		values, ok := literals(cells[2])
		if !ok || len(values) != len(keys) {
			continue
		}
		// `a.b.c` / `d` names a.b.c and a.b.d.
		prefix := keys[0][:strings.LastIndexByte(keys[0], '.')+1]
		for i, key := range keys {
			if i > 0 {
				key = prefix + key
			}
			v, found := fieldAt(reflect.ValueOf(c), strings.Split(strings.ReplaceAll(key, "[]", ""), "."))
			if !found {
				t.Errorf("README: %s is not a field of the config", key)
				continue
			}
			checked++
			if got := defaultText(v); !sameDefault(got, values[i]) {
				t.Errorf("README: %s defaults to %q, the code to %q", key, values[i], got)
			}
		}
	}
	t.Logf("%d defaults checked", checked)
	if checked < 40 {
		t.Fatalf("checked %d defaults; the README's table was not read", checked)
	}
}

// literals returns the backticked values of a cell made of nothing else:
// `a` or `a` / `b`.
func literals(cell string) ([]string, bool) {
	var out []string
	for part := range strings.SplitSeq(strings.TrimSpace(cell), " / ") {
		v, ok := strings.CutPrefix(part, "`")
		if v, ok = strings.CutSuffix(v, "`"); !ok || strings.Contains(v, "`") || strings.HasPrefix(v, "[") {
			return nil, false
		}
		out = append(out, v)
	}
	return out, len(out) > 0
}

// fieldAt is the field of v at the yaml path, through pointers and the
// first element of slices.
func fieldAt(v reflect.Value, path []string) (reflect.Value, bool) {
	for _, name := range path {
		for v.Kind() == reflect.Pointer || v.Kind() == reflect.Slice {
			if v.Kind() == reflect.Pointer {
				if v.IsNil() {
					return v, false
				}
				v = v.Elem()
			} else {
				if v.Len() == 0 {
					return v, false
				}
				v = v.Index(0)
			}
		}
		if v.Kind() != reflect.Struct {
			return v, false
		}
		f, ok := yamlFields(v.Type())[name]
		if !ok {
			return v, false
		}
		v = v.FieldByIndex(f.Index)
	}
	for v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	return v, true
}

func defaultText(v reflect.Value) string {
	if d, ok := v.Interface().(time.Duration); ok {
		return d.String()
	}
	return fmt.Sprint(v.Interface())
}

// sameDefault compares a default as the code prints it with the README's:
// durations by their length (5m0s is 5m), the rest as text.
func sameDefault(code, readme string) bool {
	if a, err := time.ParseDuration(code); err == nil {
		b, err := time.ParseDuration(readme)
		return err == nil && a == b
	}
	if a, err := strconv.ParseFloat(code, 64); err == nil {
		b, err := strconv.ParseFloat(readme, 64)
		return err == nil && a == b
	}
	return code == readme
}
