// Package configs holds the gateway's example configuration files. They are
// real: a test loads and validates every one, and the demo config is
// embedded in the binary so the gateway runs with no file at all.
package configs

import "embed"

// FS holds every YAML file in this directory.
//
//go:embed *.yaml
var FS embed.FS

// Demo is the name of the config the gateway's demo mode runs.
const Demo = "demo.yaml"
