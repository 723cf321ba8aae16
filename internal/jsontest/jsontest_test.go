package jsontest

import "testing"

func TestEqual(t *testing.T) {
	cases := []struct {
		a, b string
		want bool
	}{
		{`{"a":1,"b":[true,null]}`, ` { "b" : [ true , null ] , "a" : 1 } `, true},
		{`1.5e10`, `15000000000`, true},
		{`{"a":1}`, `{"a":2}`, false},
		{`{"a":1}`, `{"a":1,"b":1}`, false},
		{`[1,2]`, `[2,1]`, false},
		{`{"a":1}`, `{"a":1`, false},
		{`not json`, `not json`, false},
	}
	for _, c := range cases {
		if got := Equal([]byte(c.a), []byte(c.b)); got != c.want {
			t.Errorf("Equal(%s, %s) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

func TestCompact(t *testing.T) {
	if got := Compact([]byte(" { \"a\" : [ 1 , 2 ] } ")); got != `{"a":[1,2]}` {
		t.Errorf("Compact = %s", got)
	}
	if got := Compact([]byte("{oops")); got != "{oops" {
		t.Errorf("Compact of a non-JSON text = %s, want it unchanged", got)
	}
}
