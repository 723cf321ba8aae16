package main

import (
	"reflect"
	"testing"
	"time"

	"github.com/a2agate/gateway/auth"
	"github.com/a2agate/gateway/proxy"
)

// TestZeroIsUnsetTagged holds the config walker's zero rule to the
// defaults: every number or duration that setDefaults fills in when it is
// zero must refuse a written zero (a duration by its type, a number by its
// zero:"unset" tag), and every number tagged so must have such a default.
// A new setting with a default that forgets the tag fails here.
func TestZeroIsUnsetTagged(t *testing.T) {
	var before Config
	before.Agents = []proxy.AgentConfig{{Auth: &auth.Config{}}}
	after := before
	after.Agents = []proxy.AgentConfig{{Auth: &auth.Config{}}}
	after.setDefaults()
	checked := 0
	var walk func(path string, b, a reflect.Value, tag reflect.StructTag)
	walk = func(path string, b, a reflect.Value, tag reflect.StructTag) {
		switch b.Kind() {
		case reflect.Struct:
			for i := range b.NumField() {
				f := b.Type().Field(i)
				if f.IsExported() {
					walk(path+"."+f.Name, b.Field(i), a.Field(i), f.Tag)
				}
			}
		case reflect.Slice:
			for i := range min(b.Len(), a.Len()) {
				walk(path, b.Index(i), a.Index(i), "")
			}
		case reflect.Pointer:
			if !b.IsNil() && !a.IsNil() {
				walk(path, b.Elem(), a.Elem(), "")
			}
		case reflect.Int, reflect.Int64, reflect.Int32, reflect.Float64:
			if b.Type() == reflect.TypeFor[time.Duration]() {
				return // refused by type: configcheck's durationType rule
			}
			defaulted := b.IsZero() && !a.IsZero()
			tagged := tag.Get("zero") == "unset"
			checked++
			switch {
			case defaulted && !tagged:
				t.Errorf("%s: zero becomes %v by default, but a written 0 is not refused: tag it zero:\"unset\"", path, a)
			case tagged && !defaulted:
				t.Errorf("%s: tagged zero:\"unset\", but zero stays %v: a written 0 would be refused though it is a value", path, a)
			}
		}
	}
	walk("Config", reflect.ValueOf(before), reflect.ValueOf(after), "")
	if checked < 10 {
		t.Fatalf("checked %d numbers; the walk missed the config's fields", checked)
	}
}
