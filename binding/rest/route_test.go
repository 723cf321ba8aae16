package rest

import (
	"net/http"
	"strings"
	"testing"
)

// TestRoutesAreRoutes: every pattern Routes hands the mux, its wildcards
// filled, is a route of the handler (a wrong verb gets a 405, not a 404).
func TestRoutesAreRoutes(t *testing.T) {
	for _, p := range Routes() {
		path := strings.NewReplacer("{id}", "t-1", "{configId}", "c-1").Replace(p)
		if strings.ContainsAny(path, "{}") {
			t.Fatalf("%s: a wildcard this test does not fill", p)
		}
		_, err := parseRoute(http.MethodPatch, path)
		if err == nil || err.httpStatus != http.StatusMethodNotAllowed {
			t.Errorf("%s: %+v, want a route that refuses PATCH", p, err)
		}
	}
}
