// Package staticheader is a header a config sends on every request (a
// backend's credentials, a trace collector's API key), its value read from
// a file or an environment variable, never written in the config.
package staticheader

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// Config is one static header.
type Config struct {
	// Name of the header. Required.
	Name string `yaml:"name"`
	// ValueFile is a file holding the value (one trailing newline trimmed).
	ValueFile string `yaml:"value_file"`
	// ValueEnv is an environment variable holding the value.
	ValueEnv string `yaml:"value_env"`
}

// Validate reports what is wrong with h's declaration, field naming it in
// the config ("headers[2]"). It does not read the value.
func (h Config) Validate(field string) error {
	var problems []error
	switch {
	case h.Name == "":
		problems = append(problems, fmt.Errorf("%s: name is required", field))
	case !httpguts.ValidHeaderFieldName(h.Name):
		problems = append(problems, fmt.Errorf("%s: name %q is not an HTTP header name (letters, digits and !#$%%&'*+-.^_`|~ only)", field, h.Name))
	}
	if (h.ValueFile == "") == (h.ValueEnv == "") {
		problems = append(problems, fmt.Errorf("%s (%s): set exactly one of value_file and value_env", field, h.Name))
	}
	return errors.Join(problems...)
}

// Value reads h's value from its file or environment variable. A file's
// one trailing newline ("\n" or "\r\n", as editors and echo write it) is
// not part of the value; any other control byte is refused, since net/http
// (and a gRPC exporter's metadata) would refuse the request at every call.
func (h Config) Value() (string, error) {
	var v, from string
	if h.ValueEnv != "" {
		var ok bool
		if v, ok = os.LookupEnv(h.ValueEnv); !ok {
			return "", fmt.Errorf("header %s: environment variable %s is not set", h.Name, h.ValueEnv)
		}
		from = "environment variable " + h.ValueEnv
	} else {
		b, err := os.ReadFile(h.ValueFile)
		if err != nil {
			return "", fmt.Errorf("header %s: %w", h.Name, err)
		}
		v, from = string(b), "value_file "+h.ValueFile
		if t, ok := strings.CutSuffix(v, "\n"); ok {
			v = strings.TrimSuffix(t, "\r")
		}
	}
	if !httpguts.ValidHeaderFieldValue(v) {
		return "", fmt.Errorf("header %s: the value in %s holds a control byte (a line break, NUL or DEL): an HTTP header value may not", h.Name, from)
	}
	return v, nil
}
