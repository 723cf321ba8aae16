package auth

import (
	"errors"
	"strings"
	"testing"
)

func TestBearerToken(t *testing.T) {
	t.Parallel()
	tests := []struct {
		header string
		want   string
		reason Reason // "" means accepted
	}{
		{"Bearer abc.def.ghi", "abc.def.ghi", ""},
		{"bearer abc.def.ghi", "abc.def.ghi", ""},
		{"BEARER abc.def.ghi", "abc.def.ghi", ""},
		{"Bearer   abc.def.ghi  ", "abc.def.ghi", ""},
		{"Bearer a-b_c~d+e/f==", "a-b_c~d+e/f==", ""},
		{"", "", ReasonMissingToken},
		{" \t ", "", ReasonMissingToken},
		{"Bearer", "", ReasonMalformed},
		{"Bearer ", "", ReasonMalformed},
		{"Bearerabc.def.ghi", "", ReasonMalformed},
		{"Bearer\tabc.def.ghi", "", ReasonMalformed},
		{"Basic dXNlcjpwYXNz", "", ReasonMalformed},
		{"Token abc", "", ReasonMalformed},
		{"Bearer abc def", "", ReasonMalformed},
		{"Bearer abc,def", "", ReasonDuplicate},
		{"Bearer abc.def.ghi, Basic YWRtaW46YWRtaW4=", "", ReasonDuplicate},
		{"Basic YWRtaW46YWRtaW4=, Bearer abc.def.ghi", "", ReasonDuplicate},
		{"Bearer abc.def.ghi,", "", ReasonDuplicate},
		{"Bearer " + strings.Repeat("a", maxTokenBytes), strings.Repeat("a", maxTokenBytes), ""},
		{"Bearer " + strings.Repeat("a", maxTokenBytes+1), "", ReasonMalformedToken},
		{"Bearer ===", "", ReasonMalformed},
		{"Bearer ab=c", "", ReasonMalformed},
		{"Bearer abc\"", "", ReasonMalformed},
		{"Bearer ünïcode", "", ReasonMalformed},
	}
	for _, tt := range tests {
		got, err := bearerToken(tt.header)
		if tt.reason == "" {
			if err != nil || got != tt.want {
				t.Errorf("bearerToken(%q) = %q, %v; want %q", tt.header, got, err, tt.want)
			}
			continue
		}
		if err == nil || err.Reason != tt.reason {
			t.Errorf("bearerToken(%q) = %q, %v; want reason %s", tt.header, got, err, tt.reason)
		}
	}
}

// TestB64TokenBytes holds the byte table to RFC 6750's b64token grammar for
// every byte, inside a token and as its only character.
func TestB64TokenBytes(t *testing.T) {
	t.Parallel()
	for c := range 256 {
		b := byte(c)
		want := 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' ||
			b == '-' || b == '.' || b == '_' || b == '~' || b == '+' || b == '/'
		if got := isB64Token("ab" + string([]byte{b}) + "cd"); got != want {
			t.Errorf("byte %#02x inside a token: accepted %v, want %v", b, got, want)
		}
		if got := isB64Token(string([]byte{b})); got != want {
			t.Errorf("byte %#02x alone: accepted %v, want %v", b, got, want)
		}
	}
}

func TestCredential(t *testing.T) {
	t.Parallel()
	for _, values := range [][]string{nil, {}, {""}, {"Bearer abc"}} {
		got, err := Credential(values)
		want := ""
		if len(values) == 1 {
			want = values[0]
		}
		if err != nil || got != want {
			t.Errorf("Credential(%q) = %q, %v; want %q", values, got, err, want)
		}
	}
	for _, values := range [][]string{{"Bearer abc", "Basic YWRtaW46YWRtaW4="}, {"Bearer abc", "Bearer abc"}, {"", ""}} {
		got, err := Credential(values)
		var authErr *Error
		if !errors.As(err, &authErr) || authErr.Reason != ReasonDuplicate || got != "" {
			t.Errorf("Credential(%q) = %q, %v; want reason %s", values, got, err, ReasonDuplicate)
		}
	}
}
