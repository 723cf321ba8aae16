package proxy

import (
	"strings"
	"testing"
)

// TestNewGatewayRefusesUnservablePaths: a path ServeMux cannot take is an
// error from NewGateway, not a panic, for a config that skipped validation.
func TestNewGatewayRefusesUnservablePaths(t *testing.T) {
	for _, p := range []string{"/{x", "/a/{$}/b", "/a/../b"} {
		_, err := NewGateway([]*Agent{{cfg: AgentConfig{Name: "a", Path: p}}})
		if err == nil || !strings.Contains(err.Error(), "cannot serve the agents' paths") {
			t.Errorf("path %q: %v", p, err)
		}
	}
	for _, p := range []string{"/{x", "/a/{$}/b", "/{id}", "/a/../b", "/a b", "/a?b", "/a#b", "a", "/a\x00"} {
		if checkPath(p) == nil {
			t.Errorf("path %q passes validation", p)
		}
	}
	for _, p := range []string{"/", "/agents", "/agents/", "/a/b-c_d.e~f", "/%7Bx"} {
		if err := checkPath(p); err != nil {
			t.Errorf("path %q refused: %v", p, err)
		}
	}
}
