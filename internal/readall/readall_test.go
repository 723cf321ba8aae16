package readall

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestAppend(t *testing.T) {
	t.Parallel()
	body := strings.Repeat("0123456789", 100)
	got, err := Append([]byte("head:"), iotest.OneByteReader(strings.NewReader(body)))
	if err != nil || string(got) != "head:"+body {
		t.Fatalf("Append = %q, %v; want head: then the body", got, err)
	}

	// A buffer with room for the whole body is filled in place.
	buf := make([]byte, 0, len(body)+1)
	got, err = Append(buf, strings.NewReader(body))
	if err != nil || string(got) != body || &got[0] != &buf[:1][0] {
		t.Fatalf("Append into a large enough buffer = %d bytes, %v; want the body in place", len(got), err)
	}

	boom := errors.New("boom")
	got, err = Append(nil, io.MultiReader(strings.NewReader("part"), iotest.ErrReader(boom)))
	if !errors.Is(err, boom) || string(got) != "part" {
		t.Fatalf("Append over a failing reader = %q, %v; want part and boom", got, err)
	}
}

func TestIdentityEncoding(t *testing.T) {
	for _, tc := range []struct {
		values []string
		want   bool
	}{
		{nil, true}, {[]string{""}, true}, {[]string{"identity"}, true}, {[]string{"Identity , identity"}, true},
		{[]string{"gzip"}, false}, {[]string{"identity, gzip"}, false}, {[]string{"identity", "br"}, false}, {[]string{"x-identity"}, false},
	} {
		if got := IdentityEncoding(tc.values); got != tc.want {
			t.Errorf("IdentityEncoding(%q) = %v", tc.values, got)
		}
	}
}
